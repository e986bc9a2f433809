// The parsed form of a JSON Schema pattern (regex_parse.cc), for regex.cc (not part of the
// library's interface).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace k3::structured {

// Sorted, disjoint, non-adjacent inclusive code point ranges.
using CodeSet = std::vector<std::pair<uint32_t, uint32_t>>;

CodeSet Normalize(CodeSet s);
CodeSet Union(const CodeSet& a, const CodeSet& b);
CodeSet Complement(const CodeSet& s);  // over 0..U+10FFFF

struct RegexNode {
  enum Kind : uint8_t { kEmpty, kSet, kBol, kEol, kConcat, kAlt, kRepeat };
  Kind kind = kEmpty;
  CodeSet set;                      // kSet
  std::vector<RegexNode> children;  // kConcat, kAlt, kRepeat (one)
  int64_t min = 0, max = -1;        // kRepeat; max -1: unbounded
};

// INVALID_ARGUMENT "pattern ...: <what> is not supported" (or a syntax error, with its offset).
base::Result<RegexNode> ParseRegex(std::string_view pattern);

}  // namespace k3::structured
