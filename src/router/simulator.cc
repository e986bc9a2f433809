#include "router/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <fstream>
#include <list>
#include <nlohmann/json.hpp>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace k3::router {
namespace {

// An LRU set of blocks. Touch marks a block used now; Insert may evict the least recently used.
class LruBlocks {
 public:
  explicit LruBlocks(int64_t capacity) : capacity_(capacity) {}
  bool Has(BlockHash h) const { return where_.count(h) != 0; }
  void Touch(BlockHash h) { order_.splice(order_.begin(), order_, where_.at(h)); }
  // Returns the evicted block, if any.
  bool Insert(BlockHash h, BlockHash* evicted) {
    order_.push_front(h);
    where_[h] = order_.begin();
    if (static_cast<int64_t>(order_.size()) <= capacity_) return false;
    *evicted = order_.back();
    where_.erase(order_.back());
    order_.pop_back();
    return true;
  }

 private:
  int64_t capacity_;
  std::list<BlockHash> order_;
  std::unordered_map<BlockHash, std::list<BlockHash>::iterator> where_;
};

// Leading blocks present, touching them; then the missing ones inserted (evictions reported).
template <typename OnStore, typename OnEvict>
int64_t UseBlocks(LruBlocks& cache, const std::vector<BlockHash>& blocks, OnStore on_store,
                  OnEvict on_evict) {
  int64_t hit = 0;
  while (hit < static_cast<int64_t>(blocks.size()) && cache.Has(blocks[size_t(hit)])) ++hit;
  // Touch from the last to the first, so a prefix stays more recent than its extensions.
  for (int64_t i = static_cast<int64_t>(blocks.size()) - 1; i >= 0; --i) {
    const BlockHash h = blocks[size_t(i)];
    BlockHash evicted = 0;
    if (cache.Has(h)) {
      cache.Touch(h);
    } else {
      on_store(h);
      if (cache.Insert(h, &evicted)) on_evict(evicted);
    }
  }
  return hit;
}

struct SimWorker {
  explicit SimWorker(int64_t capacity) : cache(capacity) {}
  LruBlocks cache;
  double prefill_free_ms = 0;
  // (prefill end, uncached tokens, blocks) of requests not yet prefilled; (decode end, blocks).
  std::deque<std::tuple<double, int64_t, int64_t>> prefilling;
  std::priority_queue<std::pair<double, int64_t>, std::vector<std::pair<double, int64_t>>,
                      std::greater<>>
      decoding;
  double work = 0;

  // Drops what finished by `now` and returns the load the router sees.
  WorkerLoad LoadAt(double now) {
    while (!prefilling.empty() && std::get<0>(prefilling.front()) <= now) prefilling.pop_front();
    while (!decoding.empty() && decoding.top().first <= now) {
      active_blocks -= decoding.top().second;
      decoding.pop();
    }
    WorkerLoad load;
    for (const auto& [end, tokens, blocks] : prefilling) load.prefill_tokens += tokens;
    // `decoding` holds every request until its last token, prefilling ones included.
    load.decode_seqs = static_cast<int64_t>(decoding.size() - prefilling.size());
    load.active_blocks = active_blocks;
    return load;
  }
  void Admit(double prefill_end, double decode_end, int64_t uncached, int64_t blocks) {
    prefilling.emplace_back(prefill_end, uncached, blocks);
    decoding.emplace(decode_end, blocks);
    active_blocks += blocks;
  }
  int64_t active_blocks = 0;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(std::ceil(p * double(v.size())));
  return v[std::clamp<size_t>(k, 1, v.size()) - 1];
}

}  // namespace

base::Result<std::vector<TraceRequest>> LoadMooncakeTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return base::NotFound("cannot open trace " + path);
  std::vector<TraceRequest> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("hash_ids") || !j["hash_ids"].is_array()) {
      return base::InvalidArgument(path + ":" + std::to_string(out.size() + 1) +
                                   ": not a Mooncake trace line");
    }
    if (!j.value("timestamp", nlohmann::json(0)).is_number() ||
        !j.value("input_length", nlohmann::json(0)).is_number_integer() ||
        !j.value("output_length", nlohmann::json(0)).is_number_integer()) {
      return base::InvalidArgument(path + ":" + std::to_string(out.size() + 1) +
                                   ": timestamp, input_length and output_length must be numbers");
    }
    TraceRequest r;
    r.arrival_ms = j.value("timestamp", 0.0);
    r.input_tokens = j.value("input_length", int64_t{0});
    r.output_tokens = j.value("output_length", int64_t{0});
    for (const auto& h : j["hash_ids"]) {
      if (!h.is_number_unsigned()) {
        return base::InvalidArgument(path + ":" + std::to_string(out.size() + 1) +
                                     ": hash_ids must be non-negative integers");
      }
      r.blocks.push_back(h.get<uint64_t>());
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const TraceRequest& a, const TraceRequest& b) {
    return a.arrival_ms < b.arrival_ms;
  });
  return out;
}

