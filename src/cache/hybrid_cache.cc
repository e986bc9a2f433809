#include "cache/hybrid_cache.h"

#include "base/check.h"

namespace k3::cache {

HybridCache::HybridCache(HybridCacheConfig config, KvEventChannel* events)
    : config_(config),
      use_checkpoints_(config.prefix_caching && config.recurrent_state),
      prefix_(config.blocks, events) {}

void HybridCache::EnsureHashes(const SequenceView& seq, size_t full_blocks) {
  const size_t bs = static_cast<size_t>(block_size());
  BlockHashes& h = *seq.hashes;
  K3_CHECK(full_blocks * bs <= seq.tokens.size()) << "hashing past the sequence's tokens";
  for (size_t b = h.local.size(); b < full_blocks; ++b) {
    const BlockHash local = LocalBlockHash(seq.tokens.subspan(b * bs, bs));
    h.local.push_back(local);
    h.chain.push_back(b == 0 ? local : ChainBlockHash(h.chain.back(), local));
  }
}

BlockHash HybridCache::ChainAt(const SequenceView& seq, int64_t position) {
  const size_t block = static_cast<size_t>(position / block_size());
  EnsureHashes(seq, block);
  return seq.hashes->chain[block - 1];
}

PrefixMatch HybridCache::AcquirePrefix(const SequenceView& seq) {
  if (!config_.prefix_caching) return {};
  EnsureHashes(seq, seq.tokens.size() / static_cast<size_t>(block_size()));
  PrefixMatch match = prefix_.Lookup(*seq.hashes, static_cast<int64_t>(seq.tokens.size()) - 1,
                                     config_.recurrent_state);
  prefix_.Acquire(match);
  return match;
}

bool HybridCache::IsCheckpointPosition(const SequenceView& seq, int64_t position) const {
  const int64_t bs = block_size();
  if (!use_checkpoints_ || position <= 0 || position % bs != 0) return false;
  const int64_t interval = config_.checkpoint_interval;
  if (interval > 0 && position % interval == 0) return true;
  return position == seq.prompt_len / bs * bs;
}

int64_t HybridCache::AlignChunk(const SequenceView& seq, int64_t computed, int64_t n) {
  if (!use_checkpoints_ || n <= 1) return n;
  const int64_t bs = block_size();
  for (int64_t p = (computed / bs + 1) * bs; p < computed + n; p += bs) {
    if (IsCheckpointPosition(seq, p) && !prefix_.HasCheckpoint(ChainAt(seq, p))) {
      return p - computed;
    }
  }
  return n;
}

int HybridCache::ReserveCheckpoint(const SequenceView& seq, int64_t position) {
  if (!IsCheckpointPosition(seq, position)) return -1;
  const BlockHash chain = ChainAt(seq, position);
  if (prefix_.HasCheckpoint(chain) || reserved_.count(chain)) return -1;
  const int slot = prefix_.AllocateCheckpointSlot();
  if (slot >= 0) reserved_.insert(chain);
  return slot;
}

void HybridCache::ConfirmCheckpoint(const SequenceView& seq, int64_t position, int slot) {
  const BlockHash chain = ChainAt(seq, position);
  reserved_.erase(chain);
  prefix_.AttachCheckpoint(chain, slot);  // frees the slot if the block is uncached or has one
}

void HybridCache::CancelCheckpoint(const SequenceView& seq, int64_t position, int slot) {
  reserved_.erase(ChainAt(seq, position));
  prefix_.FreeCheckpointSlot(slot);
}

void HybridCache::CommitBlocks(const SequenceView& seq, std::span<const int32_t> blocks,
                               int64_t computed, size_t* committed) {
  if (!config_.prefix_caching) return;
  const size_t full = static_cast<size_t>(computed / block_size());
  if (full <= *committed) return;
  EnsureHashes(seq, full);
  const BlockHashes& h = *seq.hashes;
  const size_t bs = static_cast<size_t>(block_size());
  for (size_t b = *committed; b < full; ++b) {
    prefix_.Commit(blocks[b], b ? h.chain[b - 1] : 0, h.local[b], h.chain[b],
                   seq.tokens.subspan(b * bs, bs), static_cast<int64_t>((b + 1) * bs));
  }
  *committed = full;
}

}  // namespace k3::cache
