#include "router/router.h"

#include <gtest/gtest.h>

#include "router/simulator.h"

namespace k3::router {
namespace {

TEST(PrefixIndex, MatchIsTheDeepestContiguousPrefixPerWorker) {
  PrefixIndex index(/*checkpoints_required=*/false);
  const std::vector<BlockHash> chain = {11, 12, 13, 14};
  index.Store(0, std::span(chain).first(3));
  index.Store(1, std::span(chain).first(2));
  index.Store(2, std::span(chain).subspan(1, 3));  // not from the start: no usable prefix
  std::vector<int64_t> usable;
  index.Match(chain, &usable);
  EXPECT_EQ(usable[0], 3);
  EXPECT_EQ(usable[1], 2);
  EXPECT_EQ(usable[2], 0);
  EXPECT_EQ(usable[3], 0);
  EXPECT_EQ(index.blocks_of(0), 3);

  const BlockHash middle = 12;
  index.Remove(0, std::span(&middle, 1));  // a hole cuts the match there
  index.Match(chain, &usable);
  EXPECT_EQ(usable[0], 1);
  index.ClearWorker(1);
  index.Match(chain, &usable);
  EXPECT_EQ(usable[1], 0);
  EXPECT_EQ(index.blocks_of(1), 0);
}

TEST(PrefixIndex, HybridModelsReuseOnlyUpToACheckpoint) {
  PrefixIndex index(/*checkpoints_required=*/true);
  const std::vector<BlockHash> chain = {1, 2, 3, 4};
  index.Store(0, chain);
  index.Store(1, chain);
  index.StoreCheckpoint(0, 2);  // after block 2 (index 1)
  index.StoreCheckpoint(1, 4);
  index.StoreCheckpoint(1, 9);  // a block it does not hold: ignored
  std::vector<int64_t> usable;
  index.Match(chain, &usable);
  EXPECT_EQ(usable[0], 2);
  EXPECT_EQ(usable[1], 4);
  index.RemoveCheckpoint(1, 4);
  index.Match(chain, &usable);
  EXPECT_EQ(usable[1], 0);
  const BlockHash first = 1;
  index.Remove(0, std::span(&first, 1));  // the prefix is gone: the checkpoint is useless
  index.Match(chain, &usable);
  EXPECT_EQ(usable[0], 0);
}

TEST(Cost, KvCostCountsQueuedNewCachedAndDecodes) {
  CostWeights w;
  w.decode = 10;
  WorkerLoad load{.prefill_tokens = 800, .decode_seqs = 3, .active_blocks = 0};
  EXPECT_DOUBLE_EQ(KvCost(w, 500, 128, load), 800 + 500 - 128 + 30);
  EXPECT_NE(ExplainKvCost(w, 500, 128, load).find("cached 128"), std::string::npos);
  WorkerLoad dyn{.prefill_tokens = 1024, .decode_seqs = 0, .active_blocks = 7};
  EXPECT_DOUBLE_EQ(DynamoCost(w, 10, 4, 512, dyn), 1.0 * (2 + 6) + 7);
}

TEST(Router, KvPrefersTheCacheUnlessItsWorkerIsBusier) {
  Router r(3, 16, Policy::kKv, CostWeights{}, false);
  const std::vector<BlockHash> chain = {1, 2, 3, 4, 5, 6, 7, 8};
  r.index().Store(2, chain);
  RouteRequest req{chain, 8 * 16, ""};
  auto d = r.Route(req);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->worker, 2);
  EXPECT_EQ(d->cached_tokens, 128);
  EXPECT_NE(d->why.find("cost"), std::string::npos);
  r.SetLoad(2, WorkerLoad{.prefill_tokens = 10000, .decode_seqs = 0, .active_blocks = 0});
  d = r.Route(req);
  EXPECT_EQ(d->worker, 0);  // 10,000 queued tokens outweigh 128 cached ones
  r.SetHealthy(0, false);
  r.SetHealthy(1, false);
  EXPECT_EQ(r.Route(req)->worker, 2);
  r.SetHealthy(2, false);
  EXPECT_FALSE(r.Route(req).ok());
}

TEST(Router, RoundRobinSkipsUnhealthyAndSessionsStick) {
  Router rr(3, 16, Policy::kRoundRobin, CostWeights{}, false);
  rr.SetHealthy(1, false);
  RouteRequest req{{}, 10, ""};
  EXPECT_EQ(rr.Route(req)->worker, 0);
  EXPECT_EQ(rr.Route(req)->worker, 2);
  EXPECT_EQ(rr.Route(req)->worker, 0);

  Router s(3, 16, Policy::kSession, CostWeights{}, false);
  s.SetLoad(0, WorkerLoad{.prefill_tokens = 50, .decode_seqs = 0, .active_blocks = 0});
  RouteRequest a{{}, 10, "alice"};
  const int first = s.Route(a)->worker;
  s.SetLoad(first, WorkerLoad{.prefill_tokens = 99999, .decode_seqs = 0, .active_blocks = 0});
  EXPECT_EQ(s.Route(a)->worker, first);  // sticky despite load
  s.SetHealthy(first, false);
  EXPECT_NE(s.Route(a)->worker, first);  // moved off a dead worker
  EXPECT_FALSE(ParsePolicy("nope").ok());
  EXPECT_EQ(*ParsePolicy("least-loaded"), Policy::kLeastLoaded);
}

// A small multi-turn trace: 37 conversations of growing prefixes, interleaved (37: round-robin
// over 4 workers does not land a conversation on the same worker twice in a row by accident).
std::vector<TraceRequest> Conversations() {
  std::vector<TraceRequest> trace;
  for (int turn = 0; turn < 6; ++turn) {
    for (int conv = 0; conv < 37; ++conv) {
      TraceRequest r;
      r.arrival_ms = (turn * 37 + conv) * 50.0;
      for (int b = 0; b <= 2 * turn + 1; ++b) r.blocks.push_back(uint64_t(conv) * 1000 + b);
      r.input_tokens = static_cast<int64_t>(r.blocks.size()) * 512;
      r.output_tokens = 100;
      trace.push_back(r);
    }
  }
  return trace;
}

TEST(Simulator, KvRoutingKeepsConversationsWarm) {
  const auto trace = Conversations();
  SimConfig c;
  c.workers = 4;
  c.cache_blocks = 120;
  c.policy = Policy::kKv;
  const SimResult kv = Simulate(trace, c);
  c.policy = Policy::kRoundRobin;
  const SimResult rr = Simulate(trace, c);
  const double shared = SharedCacheHitRate(trace, c.workers * c.cache_blocks);
  EXPECT_GT(kv.hit_rate, 2 * rr.hit_rate) << kv.hit_rate << " vs " << rr.hit_rate;
  EXPECT_LE(kv.hit_rate, shared + 1e-9);
  EXPECT_LT(kv.mean_ttft_ms, rr.mean_ttft_ms);
  EXPECT_LT(kv.imbalance, 1.5);
  EXPECT_EQ(kv.requests, trace.size());
}

}  // namespace
}  // namespace k3::router
