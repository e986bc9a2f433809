// KV events: what a replica's cache stored and dropped, for a KV-aware router (issue 7 puts them
// on ZeroMQ). Every event gets the next sequence number of its channel, so a subscriber that sees
// a gap knows it lost events and can ask for a replay or a snapshot.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "cache/block_hash.h"

namespace k3::cache {

enum class KvEventKind {
  kBlockStored,        // MLA latent blocks now cached; block_hashes are chained hashes
  kBlockRemoved,       // blocks evicted
  kAllCleared,         // the whole cache was dropped
  kCheckpointStored,   // a KDA state snapshot exists after the block `block_hashes[0]`
  kCheckpointRemoved,  // that snapshot was evicted
};

const char* KvEventKindName(KvEventKind kind);

struct KvEvent {
  KvEventKind kind = KvEventKind::kBlockStored;
  std::vector<BlockHash> block_hashes;   // chained hashes, parent first
  std::optional<BlockHash> parent_hash;  // chained hash of the block before the first (stored)
  std::vector<int32_t> token_ids;        // the stored blocks' tokens (stored only)
  int block_size = 0;
  int64_t position = 0;  // tokens covered up to the end of the last block
};

struct SequencedKvEvent {
  uint64_t sequence = 0;  // 1, 2, 3, ... per channel
  KvEvent event;
};

// Thread-safe. Subscribers run on the publishing thread, under the channel's lock: keep them
// short (copy and hand off). The last `replay_capacity` events are kept for Replay.
class KvEventChannel {
 public:
  explicit KvEventChannel(size_t replay_capacity = 10000) : capacity_(replay_capacity) {}

  using Subscriber = std::function<void(const SequencedKvEvent&)>;
  void Subscribe(Subscriber subscriber);
  uint64_t Publish(KvEvent event);
  // Events with sequence > after, oldest first; empty optional if some were already dropped.
  std::optional<std::vector<SequencedKvEvent>> Replay(uint64_t after) const;
  uint64_t last_sequence() const;

 private:
  mutable std::mutex mutex_;
  size_t capacity_;
  uint64_t next_ = 1;
  std::deque<SequencedKvEvent> recent_;
  std::vector<Subscriber> subscribers_;
};

}  // namespace k3::cache
