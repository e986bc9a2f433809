#include "router/router.h"

#include <gtest/gtest.h>

#include "router/event_feed.h"
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

namespace k3::router {
namespace {

cache::SequencedKvEvent Event(uint64_t seq, cache::KvEventKind kind, std::vector<BlockHash> h) {
  cache::SequencedKvEvent e;
  e.sequence = seq;
  e.event.kind = kind;
  e.event.block_hashes = std::move(h);
  return e;
}

// Events from a real KvEventChannel, then lost events, a duplicate, a replay and a restart.
TEST(EventFeed, SequenceGapsRestartsAndEvictions) {
  using K = cache::KvEventKind;
  using O = EventFeed::Outcome;
  PrefixIndex index(/*checkpoints_required=*/true);
  EventFeed feed(5);
  cache::KvEventChannel channel;
  channel.Subscribe([&](const cache::SequencedKvEvent& e) { feed.Apply(e, &index); });
  channel.Publish(Event(0, K::kBlockStored, {1, 2, 3}).event);
  channel.Publish(Event(0, K::kCheckpointStored, {3}).event);
  std::vector<int64_t> usable;
  index.Match(std::vector<BlockHash>{1, 2, 3}, &usable);
  EXPECT_EQ(usable[5], 3);
  channel.Publish(Event(0, K::kBlockRemoved, {3}).event);  // eviction takes the checkpoint along
  index.Match(std::vector<BlockHash>{1, 2, 3}, &usable);
  EXPECT_EQ(usable[5], 0);
  EXPECT_EQ(feed.last_sequence(), 3u);

  EXPECT_EQ(feed.Apply(Event(3, K::kBlockStored, {9}), &index), O::kDuplicate);
  EXPECT_EQ(feed.Apply(Event(6, K::kBlockStored, {9}), &index), O::kResync);  // 4, 5 lost
  EXPECT_EQ(index.blocks_of(5), 0);  // forgotten until resynchronised
  EXPECT_EQ(feed.Apply(Event(7, K::kBlockStored, {9}), &index), O::kResync);
  // The caller replays from the channel after what it applied.
  auto replay = channel.Replay(0);
  ASSERT_TRUE(replay.has_value());
  EventFeed fresh(5);
  for (const auto& e : *replay) EXPECT_EQ(fresh.Apply(e, &index), O::kApplied);
  feed.Resynced(fresh.last_sequence());
  EXPECT_EQ(index.blocks_of(5), 2);  // blocks 1, 2 (3 was evicted)
  EXPECT_EQ(feed.Apply(Event(4, K::kBlockStored, {4}), &index), O::kApplied);

  EXPECT_EQ(feed.Apply(Event(1, K::kBlockStored, {7}), &index), O::kRestarted);
  EXPECT_EQ(index.blocks_of(5), 1);  // only what the restarted worker reported
  EXPECT_EQ(feed.Apply(Event(2, K::kAllCleared, {}), &index), O::kApplied);
  EXPECT_EQ(index.blocks_of(5), 0);
}

// Resyncs as the router applies them: a snapshot replaces the worker's entries, a replay of the
// events after the feed's state extends them; both continue after the given sequence.
TEST(EventFeed, SnapshotsReplaceAndReplaysExtend) {
  using K = cache::KvEventKind;
  using O = EventFeed::Outcome;
  PrefixIndex index(/*checkpoints_required=*/false);
  EventFeed feed(2);
  EXPECT_EQ(feed.Apply(Event(1, K::kBlockStored, {1, 2}), &index), O::kApplied);
  std::vector<cache::SequencedKvEvent> snapshot = {Event(0, K::kBlockStored, {10}),
                                                   Event(0, K::kBlockStored, {11})};
  feed.Rebuild(40, snapshot, &index);
  EXPECT_EQ(index.blocks_of(2), 2);  // 10, 11: blocks 1, 2 are gone
  std::vector<int64_t> usable;
  index.Match(std::vector<BlockHash>{1, 2}, &usable);
  EXPECT_EQ(usable[2], 0);
  EXPECT_EQ(feed.last_sequence(), 40u);
  EXPECT_EQ(feed.Apply(Event(40, K::kBlockStored, {12}), &index), O::kDuplicate);

  std::vector<cache::SequencedKvEvent> replay = {Event(41, K::kBlockStored, {12}),
                                                 Event(42, K::kBlockRemoved, {10})};
  feed.Replay(42, replay, &index);
  EXPECT_EQ(index.blocks_of(2), 2);  // 11, 12
  EXPECT_EQ(feed.Apply(Event(43, K::kBlockStored, {13}), &index), O::kApplied);
  EXPECT_EQ(index.blocks_of(2), 3);
}

}  // namespace
}  // namespace k3::router
