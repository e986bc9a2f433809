#include "text/tokenizer/bpe.h"

#include <algorithm>
#include <cstring>
#include <queue>

#include "base/check.h"

namespace k3::text {
namespace {

constexpr size_t kSmallPieceBytes = 64;

}  // namespace

void BytePairEncodeSmall(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out) {
  const size_t n = piece.size();
  K3_DCHECK(n >= 2 && n <= kSmallPieceBytes);
  // starts[i]: first byte of part i; pair_rank[i]: rank of parts i and i+1 merged.
  uint32_t starts[kSmallPieceBytes + 1];
  TokenId pair_rank[kSmallPieceBytes + 1];
  size_t num_parts = n;
  for (size_t i = 0; i < n; ++i) starts[i] = static_cast<uint32_t>(i);
  starts[n] = static_cast<uint32_t>(n);
  auto rank_of = [&](size_t i) -> TokenId {  // rank of parts i and i+1 merged
    if (i + 1 >= num_parts) return kNoRank;
    return ranks.Find(piece.substr(starts[i], starts[i + 2] - starts[i]));
  };
  for (size_t i = 0; i + 1 < n; ++i) pair_rank[i] = rank_of(i);
  pair_rank[n - 1] = kNoRank;
  for (;;) {
    TokenId best = kNoRank;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < num_parts; ++i) {
      if (pair_rank[i] < best) {
        best = pair_rank[i];
        best_idx = i;
      }
    }
    if (best == kNoRank) break;
    // Merge part best_idx+1 into best_idx.
    std::memmove(&starts[best_idx + 1], &starts[best_idx + 2],
                 (num_parts - best_idx - 1) * sizeof(starts[0]));
    std::memmove(&pair_rank[best_idx + 1], &pair_rank[best_idx + 2],
                 (num_parts - best_idx - 2) * sizeof(pair_rank[0]));
    --num_parts;
    pair_rank[best_idx] = rank_of(best_idx);
    if (best_idx > 0) pair_rank[best_idx - 1] = rank_of(best_idx - 1);
  }
  for (size_t i = 0; i < num_parts; ++i)
    out->push_back(ranks.Find(piece.substr(starts[i], starts[i + 1] - starts[i])));
}

void BytePairEncodeHeap(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out) {
  const uint32_t n = static_cast<uint32_t>(piece.size());
  // Live tokens form a list keyed by their first byte: end_of[s] is the end of the token starting
  // at s (0 once s stopped being a token start), prev_of[s] the start of the token before it.
  std::vector<uint32_t> end_of(n + 1), prev_of(n + 1);
  for (uint32_t i = 0; i < n; ++i) {
    end_of[i] = i + 1;
    prev_of[i] = i == 0 ? UINT32_MAX : i - 1;
  }
  struct Candidate {
    TokenId rank;
    uint32_t left;   // start of the left token
    uint32_t right_end;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;  // lowest rank, then leftmost
    }
  };
  std::vector<Candidate> storage;
  storage.reserve(n * 2);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(
      std::greater<>(), std::move(storage));
  auto push = [&](uint32_t left, uint32_t right_end) {
    TokenId rank = ranks.Find(piece.substr(left, right_end - left));
    if (rank != kNoRank) heap.push({rank, left, right_end});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) push(i, i + 2);
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    uint32_t mid = end_of[c.left];
    // Stale unless tokens [left, mid) and [mid, right_end) are both still live.
    if (mid == 0 || mid >= n || end_of[mid] != c.right_end) continue;
    end_of[c.left] = c.right_end;
    end_of[mid] = 0;
    if (c.right_end < n) prev_of[c.right_end] = c.left;
    if (prev_of[c.left] != UINT32_MAX) push(prev_of[c.left], c.right_end);
    if (c.right_end < n) push(c.left, end_of[c.right_end]);
  }
  for (uint32_t s = 0; s < n; s = end_of[s]) out->push_back(ranks.Find(piece.substr(s, end_of[s] - s)));
}

void BytePairEncode(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out) {
  if (piece.size() == 1) {
    out->push_back(ranks.ByteRank(static_cast<uint8_t>(piece[0])));
    return;
  }
  if (TokenId whole = ranks.Find(piece); whole != kNoRank) {
    out->push_back(whole);
    return;
  }
  if (piece.size() <= kSmallPieceBytes) {
    BytePairEncodeSmall(ranks, piece, out);
  } else {
    BytePairEncodeHeap(ranks, piece, out);
  }
}

}  // namespace k3::text
