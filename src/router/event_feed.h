// EventFeed: applies one worker's sequenced KV events (cache/kv_events.h) to the prefix index.
// Sequence numbers run 1, 2, 3, ... per worker channel:
//   next in line         -> applied;
//   already seen         -> ignored (a duplicate delivery);
//   1 after a later one  -> the worker restarted with an empty cache: forget it, apply;
//   a gap                -> events were lost: forget the worker and report kResync, so the caller
//                           asks the worker for a replay (KvEventChannel::Replay) or a snapshot;
//                           events after the gap are not applied until Resynced().
#pragma once

#include <cstdint>
#include <span>

#include "cache/kv_events.h"
#include "router/prefix_index.h"

namespace k3::router {

class EventFeed {
 public:
  enum class Outcome { kApplied, kDuplicate, kRestarted, kResync };

  explicit EventFeed(int worker) : worker_(worker) {}
  Outcome Apply(const cache::SequencedKvEvent& e, PrefixIndex* index);
  // Replaces the worker's entries with `events` applied in order to an empty index: a snapshot
  // (its state as stored events) or a replay of its whole channel from sequence 1. Afterwards
  // the feed continues after `sequence`.
  void Rebuild(uint64_t sequence, std::span<const cache::SequencedKvEvent> events,
               PrefixIndex* index);
  // Applies a replay of the events after the feed's state (the publisher's answer to "everything
  // after N"), then continues after `sequence`.
  void Replay(uint64_t sequence, std::span<const cache::SequencedKvEvent> events,
              PrefixIndex* index);
  // The caller rebuilt the worker's entries as of `sequence` (a replay or a snapshot).
  void Resynced(uint64_t sequence) {
    last_ = sequence;
    waiting_ = false;
  }
  uint64_t last_sequence() const { return last_; }
  bool waiting_for_resync() const { return waiting_; }

 private:
  void ApplyEvent(const cache::KvEvent& e, PrefixIndex* index) const;

  int worker_;
  uint64_t last_ = 0;
  bool waiting_ = false;
};

}  // namespace k3::router
