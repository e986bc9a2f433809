// RankQueue: the priority queue of the long-piece byte-pair merge (bpe.cc). A bucket queue over
// merge ranks: one list of positions per rank and a two-level bitmap of the non-empty ranks.
// Push is O(1) (an append); finding the lowest non-empty rank is a few word scans (the bitmap is
// 20 KB for a 163K vocabulary, so it stays in L1/L2). Entries are never removed: a position whose
// pair changes is pushed again under its new rank, and the caller drops the stale entry when it
// takes the old rank's list (a position's pair never returns to a rank it left, so the check is
// "is this still the pair's rank"). Replaces a segment tree whose O(log n) walks cost a third of
// a long piece's time. Not thread-safe; one per thread.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace k3::text {

class RankQueue {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Empties the queue for ranks below `num_ranks`. O(num_ranks / 64) the first time, then O(1)
  // when the last user took every list (the bitmap is then already clear).
  void Reset(uint32_t num_ranks) {
    entries_.clear();
    if (heads_.size() != num_ranks || !empty_) {
      heads_.assign(num_ranks, kNone);
      bits_.assign((num_ranks + 63) / 64, 0);
      summary_.assign((bits_.size() + 63) / 64, 0);
    }
    lowest_ = 0;
    empty_ = true;
  }

  void Push(uint32_t rank, uint32_t position) {
    uint64_t& word = bits_[rank >> 6];
    const uint64_t bit = uint64_t{1} << (rank & 63);
    const bool listed = word & bit;
    if (!listed) {
      word |= bit;
      summary_[rank >> 12] |= uint64_t{1} << ((rank >> 6) & 63);
    }
    entries_.push_back({position, listed ? heads_[rank] : kNone});
    heads_[rank] = static_cast<uint32_t>(entries_.size() - 1);
    if (rank < lowest_) lowest_ = rank;
    empty_ = false;
  }

  // The lowest rank with a non-empty list, or kNone.
  uint32_t LowestRank() {
    const uint32_t rank = FindFrom(lowest_);
    if (rank == kNone) {
      empty_ = true;
    } else {
      lowest_ = rank;
    }
    return rank;
  }

  // Moves the positions of `rank`, which LowestRank() just returned, into `positions` (replacing
  // its contents; newest first, stale entries included) and empties that rank's list.
  void Take(uint32_t rank, std::vector<uint32_t>* positions) {
    positions->clear();
    for (uint32_t e = heads_[rank]; e != kNone; e = entries_[e].next)
      positions->push_back(entries_[e].position);
    uint64_t& word = bits_[rank >> 6];
    word &= ~(uint64_t{1} << (rank & 63));
    if (word == 0) summary_[rank >> 12] &= ~(uint64_t{1} << ((rank >> 6) & 63));
  }

 private:
  struct Entry {
    uint32_t position;
    uint32_t next;  // older entry of the same rank, or kNone
  };

  // The lowest rank >= from whose list is non-empty, or kNone.
  uint32_t FindFrom(uint32_t from) const {
    size_t word_index = from >> 6;
    if (word_index >= bits_.size()) return kNone;
    if (uint64_t word = bits_[word_index] & (~uint64_t{0} << (from & 63)))
      return static_cast<uint32_t>(word_index * 64 + std::countr_zero(word));
    const size_t start = word_index + 1;  // the first whole word after `from`'s
    for (size_t s = start >> 6; s < summary_.size(); ++s) {
      uint64_t words = summary_[s];
      if (s == start >> 6) words &= ~uint64_t{0} << (start & 63);
      if (words == 0) continue;
      size_t w = s * 64 + std::countr_zero(words);
      return static_cast<uint32_t>(w * 64 + std::countr_zero(bits_[w]));
    }
    return kNone;
  }

  std::vector<Entry> entries_;
  std::vector<uint32_t> heads_;    // [rank]: newest entry; meaningful only while the bit is set
  std::vector<uint64_t> bits_;     // bit r: rank r's list is non-empty
  std::vector<uint64_t> summary_;  // bit w: bits_[w] != 0
  uint32_t lowest_ = 0;            // no rank below it has a non-empty list
  bool empty_ = true;              // every bit is clear (set when LowestRank finds nothing)
};

}  // namespace k3::text
