// The long-piece byte-pair merge (BytePairEncodeLong, see bpe.h) and its worst-case fallback
// (BytePairEncodeTree).
//
// Parts are nodes of a doubly linked list indexed by their first byte; key[i] is the rank of part
// i merged with the next one. Tiktoken merges the lowest rank, leftmost on ties. Two sorted
// streams supply the candidates:
// - the byte-pair level, known before any merge: counting-sorted by (rank, position) in two
//   sequential passes. In a run of letters it is about two thirds of all candidates.
// - the pairs that merges create: a bucket queue over ranks (rank_queue.h), O(1) per push. Each
//   rank's list is sorted when its turn comes (almost always 1-3 entries).
// A merge at rank r never creates another pair of rank r (the merged bytes are longer), so a
// rank's positions can be merged left to right in one go -- unless a merge creates a pair of a
// *lower* rank. That happens: some tokens have splits of higher rank than themselves (" the" =
// " " + "the" in Kimi's vocabulary). Then the rest of the rank goes back to the queue and the
// lower rank is merged first, as tiktoken would. Inputs that make this happen more than n times
// in one piece are handed to the segment tree, which is O(n log n) in every case.
// Entries whose position was merged away or re-keyed since are skipped: a position's pair only
// ever grows in bytes, so it never returns to a rank it left.
#include <algorithm>

#include "text/tokenizer/bpe.h"
#include "text/tokenizer/rank_queue.h"

namespace k3::text {
namespace {

constexpr uint32_t kNone = RankQueue::kNone;

// Per-thread buffers, reused across pieces; trimmed after huge pieces so a thread does not keep
// tens of megabytes.
struct LongScratch {
  std::vector<TokenId> part;    // [position]: token of the part starting there
  std::vector<uint32_t> next;   // [position]: start of the next part, or kNone
  std::vector<uint32_t> prev;   // [position]: start of the previous part, or kNone
  std::vector<TokenId> key;     // [position]: rank of the part merged with the next, or kNoRank
  std::vector<uint32_t> batch;  // positions of one rank taken from the queue
  // The byte-pair level: `by_rank` holds positions sorted by (rank, position); group g covers
  // by_rank[group_end[g-1], group_end[g]) and is the byte pair groups[g] (first << 8 | second).
  std::vector<uint32_t> pair_offset = std::vector<uint32_t>(1 << 16);  // zero between pieces
  std::vector<uint64_t> groups;  // (rank << 16 | byte pair), sorted
  std::vector<uint32_t> group_end;
  std::vector<uint32_t> by_rank;
  RankQueue queue;
  void Trim() {
    constexpr size_t kKeepPositions = 1 << 17;
    if (part.size() > kKeepPositions) *this = LongScratch{};
  }
};

class LongMerge {
 public:
  LongMerge(const BpeRanks& ranks, std::string_view piece, LongScratch* scratch)
      : ranks_(ranks), piece_(piece), s_(*scratch) {}

  // Merges everything; false (with the parts half merged) when lower-rank detours exceeded the
  // budget and the caller should use the tree instead.
  bool Run() {
    InitParts();
    SortBytePairs();
    const auto& groups = s_.groups;
    size_t group = 0;
    uint32_t begin = 0;
    for (;;) {
      const TokenId queued = s_.queue.LowestRank();
      const TokenId initial = group < groups.size() ? TokenId(groups[group] >> 16) : kNoRank;
      if (initial < queued) {
        MergeAscending(&s_.by_rank[begin], s_.group_end[group] - begin, initial);
        begin = s_.group_end[group++];
      } else if (queued != kNone) {
        s_.queue.Take(queued, &s_.batch);
        SortPositions(&s_.batch);
        MergeAscending(s_.batch.data(), s_.batch.size(), queued);
      } else {
        return true;
      }
      if (requeued_ > piece_.size() + 64) return false;
    }
  }

  void Emit(std::vector<TokenId>* out) const {
    for (uint32_t i = 0; i != kNone; i = s_.next[i]) out->push_back(s_.part[i]);
  }

 private:
  void InitParts() {
    const uint32_t n = static_cast<uint32_t>(piece_.size());
    s_.part.resize(n);
    s_.next.resize(n);
    s_.prev.resize(n);
    s_.key.resize(n);
    s_.queue.Reset(static_cast<uint32_t>(ranks_.size()));
    const auto* bytes = reinterpret_cast<const uint8_t*>(piece_.data());
    for (uint32_t i = 0; i < n; ++i) {
      s_.part[i] = ranks_.ByteRank(bytes[i]);
      s_.next[i] = i + 1 < n ? i + 1 : kNone;
      s_.prev[i] = i > 0 ? i - 1 : kNone;
      s_.key[i] = i + 1 < n ? ranks_.BytePairRank(bytes[i], bytes[i + 1]) : kNoRank;
    }
  }

