// Internal string helpers for the output parsers (ASCII whitespace, JSON string escaping).
#pragma once

#include <string>
#include <string_view>

namespace k3::text::output {

// Space, \t, \n, \r, \f, \v (what Python's \s matches in ASCII text).
inline bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
std::string_view TrimAscii(std::string_view s);
bool IsAllSpace(std::string_view s);

// Appends `s` (valid UTF-8) escaped for the inside of a JSON string: '"', '\\' and control
// characters are escaped; everything else is copied.
void AppendJsonEscaped(std::string_view s, std::string* out);
// `s` as a complete JSON string literal.
std::string JsonQuoted(std::string_view s);
// Whether `s` is one JSON value (RFC 8259, surrounding whitespace allowed).
bool IsJson(std::string_view s);

}  // namespace k3::text::output
