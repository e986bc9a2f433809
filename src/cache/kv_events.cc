#include "cache/kv_events.h"

namespace k3::cache {

const char* KvEventKindName(KvEventKind kind) {
  switch (kind) {
    case KvEventKind::kBlockStored:
      return "BlockStored";
    case KvEventKind::kBlockRemoved:
      return "BlockRemoved";
    case KvEventKind::kAllCleared:
      return "AllBlocksCleared";
    case KvEventKind::kCheckpointStored:
      return "CheckpointStored";
    case KvEventKind::kCheckpointRemoved:
      return "CheckpointRemoved";
  }
  return "?";
}

void KvEventChannel::Subscribe(Subscriber subscriber) {
  std::lock_guard lock(mutex_);
  subscribers_.push_back(std::move(subscriber));
}

uint64_t KvEventChannel::Publish(KvEvent event) {
  std::lock_guard lock(mutex_);
  SequencedKvEvent sequenced{next_++, std::move(event)};
  for (const auto& subscriber : subscribers_) subscriber(sequenced);
  if (capacity_ > 0) {
    if (recent_.size() == capacity_) recent_.pop_front();
    recent_.push_back(std::move(sequenced));
  }
  return next_ - 1;
}

std::optional<std::vector<SequencedKvEvent>> KvEventChannel::Replay(uint64_t after) const {
  std::lock_guard lock(mutex_);
  const uint64_t oldest = recent_.empty() ? next_ : recent_.front().sequence;
  if (after + 1 < oldest) return std::nullopt;
  std::vector<SequencedKvEvent> out;
  for (const auto& e : recent_) {
    if (e.sequence > after) out.push_back(e);
  }
  return out;
}

uint64_t KvEventChannel::last_sequence() const {
  std::lock_guard lock(mutex_);
  return next_ - 1;
}

}  // namespace k3::cache
