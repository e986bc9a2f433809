// PieceCache: a direct-mapped memo of piece -> token ids for pieces that needed merging, kept for
// one encode call (or one unit of a parallel encode). Words repeat within a document, and merging
// is the expensive part of encoding, so most repeats cost one hash probe. Pieces are views into
// the text being encoded, which must outlive the cache. Not thread-safe: one per thread.
// Memory: 24 bytes per slot plus the cached ids (cleared when they exceed kMaxCachedIds). The
// short- and mid-piece tables are one per thread (512 + 256 KB, sized to stay in the L2 cache),
// kept across encodes with the same vocabulary: the words of a language repeat across documents
// too, and so do a program's identifiers across requests.
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

  // Pieces of 9..16 bytes (identifiers, longer words) of up to kMaxMidIds tokens: the same idea
  // with two words of key, the first and the last 8 bytes (overlapping), which with the length
  // identify such a piece exactly. Also this thread's and kept across encodes; 4K slots of one
  // cache line (256 KB). Lookup copies the ids out (appends them to `out`).
  static constexpr size_t kMinMidPieceBytes = 9, kMaxMidPieceBytes = 16, kMaxMidIds = 10;
  struct MidKey {
    uint64_t first, last;
    uint32_t length;
  };
  static MidKey MidKeyOf(std::string_view piece) {  // precondition: 9..16 bytes
    MidKey key{0, 0, static_cast<uint32_t>(piece.size())};
    std::memcpy(&key.first, piece.data(), 8);
    std::memcpy(&key.last, piece.data() + piece.size() - 8, 8);
    return key;
  }
  void PrefetchMid(const MidKey& key) const { __builtin_prefetch(&mid_slots_[MidSlotOf(key)]); }
  bool LookupMid(const MidKey& key, std::vector<TokenId>* out) const {
    const MidSlot& slot = mid_slots_[MidSlotOf(key)];
    if (slot.first != key.first || slot.last != key.last || slot.length != key.length) return false;
    out->insert(out->end(), slot.ids, slot.ids + slot.count);
    return true;
  }
  // Caches the ids and returns true, or returns false when there are more than kMaxMidIds.
  bool InsertMid(const MidKey& key, const TokenId* ids, size_t count) {
    if (count == 0 || count > kMaxMidIds) return false;
    MidSlot& slot = mid_slots_[MidSlotOf(key)];
    slot.first = key.first;
    slot.last = key.last;
    slot.length = key.length;
    slot.count = static_cast<uint32_t>(count);
    std::memcpy(slot.ids, ids, count * sizeof(TokenId));
    return true;
  }

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
  static size_t ShortSlotOf(uint64_t prefix, size_t length) {
    return ((prefix + length) * 0x9E3779B97F4A7C15ull) >> (64 - kLog2ShortSlots);
  }
  struct alignas(64) MidSlot {
    uint64_t first = 0, last = 0;
    uint32_t length = 0;  // 0 = empty
    uint32_t count = 0;
    TokenId ids[kMaxMidIds];
  };
  static constexpr int kLog2MidSlots = 12;
  static size_t MidSlotOf(const MidKey& key) {
    return ((key.first * 0x9E3779B97F4A7C15ull) ^ (key.last + key.length)) *
               0xD6E8FEB86659FD93ull >>
           (64 - kLog2MidSlots);
  }
  // This thread's short and mid tables, emptied first when they last served another vocabulary.
  struct ThreadTables {
    ShortSlot* short_slots;
    MidSlot* mid_slots;
  };
  static ThreadTables ThreadTablesFor(uint64_t vocabulary_id);
  std::vector<Slot> slots_;
  size_t mask_;
  ShortSlot* short_slots_;
  MidSlot* mid_slots_;
  std::vector<TokenId> ids_;
};

}  // namespace k3::text
