#include "text/tokenizer/piece_cache.h"

#include <algorithm>

namespace k3::text {

PieceCache::PieceCache(size_t text_bytes) {
  size_t num_slots = 256;
  while (num_slots < 65536 && num_slots * 32 < text_bytes) num_slots *= 2;
  slots_.resize(num_slots);
  mask_ = num_slots - 1;
}

void PieceCache::Insert(uint64_t hash, std::string_view piece, const TokenId* ids, size_t num_ids) {
  if (ids_.size() + num_ids > kMaxCachedIds) {  // bound memory: start over
    ids_.clear();
    std::fill(slots_.begin(), slots_.end(), Slot{});
  }
  Slot& slot = slots_[hash & mask_];
  slot = Slot{hash, piece.data(), static_cast<uint32_t>(piece.size()),
              static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(num_ids)};
  ids_.insert(ids_.end(), ids, ids + num_ids);
}

}  // namespace k3::text