size_t UniqueBlocks(const std::vector<TraceRequest>& trace) {
  std::unordered_set<BlockHash> seen;
  for (const TraceRequest& r : trace) seen.insert(r.blocks.begin(), r.blocks.end());
  return seen.size();
}

SimResult Simulate(const std::vector<TraceRequest>& trace, const SimConfig& c) {
  Router router(c.workers, c.block_tokens, c.policy, c.weights, /*checkpoints_required=*/false);
  std::vector<SimWorker> workers;
  for (int w = 0; w < c.workers; ++w) workers.emplace_back(c.cache_blocks);
  std::vector<double> ttft, decision_us;
  int64_t hit_blocks = 0, total_blocks = 0;
  for (const TraceRequest& r : trace) {
    const double now = r.arrival_ms * c.time_scale;
    for (int w = 0; w < c.workers; ++w) router.SetLoad(w, workers[size_t(w)].LoadAt(now));
    RouteRequest req;
    req.chain = r.blocks;
    req.prompt_tokens = r.input_tokens;
    // Policy session: Mooncake traces carry no session id; the second block (the first after a
    // shared system prompt) stands for the conversation.
    req.session = r.blocks.size() > 1 ? std::to_string(r.blocks[1]) : std::string();
    const auto t0 = std::chrono::steady_clock::now();
    const Decision d = *router.Route(req);
    decision_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    SimWorker& worker = workers[size_t(d.worker)];
    const int64_t hit = UseBlocks(
        worker.cache, r.blocks,
        [&](BlockHash h) { router.index().Store(d.worker, std::span<const BlockHash>(&h, 1)); },
        [&](BlockHash h) { router.index().Remove(d.worker, std::span<const BlockHash>(&h, 1)); });
    hit_blocks += hit;
    total_blocks += static_cast<int64_t>(r.blocks.size());
    const int64_t cached = std::min(hit * c.block_tokens, r.input_tokens);
    const int64_t uncached = r.input_tokens - cached;
    const WorkerLoad load = worker.LoadAt(now);
    const double rate =
        c.prefill_tokens_per_s / (1.0 + c.decode_slowdown * double(load.decode_seqs));
    const double start = std::max(now, worker.prefill_free_ms);
    const double done = start + 1000.0 * double(uncached) / rate;
    worker.prefill_free_ms = done;
    const int64_t blocks = static_cast<int64_t>(r.blocks.size());
    worker.Admit(done, done + c.tpot_ms * double(r.output_tokens), uncached, blocks);
    worker.work += double(uncached + r.output_tokens);
    ttft.push_back(done - now);
  }
  SimResult s;
  s.policy = PolicyName(c.policy);
  s.requests = trace.size();
  s.hit_rate = total_blocks ? double(hit_blocks) / double(total_blocks) : 0;
  double max_work = 0, sum_work = 0;
  for (const SimWorker& w : workers) {
    max_work = std::max(max_work, w.work);
    sum_work += w.work;
  }
  s.imbalance = sum_work > 0 ? max_work / (sum_work / c.workers) : 0;
  double sum = 0;
  for (double t : ttft) sum += t;
  s.mean_ttft_ms = ttft.empty() ? 0 : sum / double(ttft.size());
  s.p90_ttft_ms = Percentile(ttft, 0.90);
  s.decision_p50_us = Percentile(decision_us, 0.50);
  s.decision_p99_us = Percentile(decision_us, 0.99);
  return s;
}

double SharedCacheHitRate(const std::vector<TraceRequest>& trace, int64_t total_blocks) {
  LruBlocks cache(total_blocks);
  int64_t hit = 0, all = 0;
  for (const TraceRequest& r : trace) {
    hit += UseBlocks(
        cache, r.blocks, [](BlockHash) {}, [](BlockHash) {});
    all += static_cast<int64_t>(r.blocks.size());
  }
  return all ? double(hit) / double(all) : 0;
}

}  // namespace k3::router
