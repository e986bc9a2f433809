#include "text/tokenizer/piece_cache.h"

#include <algorithm>

namespace k3::text {

PieceCache::ThreadTables PieceCache::ThreadTablesFor(uint64_t vocabulary_id) {
  struct Tables {
    uint64_t vocabulary_id = 0;  // BpeRanks::instance_id() of the cached ids; 0 = none yet
    std::vector<ShortSlot> short_slots = std::vector<ShortSlot>(size_t{1} << kLog2ShortSlots);
    std::vector<MidSlot> mid_slots = std::vector<MidSlot>(size_t{1} << kLog2MidSlots);
  };
  thread_local Tables tables;
  if (tables.vocabulary_id != vocabulary_id) {
    std::fill(tables.short_slots.begin(), tables.short_slots.end(), ShortSlot{});
    std::fill(tables.mid_slots.begin(), tables.mid_slots.end(), MidSlot{});
    tables.vocabulary_id = vocabulary_id;
  }
  return {tables.short_slots.data(), tables.mid_slots.data()};
}

PieceCache::PieceCache(size_t text_bytes, const BpeRanks& ranks) {
  const ThreadTables tables = ThreadTablesFor(ranks.instance_id());
  short_slots_ = tables.short_slots;
  mid_slots_ = tables.mid_slots;
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
