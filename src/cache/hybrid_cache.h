// HybridCache: the scheduler's one view of the cache. It pairs the paged latent-cache blocks and
// their prefix index (PrefixCache) with the policy for models that also keep a recurrent state
// per sequence (linear-attention layers): a prefix hit is usable only where a state checkpoint
// exists, so prefill chunks are cut to end exactly at checkpoint positions, and after such a
// chunk the running state is saved into a checkpoint slot. The scheduler asks this class where
// chunks end and where checkpoints go; it never names an architecture.
//
// Checkpoint positions (block boundaries only): multiples of checkpoint_interval (when > 0), and
// the last block boundary inside the prompt, which is where the next turn of a conversation
// (same prefix, longer prompt) finds its state.
//
// A checkpoint is reserved when a step is planned (a slot to copy the running state into after
// the forward pass) and confirmed or cancelled when the step's result is known, so only state
// the step computed is ever attached. Single-threaded, like the scheduler.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_set>

#include "cache/block_hash.h"
#include "cache/kv_events.h"
#include "cache/prefix_cache.h"

namespace k3::cache {

struct HybridCacheConfig {
  PrefixCacheConfig blocks;
  bool prefix_caching = true;
  bool recurrent_state = false;     // the model keeps per-sequence state: hits need checkpoints
  int64_t checkpoint_interval = 0;  // tokens, a multiple of the block size; 0 = prompt ends only
};

// What the cache needs of a sequence: its tokens, where its prompt ends and the hashes of its full
// blocks, which the sequence owns and the cache extends lazily (one hash per block, once).
struct SequenceView {
  std::span<const int32_t> tokens;
  int64_t prompt_len = 0;
  BlockHashes* hashes = nullptr;
};

class HybridCache {
 public:
  HybridCache(HybridCacheConfig config, KvEventChannel* events);

  int block_size() const { return config_.blocks.block_size; }
  // Whether state checkpoints are kept (prefix caching on a model with recurrent state).
  bool uses_checkpoints() const { return use_checkpoints_; }
  const PrefixCache& prefix() const { return prefix_; }
  PrefixCacheStats stats() const { return prefix_.stats(); }

  // Blocks (PrefixCache semantics).
  int AllocateBlock() { return prefix_.AllocateBlock(); }
  void ReleaseBlock(int block) { prefix_.ReleaseBlock(block); }

  // The usable cached prefix of a sequence about to start (at least its last token is left to
  // compute, so it has logits), with one reference taken on each block. Empty without prefix
  // caching.
  PrefixMatch AcquirePrefix(const SequenceView& seq);

  // How many of the n tokens after `computed` one chunk takes: it ends at the first checkpoint
  // position inside it that has no checkpoint yet (so the state there can be saved), else n.
  int64_t AlignChunk(const SequenceView& seq, int64_t computed, int64_t n);

  // After a chunk ending at `position`: a checkpoint slot to save the running state into after the
  // forward pass, or -1 (no checkpoint wanted there, one exists, or one is already reserved for
  // the same prefix). Confirm or cancel every reservation.
  int ReserveCheckpoint(const SequenceView& seq, int64_t position);
  // The slot now holds the state after `position` tokens: attached to that block if it is cached
  // and has no checkpoint, else freed.
  void ConfirmCheckpoint(const SequenceView& seq, int64_t position, int slot);
  void CancelCheckpoint(const SequenceView& seq, int64_t position, int slot);

  // Offers the sequence's full blocks of its first `computed` tokens (confirmed by a step) to the
  // prefix index; `*committed` counts the leading blocks already offered. No-op without prefix
  // caching.
  void CommitBlocks(const SequenceView& seq, std::span<const int32_t> blocks, int64_t computed,
                    size_t* committed);

 private:
  bool IsCheckpointPosition(const SequenceView& seq, int64_t position) const;
  // The chained hash of the block ending at `position` (a positive multiple of the block size).
  BlockHash ChainAt(const SequenceView& seq, int64_t position);
  void EnsureHashes(const SequenceView& seq, size_t full_blocks);

  HybridCacheConfig config_;
  bool use_checkpoints_;
  PrefixCache prefix_;
  std::unordered_set<BlockHash> reserved_;  // prefixes with a checkpoint reserved, not confirmed
};

}  // namespace k3::cache
