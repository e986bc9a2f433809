// Pre-tokenization: splits text into the pieces that byte-pair merging then encodes separately.
// Each supported pattern is a hand-written scanner that reproduces, piece for piece, what
// tiktoken's regex engine (leftmost-first alternation with backtracking) returns for that pattern;
// a regex engine would be several times slower. Input must be well-formed UTF-8. Thread-safe
// (stateless).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace k3::text {

enum class PretokenizerKind {
  kKimi,    // Kimi K2/K2.5/K3/Kimi-Linear: Han runs, case-split words, 1-3 digit groups
  kO200k,   // OpenAI o200k_base: case-split words, '/' joins the punctuation tail
  kCl100k,  // OpenAI cl100k_base: leading contractions, letter runs without marks
};

// The regex each kind implements, exactly as the reference tokenizers write it.
std::string_view PatternOf(PretokenizerKind kind);
// Maps a known regex string (or a name: "kimi", "o200k_base", "cl100k_base") to its kind.
bool PretokenizerKindFromName(std::string_view name_or_pattern, PretokenizerKind* kind);

// Returns the end (exclusive byte offset) of the piece starting at `pos` < text.size().
size_t NextPieceEnd(PretokenizerKind kind, std::string_view text, size_t pos);

// The same without the ASCII fast path: only the general matchers. For differential tests.
size_t NextPieceEndWithoutFastPath(PretokenizerKind kind, std::string_view text, size_t pos);

// Calls on_piece(begin, end) for every piece of `text`, in order.
template <typename OnPiece>
void ForEachPiece(PretokenizerKind kind, std::string_view text, OnPiece&& on_piece) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = NextPieceEnd(kind, text, pos);
    on_piece(pos, end);
    pos = end;
  }
}

// True when every split of `text` at `pos` is also a piece boundary of the whole text, so the two
// halves can be encoded independently with identical results. Proven per pattern (see .cc);
// conservative: false does not mean "not a boundary".
bool IsSafeSplitPoint(PretokenizerKind kind, std::string_view text, size_t pos);

}  // namespace k3::text
