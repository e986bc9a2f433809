#include "text/output/text_util.h"

#include <nlohmann/json.hpp>

namespace k3::text::output {

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool IsAllSpace(std::string_view s) {
  for (char c : s) {
    if (!IsAsciiSpace(c)) return false;
  }
  return true;
}

void AppendJsonEscaped(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          *out += "\\u00";
          *out += kHex[(c >> 4) & 0xF];
          *out += kHex[c & 0xF];
        } else {
          *out += c;
        }
    }
  }
}

std::string JsonQuoted(std::string_view s) {
  std::string out = "\"";
  AppendJsonEscaped(s, &out);
  out += '"';
  return out;
}

bool IsJson(std::string_view s) { return nlohmann::json::accept(s.begin(), s.end()); }

}  // namespace k3::text::output
