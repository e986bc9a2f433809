// PieceCache: a direct-mapped memo of piece -> token ids for pieces that needed merging, kept for
// one encode call (or one unit of a parallel encode). Words repeat within a document, and merging
// is the expensive part of encoding, so most repeats cost one hash probe. Pieces are views into
// the text being encoded, which must outlive the cache. Not thread-safe: one per thread.
// Memory: 24 bytes per slot plus the cached ids (cleared when they exceed kMaxCachedIds).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "text/tokenizer/bpe_ranks.h"

namespace k3::text {

class PieceCache {
 public:
  // Slots are sized to the text: about one per 32 bytes, between 256 and 64K.
  explicit PieceCache(size_t text_bytes);

  // Appends the cached ids of `piece` (hash = BpeRanks::HashBytes(piece)) and returns true, or
  // returns false when it is not cached.
  bool Lookup(uint64_t hash, std::string_view piece, std::vector<TokenId>* out) const {
    const Slot& slot = slots_[hash & mask_];
    if (slot.hash != hash || slot.length != piece.size() ||
        std::memcmp(slot.data, piece.data(), piece.size()) != 0)
      return false;
    out->insert(out->end(), ids_.begin() + slot.ids_offset,
                ids_.begin() + slot.ids_offset + slot.num_ids);
    return true;
  }
  void Insert(uint64_t hash, std::string_view piece, const TokenId* ids, size_t num_ids);

 private:
  static constexpr size_t kMaxCachedIds = 1 << 20;
  struct Slot {
    uint64_t hash = 0;
    const char* data = nullptr;
    uint32_t length = UINT32_MAX;  // never equals a real piece length when empty
    uint32_t ids_offset = 0;
    uint32_t num_ids = 0;
  };
  std::vector<Slot> slots_;
  size_t mask_;
  std::vector<TokenId> ids_;
};

}  // namespace k3::text
