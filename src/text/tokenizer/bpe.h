// Byte-pair merging of one pre-tokenized piece, with tiktoken's exact rule: repeatedly merge the
// adjacent pair whose concatenation has the lowest rank (the leftmost on ties) until no adjacent
// pair is a token. Short pieces use tiktoken's array scan (O(n^2) but fastest for n <= 24);
// longer ones a bucket queue over ranks (O(1) per merge in practice, O(n log n) at worst), so a
// 1 MB piece is no slower per byte than a word.
// Thread-safe (no shared state).
#pragma once

#include <string_view>
#include <vector>

#include "text/tokenizer/bpe_ranks.h"
#include "text/tokenizer/piece_cache.h"

namespace k3::text {

// Appends the tokens of `piece` (non-empty) to `out`, memoising merged pieces in `cache` if given.
void BytePairEncode(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out,
                    PieceCache* cache = nullptr);

// BytePairEncode in two steps, for callers that pipeline pieces: Prepare answers short pieces
// from the cache's short table, or hashes the piece and starts loading its vocabulary-index and
// cache slots (both usually miss the CPU caches); Finish, called a few pieces later with what
// Prepare returned, does the rest without waiting on memory. Finish(Prepare(p)) ==
// BytePairEncode(p).
struct PreparedPiece {
  uint64_t hash = 0;            // BpeRanks::HashBytes(piece) when the piece is looked up
  PieceCache::ShortIds cached;  // the piece's tokens, when the short table knew them
};
PreparedPiece PrepareBytePairEncode(const BpeRanks& ranks, std::string_view piece,
                                    const PieceCache* cache);
void FinishBytePairEncode(const BpeRanks& ranks, std::string_view piece, const PreparedPiece& prep,
                          std::vector<TokenId>* out, PieceCache* cache);

// The algorithms, exposed so tests can check they agree on any input. The small one takes pieces
// of 2..kMaxSmallPieceBytes bytes; the others any length >= 2. The tree (a min segment tree over
// positions, O(n log n) always) is the long one's fallback for inputs that defeat its batching.
inline constexpr size_t kMaxSmallPieceBytes = 24;
void BytePairEncodeSmall(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out);
// `used_tree` (optional) tells whether the piece defeated the batching and went to the tree.
void BytePairEncodeLong(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out,
                        bool* used_tree = nullptr);
void BytePairEncodeTree(const BpeRanks& ranks, std::string_view piece, std::vector<TokenId>* out);

}  // namespace k3::text
