// Test helpers for kvwire (tests only): a set-based reference model of a worker's cache, an event
// generator that keeps one, and a KvEventHandler that records its calls and rebuilds each
// worker's state. Waits poll a condition with generous deadlines: these machines are slow.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "cache/kv_events.h"
#include "kvwire/subscriber.h"

namespace k3::kvwire::testing {

inline constexpr std::chrono::seconds kDeadline{60};

// What a router knows of one worker: the stored chained hashes and the checkpoints.
struct Model {
  std::set<cache::BlockHash> blocks;
  std::set<cache::BlockHash> checkpoints;

  void Apply(const cache::KvEvent& e) {
    using cache::KvEventKind;
    switch (e.kind) {
      case KvEventKind::kBlockStored:
        blocks.insert(e.block_hashes.begin(), e.block_hashes.end());
        break;
      case KvEventKind::kBlockRemoved:
        for (auto hash : e.block_hashes) blocks.erase(hash);
        break;
      case KvEventKind::kAllCleared:
        blocks.clear();
        checkpoints.clear();
        break;
      case KvEventKind::kCheckpointStored:
        if (!e.block_hashes.empty()) checkpoints.insert(e.block_hashes[0]);
        break;
      case KvEventKind::kCheckpointRemoved:
        if (!e.block_hashes.empty()) checkpoints.erase(e.block_hashes[0]);
        break;
    }
  }
  bool operator==(const Model&) const = default;
};

// Publishes a plausible stream: chains of stored blocks (children of stored blocks), removals of
// leaves, checkpoints on stored blocks and their removal.
class EventGenerator {
 public:
  explicit EventGenerator(uint32_t seed) : rng_(seed) {}

  cache::KvEvent Next() {
    using cache::KvEventKind;
    cache::KvEvent e;
    e.block_size = 16;
    const int roll = static_cast<int>(rng_() % 10);
    if (roll < 2 && !leaves_.empty()) {  // remove a leaf
      auto it = std::next(leaves_.begin(), long(rng_() % leaves_.size()));
      e.kind = KvEventKind::kBlockRemoved;
      e.block_hashes = {*it};
      e.position = position_[*it];
      leaves_.erase(it);
    } else if (roll < 4 && !model_.blocks.empty()) {  // checkpoint a stored block, or drop it
      auto it = std::next(model_.blocks.begin(), long(rng_() % model_.blocks.size()));
      e.kind = model_.checkpoints.count(*it) ? KvEventKind::kCheckpointRemoved
                                             : KvEventKind::kCheckpointStored;
      e.block_hashes = {*it};
      e.position = position_[*it];
    } else {  // store 1-3 blocks after a stored leaf or at the root
      e.kind = KvEventKind::kBlockStored;
      int64_t position = 0;
      if (!leaves_.empty() && rng_() % 3 != 0) {
        auto it = std::next(leaves_.begin(), long(rng_() % leaves_.size()));
        e.parent_hash = *it;
        position = position_[*it];
        leaves_.erase(it);
      }
      const int count = 1 + static_cast<int>(rng_() % 3);
      for (int block_idx = 0; block_idx < count; ++block_idx) {
        const cache::BlockHash hash = rng_() | (uint64_t{rng_()} << 32);
        position += e.block_size;
        position_[hash] = position;
        e.block_hashes.push_back(hash);
      }
      e.token_ids.assign(size_t(e.block_size) * size_t(count), 7);  // never sent
      e.position = position;
      leaves_.insert(e.block_hashes.back());
    }
    model_.Apply(e);
    return e;
  }
  // Publishes `count` events on `channel`.
  void Publish(cache::KvEventChannel& channel, int count) {
    for (int event_idx = 0; event_idx < count; ++event_idx) channel.Publish(Next());
  }
  const Model& model() const { return model_; }

 private:
  std::mt19937 rng_;
  Model model_;
  std::set<cache::BlockHash> leaves_;  // stored blocks without stored children
  std::map<cache::BlockHash, int64_t> position_;
};

struct Call {
  enum class Kind { kEvent, kResync, kRestart } kind;
  int worker = 0;
  bool snapshot = false;
  uint64_t sequence = 0;        // the event's, or the resync's last_sequence
  size_t num_events = 0;        // resync only
  uint64_t first_sequence = 0;  // resync only: its first event's
};

class RecordingHandler : public KvEventHandler {
 public:
  void OnEvent(int worker, const cache::SequencedKvEvent& e) override {
    std::function<void(int, const cache::SequencedKvEvent&)> hook;
    {
      std::lock_guard lock(mutex_);
      State& s = states_[worker];
      if (e.sequence != s.last + 1) ++out_of_order_;
      if (!e.event.token_ids.empty()) ++with_tokens_;
      s.model.Apply(e.event);
      s.last = e.sequence;
      calls_.push_back({Call::Kind::kEvent, worker, false, e.sequence});
      hook = on_event_;
    }
    changed_.notify_all();
    if (hook) hook(worker, e);
  }
  void OnResync(int worker, bool snapshot, uint64_t last_sequence,
                const std::vector<cache::SequencedKvEvent>& events) override {
    {
      std::lock_guard lock(mutex_);
      State& s = states_[worker];
      if (snapshot) s.model = Model();
      for (const auto& e : events) s.model.Apply(e.event);
      s.last = last_sequence;
      calls_.push_back({Call::Kind::kResync, worker, snapshot, last_sequence, events.size(),
                        events.empty() ? 0 : events.front().sequence});
    }
    changed_.notify_all();
  }
  void OnRestart(int worker) override {
    {
      std::lock_guard lock(mutex_);
      states_[worker] = State();
      calls_.push_back({Call::Kind::kRestart, worker});
    }
    changed_.notify_all();
  }

  // Waits until pred() (called under the lock) holds; false after kDeadline.
  bool WaitFor(const std::function<bool()>& pred) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kDeadline, pred);
  }
  // Called after each OnEvent, on the subscriber thread, without the lock.
  void SetEventHook(std::function<void(int, const cache::SequencedKvEvent&)> hook) {
    std::lock_guard lock(mutex_);
    on_event_ = std::move(hook);
  }

  // Unlocked accessors: call them inside WaitFor predicates or when the subscriber is quiet.
  const std::vector<Call>& calls() const { return calls_; }
  const Model& model(int worker) { return states_[worker].model; }
  uint64_t last(int worker) { return states_[worker].last; }
  int out_of_order() const { return out_of_order_; }
  int with_tokens() const { return with_tokens_; }
  // Locked snapshot of the calls.
  std::vector<Call> CopyCalls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  struct State {
    Model model;
    uint64_t last = 0;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, State> states_;
  std::vector<Call> calls_;
  int out_of_order_ = 0;
  int with_tokens_ = 0;
  std::function<void(int, const cache::SequencedKvEvent&)> on_event_;
};

// Polls `pred` every few milliseconds until it holds; false after kDeadline.
inline bool PollUntil(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace k3::kvwire::testing
