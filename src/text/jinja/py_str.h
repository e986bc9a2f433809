// Python str methods on UTF-8 text, shared by the string methods and the filters. Whitespace is
// Python's str.isspace() set (ASCII and Unicode separators); case mapping is ASCII only.
// Functions that can grow text take `max_bytes` and fail with RESOURCE_EXHAUSTED beyond it.
// Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace k3::text::jinja {

bool IsPySpace(char32_t cp);

// Concatenates pieces; used for messages instead of `"'" + s + "'"` chains, on which GCC 12
// reports false -Wrestrict errors.
inline std::string Cat(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (std::string_view piece : pieces) out.append(piece);
  return out;
}

// str.strip/lstrip/rstrip: `chars` null means whitespace; otherwise any of its code points.
std::string_view PyStrip(std::string_view text, const std::string* chars, bool left, bool right);

// str.split(sep, maxsplit) (rsplit when `from_right`); a null `sep` splits on whitespace runs
// and drops empty parts. An empty `sep` is an error.
base::Result<std::vector<std::string>> PySplit(std::string_view text, const std::string* sep,
                                               int64_t maxsplit, bool from_right);

// str.replace(old, new, count); count < 0 replaces all.
base::Result<std::string> PyReplace(std::string_view text, std::string_view old_text,
                                    std::string_view new_text, int64_t count, size_t max_bytes);

std::string AsciiLower(std::string_view text);
std::string AsciiUpper(std::string_view text);
// str.capitalize(): first character upper case, the rest lower case.
std::string PyCapitalize(std::string_view text);
// Jinja's `title` filter: upper-case the first letter after start, whitespace, - ( { [ or <.
std::string JinjaTitle(std::string_view text);

}  // namespace k3::text::jinja
