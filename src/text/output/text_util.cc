#include "text/output/text_util.h"

#include <nlohmann/json.hpp>

#include "text/jinja/py_format.h"

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
  // The escaping of Python's json.dumps (shared with the Jinja engine), without the quotes.
  std::string quoted;
  jinja::AppendJsonString(s, /*ensure_ascii=*/false, &quoted);
  out->append(quoted, 1, quoted.size() - 2);
}

std::string JsonQuoted(std::string_view s) {
  std::string out = "\"";
  AppendJsonEscaped(s, &out);
  out += '"';
  return out;
}

bool IsJson(std::string_view s) { return nlohmann::json::accept(s.begin(), s.end()); }

}  // namespace k3::text::output
