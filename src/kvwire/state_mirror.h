// StateMirror: a replica's current KV cache contents rebuilt from its own KV events (stored blocks
// with their parents, checkpoints) so a publisher can answer a resync with a snapshot after the
// channel's replay window has moved on. Not the cache itself: it knows hashes, never tokens or
// block ids. Not thread-safe (the publisher guards it with its mutex).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/kv_events.h"

namespace k3::kvwire {

class StateMirror {
 public:
  // Applies one event and records its sequence as the one the mirror is valid as of.
  // Cost: O(hashes in the event).
  void Apply(const cache::SequencedKvEvent& e);
  void Clear();

  // The whole state as snapshot events (sequence 0): kBlockStored with one hash and its parent
  // each, every parent that is itself stored coming before its children, then kCheckpointStored.
  // Cost: O(blocks + checkpoints) time and a copy of the state.
  std::vector<cache::SequencedKvEvent> Snapshot() const;

  uint64_t sequence() const { return sequence_; }
  size_t num_blocks() const { return blocks_.size(); }
  size_t num_checkpoints() const { return checkpoints_.size(); }

 private:
  struct Block {
    std::optional<cache::BlockHash> parent;
    int64_t position = 0;  // tokens covered up to the end of this block
    int block_size = 0;
  };
  struct Checkpoint {
    int64_t position = 0;
    int block_size = 0;
  };

  std::unordered_map<cache::BlockHash, Block> blocks_;            // chained hash -> block
  std::unordered_map<cache::BlockHash, Checkpoint> checkpoints_;  // block hash -> checkpoint
  uint64_t sequence_ = 0;
};

}  // namespace k3::kvwire