  // Counting sort of the byte-pair candidates by (rank, position): count per byte pair, order
  // the distinct pairs by rank, then scatter positions in ascending order.
  void SortBytePairs() {
    const auto* bytes = reinterpret_cast<const uint8_t*>(piece_.data());
    const size_t n = piece_.size();
    auto& offset = s_.pair_offset;
    s_.groups.clear();
    for (size_t i = 0; i + 1 < n; ++i) {
      if (s_.key[i] == kNoRank) continue;
      const uint32_t pair = uint32_t{bytes[i]} << 8 | bytes[i + 1];
      if (offset[pair]++ == 0) s_.groups.push_back(uint64_t{s_.key[i]} << 16 | pair);
    }
    std::sort(s_.groups.begin(), s_.groups.end());
    s_.group_end.resize(s_.groups.size());
    uint32_t total = 0;
    for (size_t g = 0; g < s_.groups.size(); ++g) {
      uint32_t& slot = offset[s_.groups[g] & 0xFFFF];
      const uint32_t count = slot;
      slot = total;  // now the next write position of this pair
      s_.group_end[g] = total += count;
    }
    s_.by_rank.resize(total);
    for (size_t i = 0; i + 1 < n; ++i) {
      if (s_.key[i] == kNoRank) continue;
      s_.by_rank[offset[uint32_t{bytes[i]} << 8 | bytes[i + 1]]++] = static_cast<uint32_t>(i);
    }
    for (uint64_t group : s_.groups) offset[group & 0xFFFF] = 0;
  }

  // Lists come out of the queue newest first, so usually in descending order.
  static void SortPositions(std::vector<uint32_t>* positions) {
    if (std::is_sorted(positions->rbegin(), positions->rend())) {
      std::reverse(positions->begin(), positions->end());
    } else {
      std::sort(positions->begin(), positions->end());
    }
  }

  // Merges the still-valid pairs of `rank` at `positions` (ascending), left to right. If a merge
  // creates a pair of lower rank, the rest are queued again and it returns.
  void MergeAscending(const uint32_t* positions, size_t count, TokenId rank) {
    for (size_t i = 0; i < count; ++i) {
      if (s_.key[positions[i]] != rank) continue;  // stale: merged away or re-keyed
      if (Merge(positions[i], rank) > rank) continue;
      for (size_t j = i + 1; j < count; ++j) {
        if (s_.key[positions[j]] != rank) continue;
        s_.queue.Push(rank, positions[j]);
        ++requeued_;
      }
      return;
    }
  }

  // Merges part `left` with the next one into token `rank`, re-keys the merged part and the one
  // before it, and returns the lower of their new ranks.
  TokenId Merge(uint32_t left, TokenId rank) {
    auto& part = s_.part;
    auto& key = s_.key;
    const uint32_t right = s_.next[left];
    const uint32_t after = s_.next[right];
    const uint32_t before = s_.prev[left];
    part[left] = rank;
    key[right] = kNoRank;  // dead: its entries are stale now
    s_.next[left] = after;
    if (after != kNone) s_.prev[after] = left;
    // Both probes usually miss the caches: start them together.
    if (after != kNone) ranks_.PrefetchPair(rank, part[after]);
    if (before != kNone) ranks_.PrefetchPair(part[before], rank);
    TokenId lowest = kNoRank;
    key[left] = after != kNone ? ranks_.MergedRank(rank, part[after]) : kNoRank;
    if (key[left] != kNoRank) s_.queue.Push(lowest = key[left], left);
    if (before != kNone) {
      key[before] = ranks_.MergedRank(part[before], rank);
      if (key[before] != kNoRank) s_.queue.Push(key[before], before);
      lowest = std::min(lowest, key[before]);
    }
    return lowest;
  }

  const BpeRanks& ranks_;
  std::string_view piece_;
  LongScratch& s_;
  size_t requeued_ = 0;  // entries queued again after lower-rank detours
};

}  // namespace

void BytePairEncodeLong(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out,
                        bool* used_tree) {
  thread_local LongScratch scratch;
  LongMerge merge(ranks, piece, &scratch);
  const bool batched = merge.Run();
  if (batched) {
    merge.Emit(out);
  } else {
    BytePairEncodeTree(ranks, piece, out);
  }
  if (used_tree) *used_tree = !batched;
  scratch.Trim();
}

}  // namespace k3::text
