#include "text/tokenizer/bpe.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace k3::text {
namespace {

// Up to kMaxSmallPieceBytes the quadratic scan beats the long-piece algorithm (measured: pieces are
// mostly short).
constexpr size_t kSmallPieceBytes = kMaxSmallPieceBytes;
// Longer pieces (long runs of letters, digits-free CJK, ...) skip hashing and the piece cache.
constexpr size_t kMaxCachedPieceBytes = 1024;

// Per-thread buffers for the tree algorithm, reused across pieces; trimmed after huge pieces so a
// thread does not keep tens of megabytes.
struct TreeScratch {
  std::vector<TokenId> part;
  std::vector<uint32_t> next, prev;
  std::vector<uint64_t> tree;
  void Trim() {
    constexpr size_t kKeepLeaves = 1 << 16;
    if (tree.size() > 2 * kKeepLeaves) *this = TreeScratch{};
  }
};

}  // namespace

// Parts are tracked by token id; the rank of two adjacent parts merged comes from the pair table,
// so no bytes are hashed while merging.
void BytePairEncodeSmall(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out) {
  const size_t n = piece.size();
  K3_DCHECK(n >= 2 && n <= kSmallPieceBytes);
  TokenId part[kSmallPieceBytes];  // token id of each part
  TokenId pair[kSmallPieceBytes];  // pair[i]: id of parts i and i+1 merged, or kNoRank
  size_t num_parts = n;
  const auto* bytes = reinterpret_cast<const uint8_t*>(piece.data());
  for (size_t i = 0; i < n; ++i) part[i] = ranks.ByteRank(bytes[i]);
  for (size_t i = 0; i + 1 < n; ++i) pair[i] = ranks.BytePairRank(bytes[i], bytes[i + 1]);
  pair[n - 1] = kNoRank;
  for (;;) {
    TokenId best = kNoRank;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < num_parts; ++i) {
      if (pair[i] < best) {
        best = pair[i];
        best_idx = i;
      }
    }
    if (best == kNoRank) break;
    part[best_idx] = best;
    // Both neighbour lookups are independent: start them together, then shift the arrays.
    if (best_idx + 2 < num_parts) ranks.PrefetchPair(best, part[best_idx + 2]);
    if (best_idx > 0) ranks.PrefetchPair(part[best_idx - 1], best);
    size_t tail = num_parts - best_idx - 2;  // parts after the merged pair
    std::memmove(&part[best_idx + 1], &part[best_idx + 2], tail * sizeof(TokenId));
    std::memmove(&pair[best_idx + 1], &pair[best_idx + 2], tail * sizeof(TokenId));
    --num_parts;
    pair[best_idx] =
        best_idx + 1 < num_parts ? ranks.MergedRank(part[best_idx], part[best_idx + 1]) : kNoRank;
    if (best_idx > 0) pair[best_idx - 1] = ranks.MergedRank(part[best_idx - 1], part[best_idx]);
  }
  out->insert(out->end(), part, part + num_parts);
}

// Parts are nodes of a doubly linked list indexed by their first byte. A min segment tree over
// positions holds each part's pair key (merged rank << 32 | position, or kEmpty), so its root is
// tiktoken's choice: the lowest rank, leftmost on ties. Each merge changes three leaves (the
// merged part, the dead right part, the part before) and recomputes their ancestors, stopping as
// soon as a node keeps its value: O(log n) per merge, branch-free, and no stale entries.
void BytePairEncodeTree(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out) {
  const uint32_t n = static_cast<uint32_t>(piece.size());
  constexpr uint32_t kNone = UINT32_MAX;
  constexpr uint64_t kEmpty = UINT64_MAX;
  const auto* bytes = reinterpret_cast<const uint8_t*>(piece.data());
  thread_local TreeScratch scratch;
  std::vector<TokenId>& part = scratch.part;
  std::vector<uint32_t>& next = scratch.next;
  std::vector<uint32_t>& prev = scratch.prev;
  std::vector<uint64_t>& tree = scratch.tree;  // tree[1] is the root; leaf i at leaves + i
  part.resize(n);
  next.resize(n);
  prev.resize(n);
  size_t leaves = 1;
  while (leaves < n) leaves *= 2;
  tree.assign(2 * leaves, kEmpty);
  for (uint32_t i = 0; i < n; ++i) {
    part[i] = ranks.ByteRank(bytes[i]);
    next[i] = i + 1 < n ? i + 1 : kNone;
    prev[i] = i > 0 ? i - 1 : kNone;
    TokenId rank = i + 1 < n ? ranks.BytePairRank(bytes[i], bytes[i + 1]) : kNoRank;
    if (rank != kNoRank) tree[leaves + i] = (uint64_t{rank} << 32) | i;
  }
  for (size_t node = leaves - 1; node >= 1; --node)
    tree[node] = std::min(tree[2 * node], tree[2 * node + 1]);
  auto set_leaf = [&](uint32_t pos, uint64_t key) {
    size_t node = leaves + pos;
    tree[node] = key;
    for (node /= 2; node >= 1; node /= 2) {
      uint64_t value = std::min(tree[2 * node], tree[2 * node + 1]);
      if (tree[node] == value) break;  // ancestors are unchanged too
      tree[node] = value;
    }
  };
  auto pair_key = [&](uint32_t left) {
    uint32_t right = next[left];
    TokenId rank = right == kNone ? kNoRank : ranks.MergedRank(part[left], part[right]);
    return rank == kNoRank ? kEmpty : (uint64_t{rank} << 32) | left;
  };
  while (tree[1] != kEmpty) {
    uint64_t key = tree[1];
    uint32_t left = static_cast<uint32_t>(key);
    uint32_t right = next[left];
    part[left] = static_cast<TokenId>(key >> 32);
    next[left] = next[right];
    if (next[right] != kNone) prev[next[right]] = left;
    // The two new pairs are looked up in a table that misses the caches: start both loads first.
    if (next[left] != kNone) ranks.PrefetchPair(part[left], part[next[left]]);
    if (prev[left] != kNone) ranks.PrefetchPair(part[prev[left]], part[left]);
    set_leaf(right, kEmpty);
    set_leaf(left, pair_key(left));
    if (prev[left] != kNone) set_leaf(prev[left], pair_key(prev[left]));
  }
  for (uint32_t i = 0; i != kNone; i = next[i]) out->push_back(part[i]);
  scratch.Trim();
}

