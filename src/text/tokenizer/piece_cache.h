// PieceCache: a direct-mapped memo of piece -> token ids for pieces that needed merging, kept for
// one encode call (or one unit of a parallel encode). Words repeat within a document, and merging
// is the expensive part of encoding, so most repeats cost one hash probe. Pieces are views into
// the text being encoded, which must outlive the cache. Not thread-safe: one per thread.
// Memory: 24 bytes per slot plus the cached ids (cleared when they exceed kMaxCachedIds). The
// short-piece table is one per thread (512 KB, sized to stay in the L2 cache), kept across encodes
// with the same vocabulary: the words of a language repeat across documents too.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "text/tokenizer/bpe_ranks.h"

namespace k3::text {

class PieceCache {
 public:
  // Slots are sized to the text: about one per 32 bytes, between 256 and 64K. `ranks` is the
  // vocabulary the cached ids belong to.
  PieceCache(size_t text_bytes, const BpeRanks& ranks);

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
  // Short pieces (2..8 bytes) of up to kMaxShortIds tokens, keyed by their bytes as
  // BpeRanks::Prefix8 gives them: no hashing pass over the bytes and no probe of the
  // megabytes-large vocabulary index. Most pieces of natural text and code are such words, and
  // they repeat. The table is this thread's, for this vocabulary (see ThreadShortTable).
  struct ShortIds {
    uint32_t count = 0;  // 0 = not cached
    TokenId ids[3];
  };
  static constexpr size_t kMaxShortIds = 3;
  ShortIds LookupShort(uint64_t prefix, size_t length) const {
    const ShortSlot& slot = short_slots_[ShortSlotOf(prefix, length)];
    if (slot.prefix != prefix || slot.length != length) return {};
    return slot.ids;
  }
  // Caches the ids of a short piece and returns true, or returns false (nothing cached) when it
  // has more than kMaxShortIds tokens.
  bool InsertShort(uint64_t prefix, size_t length, const TokenId* ids, size_t count) {
    if (count == 0 || count > kMaxShortIds) return false;
    ShortSlot& slot = short_slots_[ShortSlotOf(prefix, length)];
    slot.prefix = prefix;
    slot.length = static_cast<uint32_t>(length);
    slot.ids.count = static_cast<uint32_t>(count);
    std::memcpy(slot.ids.ids, ids, count * sizeof(TokenId));
    return true;
  }
  static constexpr size_t kMaxShortPieceBytes = 8;

  // Starts loading the slot Lookup(hash, ...) reads.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
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
  struct ShortSlot {  // 32 bytes: two per cache line
    uint64_t prefix = 0;
    uint32_t length = 0;  // 0 = empty: short pieces have 2..8 bytes
    ShortIds ids;
  };
  static constexpr int kLog2ShortSlots = 14;
  // This thread's short table, emptied first when it last served another vocabulary.
  static ShortSlot* ThreadShortTable(uint64_t vocabulary_id);
  static size_t ShortSlotOf(uint64_t prefix, size_t length) {
    return ((prefix + length) * 0x9E3779B97F4A7C15ull) >> (64 - kLog2ShortSlots);
  }
  std::vector<Slot> slots_;
  size_t mask_;
  ShortSlot* short_slots_;
  std::vector<TokenId> ids_;
};

}  // namespace k3::text
