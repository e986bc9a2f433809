// StringDfa: a deterministic automaton over Unicode code points that a JSON string's decoded
// characters must follow (JSON Schema `pattern` and `format`, with minLength / maxLength folded
// in). Written here rather than taken from a regex library: std::regex, RE2 and PCRE match whole
// strings, none hands out a small DFA whose states can be stepped one decoded character at a time
// inside a string frame, cached as mask keys, and asked "can this still finish?" — which is what a
// token mask needs.
//
// Invariant (after Finish): every state can reach an accepting one (dead states are removed, a
// transition into one is -1), so a string frame that keeps the DFA in a state never dead-ends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace k3::structured {

inline constexpr uint32_t kCodePointEnd = 0x110000;

struct StringDfa {
  // Class k holds the code points [starts[k], starts[k+1]) (the last one up to kCodePointEnd).
  std::vector<uint32_t> starts = {0};
  std::vector<int32_t> next;  // next[state * classes() + k]: the next state, or -1
  std::vector<uint8_t> accepting;
  std::vector<int32_t> distance;  // characters from a state to the nearest accepting state
  std::vector<uint32_t> toward;   // a code point one step nearer acceptance (distance > 0)
  int32_t start = -1;             // -1: nothing matches

  size_t classes() const { return starts.size(); }
  size_t states() const { return accepting.size(); }
  int32_t Class(uint32_t cp) const;
  int32_t Next(int32_t state, uint32_t cp) const;
  // True if some code point in [lo, hi] (surrogates excluded) leads from `state` somewhere.
  bool AnyLive(int32_t state, uint32_t lo, uint32_t hi) const;
  // Whether the whole code-point string is accepted.
  bool Matches(const std::u32string& text) const;
  // Removes the states that cannot reach acceptance and fills distance / toward.
  void Finish();
};

// A pattern (ECMA-262 as JSON Schema uses it: an unanchored search) as a DFA. INVALID_ARGUMENT
// naming what is unsupported (backreferences, lookaround, \b, flags groups, ...) or too large.
base::Result<StringDfa> CompilePattern(std::string_view pattern);
// A `format` value as a DFA (string_formats.cc); NOT_FOUND for a format we do not know.
base::Result<StringDfa> CompileFormat(std::string_view format);
// Strings accepted by both (INVALID_ARGUMENT if the product is too large).
base::Result<StringDfa> IntersectDfa(const StringDfa& a, const StringDfa& b);
// Any string of min_length..max_length code points (max_length -1: unbounded).
StringDfa LengthDfa(int64_t min_length, int64_t max_length);
// UTF-8 decoded to code points (the input is valid UTF-8).
std::u32string DecodeUtf8(std::string_view utf8);

}  // namespace k3::structured
