// UTF-8 helpers shared by the tokenizer, detokenizer and protocol code. All functions are pure and
// thread-safe. "Invalid" follows Unicode's well-formed byte sequence table (no overlongs, no
// surrogates, nothing above U+10FFFF); replacement follows the "maximal subpart" practice that
// Python's bytes.decode(errors="replace") and tiktoken's decode use: one U+FFFD per maximal invalid
// subpart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace k3::base {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes one code point at the start of `bytes` (non-empty). Returns the number of bytes used.
// On an invalid or truncated sequence sets *cp = kReplacementChar, *valid = false and returns the
// length of the maximal invalid subpart (>= 1).
size_t DecodeUtf8(std::string_view bytes, char32_t* cp, bool* valid);

// Appends the UTF-8 encoding of `cp` (must be a scalar value) to `out`.
void AppendUtf8(char32_t cp, std::string* out);

// Offset of the first byte that is not part of a well-formed sequence, or bytes.size() when the
// whole of `bytes` is well-formed UTF-8.
size_t FindInvalidUtf8(std::string_view bytes);
inline bool IsValidUtf8(std::string_view bytes) { return FindInvalidUtf8(bytes) == bytes.size(); }

// Decodes with replacement: invalid subparts become U+FFFD, as Python's errors="replace".
std::string Utf8Replace(std::string_view bytes);

// The length of the longest prefix of `bytes` that does not end inside an incomplete but still
// possibly valid sequence. A streaming decoder emits this prefix and holds back the rest (at most
// 3 bytes). Invalid bytes are not held back: they can never become valid.
size_t CompleteUtf8PrefixLength(std::string_view bytes);

// Number of code points, counting each maximal invalid subpart as one.
size_t CountCodePoints(std::string_view bytes);

}  // namespace k3::base
