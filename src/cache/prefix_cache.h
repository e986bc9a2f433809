// The paged latent-cache block pool with its prefix index, and the pool of KDA state checkpoint
// slots. Model-agnostic: blocks and slots are integers; what they hold is the model runner's
// business.
//
// Invariants:
// - Every block is exactly one of: free (no data anyone wants), referenced (refs > 0: running
//   sequences use it), or cached-idle (refs == 0, in the index, evictable).
// - The index is a radix tree over full blocks: a cached block's parent is the cached block of
//   the previous prefix, so every cached block's ancestors are cached too. Only leaves are evicted
//   (least recently used first), which keeps that true.
// - A checkpoint slot belongs to at most one cached block: the KDA state after that block's last
//   token. Evicting the block drops its checkpoint; checkpoints are also evicted alone (LRU).
// - A prefix hit is usable only up to the deepest cached block that has a checkpoint (when the
//   model has recurrent state): KV without the matching state would give wrong outputs.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/block_hash.h"
#include "cache/kv_events.h"

namespace k3::cache {

struct PrefixCacheConfig {
  int num_blocks = 0;
  int block_size = 16;
  int num_checkpoint_slots = 0;
  int first_checkpoint_slot = 0;  // slot ids handed out are [first, first + num)
};

struct PrefixMatch {
  std::vector<int> blocks;   // cached blocks of the usable prefix, in order
  int64_t kv_tokens = 0;     // tokens covered by cached KV (before snapping to a checkpoint)
  int64_t tokens = 0;        // usable tokens: blocks.size() * block_size
  int checkpoint_slot = -1;  // state after `tokens` tokens (if the model has state and tokens > 0)
};

struct PrefixCacheStats {
  int free_blocks = 0;         // never-cached or evicted
  int idle_cached_blocks = 0;  // cached, unreferenced: reusable on a hit, evictable on demand
  int referenced_blocks = 0;
  int checkpoints = 0;
  int64_t evicted_blocks = 0;
  int64_t evicted_checkpoints = 0;
};

class PrefixCache {
 public:
  PrefixCache(PrefixCacheConfig config, KvEventChannel* events);

  const PrefixCacheConfig& config() const { return config_; }

  // A block with one reference held by the caller: a free one, else the least recently used idle
  // cached leaf is evicted. -1 if every block is referenced.
  int AllocateBlock();
  // Blocks AllocateBlock can still return.
  int available_blocks() const;
  // Drops one reference. Release a sequence's blocks last-first so deeper blocks age first.
  void ReleaseBlock(int block);

  // The longest cached prefix of `hashes` within `max_tokens` tokens; with `need_state` it is cut
  // back to the deepest block holding a checkpoint. Takes no references.
  PrefixMatch Lookup(const BlockHashes& hashes, int64_t max_tokens, bool need_state) const;
  // Takes one reference on each block (and marks them and their checkpoint as just used).
  void Acquire(const PrefixMatch& match);

  // Registers `block` (referenced by the caller, holding the KV of the block whose hashes are
  // local/chain; `parent_chain` is the previous block's chained hash, ignored for the first block)
  // in the index. No-op (false) if that prefix is already cached by another block or the parent
  // prefix is not cached. `tokens` are the block's ids, for the event.
  bool Commit(int block, BlockHash parent_chain, BlockHash local, BlockHash chain,
              std::span<const int32_t> tokens, int64_t end_position);
  bool IsCached(BlockHash chain) const { return by_chain_.count(chain) > 0; }
  bool HasCheckpoint(BlockHash chain) const;

  // A free checkpoint slot, evicting the least recently used checkpoint if needed; -1 if the pool
  // is empty. The caller fills it, then attaches it (or hands it back with FreeCheckpointSlot).
  int AllocateCheckpointSlot();
  void FreeCheckpointSlot(int slot);
  // `chain` must be cached and have no checkpoint yet; otherwise the slot is freed (false).
  bool AttachCheckpoint(BlockHash chain, int slot);

  PrefixCacheStats stats() const;

 private:
  struct Node {
    bool cached = false;
    int parent = -1;  // cached parent block, -1 for the first block of a sequence
    BlockHash local = 0, chain = 0;
    int64_t end_position = 0;
    int refs = 0;
    int cached_children = 0;
    int checkpoint = -1;
    uint64_t last_use = 0;
    uint64_t checkpoint_use = 0;
  };

  void EvictBlock(int block);
  void DropCheckpoint(int block);
  void MaybeMakeEvictable(int block);
  void Publish(KvEventKind kind, const Node& node, std::span<const int32_t> tokens);
  std::unordered_map<BlockHash, int>& ChildrenOf(int parent);
  const std::unordered_map<BlockHash, int>* FindChildren(int parent) const;

  PrefixCacheConfig config_;
  KvEventChannel* events_;
  std::vector<Node> nodes_;
  std::vector<int> free_blocks_;
  std::set<std::pair<uint64_t, int>> evictable_;      // (last_use, block): idle cached leaves
  std::unordered_map<BlockHash, int> by_chain_;       // chained hash -> cached block
  std::unordered_map<BlockHash, int> root_children_;  // local hash -> first cached block
  std::unordered_map<int, std::unordered_map<BlockHash, int>>
      children_;  // parent -> local -> block
  std::vector<int> free_slots_;
  std::set<std::pair<uint64_t, int>> checkpoint_lru_;  // (use, block owning the checkpoint)
  int idle_cached_ = 0;                                // cached blocks with refs == 0
  uint64_t clock_ = 0;
  int64_t evicted_blocks_ = 0, evicted_checkpoints_ = 0;
};

}  // namespace k3::cache