namespace {
// Single bytes and long runs are neither looked up nor memoised: no hash.
bool IsLookedUp(const BpeRanks& ranks, size_t size) {
  return size > 1 && (size <= kMaxCachedPieceBytes || size <= ranks.max_token_bytes());
}

bool IsMid(size_t size) {
  return size >= PieceCache::kMinMidPieceBytes && size <= PieceCache::kMaxMidPieceBytes;
}

// Remembers a merged piece in the thread's short or mid table, else in the per-call cache.
void Memoise(std::string_view piece, uint64_t hash, const TokenId* ids, size_t count,
             PieceCache* cache) {
  if (piece.size() <= PieceCache::kMaxShortPieceBytes &&
      cache->InsertShort(BpeRanks::Prefix8(piece), piece.size(), ids, count))
    return;
  if (IsMid(piece.size()) && cache->InsertMid(PieceCache::MidKeyOf(piece), ids, count)) return;
  cache->Insert(hash, piece, ids, count);
}
}  // namespace

PreparedPiece PrepareBytePairEncode(const BpeRanks& ranks, std::string_view piece,
                                    const PieceCache* cache) {
  PreparedPiece prep;
  if (!IsLookedUp(ranks, piece.size())) return prep;
  if (cache && piece.size() <= PieceCache::kMaxShortPieceBytes) {
    prep.cached = cache->LookupShort(BpeRanks::Prefix8(piece), piece.size());
    if (prep.cached.count != 0) return prep;
  }
  if (cache && IsMid(piece.size())) cache->PrefetchMid(PieceCache::MidKeyOf(piece));
  prep.hash = BpeRanks::HashBytes(piece);
  ranks.PrefetchFind(prep.hash);
  if (cache) cache->Prefetch(prep.hash);
  return prep;
}

void FinishBytePairEncode(const BpeRanks& ranks, std::string_view piece, const PreparedPiece& prep,
                          std::vector<TokenId>* out, PieceCache* cache) {
  if (prep.cached.count != 0) {
    out->insert(out->end(), prep.cached.ids, prep.cached.ids + prep.cached.count);
    return;
  }
  if (piece.size() == 1) {
    out->push_back(ranks.ByteRank(static_cast<uint8_t>(piece[0])));
    return;
  }
  if (!IsLookedUp(ranks, piece.size())) {
    BytePairEncodeLong(ranks, piece, out);  // a long run: neither a token nor worth memoising
    return;
  }
  if (cache && IsMid(piece.size()) && cache->LookupMid(PieceCache::MidKeyOf(piece), out)) return;
  if (TokenId whole = ranks.Find(piece, prep.hash); whole != kNoRank) {
    if (cache) Memoise(piece, prep.hash, &whole, 1, cache);
    out->push_back(whole);
    return;
  }
  if (cache && cache->Lookup(prep.hash, piece, out)) return;
  size_t first = out->size();
  if (piece.size() <= kSmallPieceBytes) {
    BytePairEncodeSmall(ranks, piece, out);
  } else {
    BytePairEncodeLong(ranks, piece, out);
  }
  if (cache) Memoise(piece, prep.hash, out->data() + first, out->size() - first, cache);
}

void BytePairEncode(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out,
                    PieceCache* cache) {
  FinishBytePairEncode(ranks, piece, PrepareBytePairEncode(ranks, piece, nullptr), out, cache);
}

}  // namespace k3::text
