#include "router/event_feed.h"

namespace k3::router {

EventFeed::Outcome EventFeed::Apply(const cache::SequencedKvEvent& e, PrefixIndex* index) {
  if (e.sequence == 1 && last_ >= 1) {  // a fresh channel: the worker restarted
    index->ClearWorker(worker_);
    waiting_ = false;
    last_ = 1;
    ApplyEvent(e.event, index);
    return Outcome::kRestarted;
  }
  if (waiting_) return Outcome::kResync;
  if (e.sequence <= last_) return Outcome::kDuplicate;
  if (e.sequence != last_ + 1) {
    index->ClearWorker(worker_);
    waiting_ = true;
    return Outcome::kResync;
  }
  last_ = e.sequence;
  ApplyEvent(e.event, index);
  return Outcome::kApplied;
}

void EventFeed::Rebuild(uint64_t sequence, std::span<const cache::SequencedKvEvent> events,
                        PrefixIndex* index) {
  index->ClearWorker(worker_);
  for (const cache::SequencedKvEvent& e : events) ApplyEvent(e.event, index);
  Resynced(sequence);
}

void EventFeed::Replay(uint64_t sequence, std::span<const cache::SequencedKvEvent> events,
                       PrefixIndex* index) {
  for (const cache::SequencedKvEvent& e : events) ApplyEvent(e.event, index);
  Resynced(sequence);
}

void EventFeed::ApplyEvent(const cache::KvEvent& e, PrefixIndex* index) const {
  switch (e.kind) {
    case cache::KvEventKind::kBlockStored:
      index->Store(worker_, e.block_hashes);
      break;
    case cache::KvEventKind::kBlockRemoved:
      index->Remove(worker_, e.block_hashes);
      break;
    case cache::KvEventKind::kAllCleared:
      index->ClearWorker(worker_);
      break;
    case cache::KvEventKind::kCheckpointStored:
      if (!e.block_hashes.empty()) index->StoreCheckpoint(worker_, e.block_hashes[0]);
      break;
    case cache::KvEventKind::kCheckpointRemoved:
      if (!e.block_hashes.empty()) index->RemoveCheckpoint(worker_, e.block_hashes[0]);
      break;
  }
}

}  // namespace k3::router
