#include "text/output/xtml_tag.h"

#include <array>

#include "text/output/text_util.h"

namespace k3::text::output {
namespace {

bool IsNameChar(char c) { return !IsAsciiSpace(c) && c != '=' && c != '"'; }

void SkipSpace(std::string_view s, size_t* i) {
  while (*i < s.size() && IsAsciiSpace(s[*i])) ++*i;
}

std::string_view ReadName(std::string_view s, size_t* i) {
  size_t start = *i;
  while (*i < s.size() && IsNameChar(s[*i])) ++*i;
  return s.substr(start, *i - start);
}

}  // namespace

const std::string* XtmlTag::Find(std::string_view key) const {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<XtmlTag> ParseXtmlTag(std::string_view header) {
  XtmlTag tag;
  size_t i = 0;
  SkipSpace(header, &i);
  tag.name = std::string(ReadName(header, &i));
  if (tag.name.empty()) return std::nullopt;
  for (;;) {
    SkipSpace(header, &i);
    if (i == header.size()) return tag;
    std::string_view key = ReadName(header, &i);
    if (key.empty()) return std::nullopt;
    SkipSpace(header, &i);
    if (i == header.size() || header[i] != '=') return std::nullopt;
    ++i;
    SkipSpace(header, &i);
    if (i == header.size() || header[i] != '"') return std::nullopt;
    size_t close = header.find('"', i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    tag.attrs.emplace_back(std::string(key), UnescapeXtmlAttr(header.substr(i + 1, close - i - 1)));
    i = close + 1;
  }
}

std::string UnescapeXtmlAttr(std::string_view value) {
  static constexpr std::array<std::pair<std::string_view, char>, 6> kEntities = {{
      {"&amp;", '&'},
      {"&quot;", '"'},
      {"&lt;", '<'},
      {"&gt;", '>'},
      {"&apos;", '\''},
      {"&#39;", '\''},
  }};
  std::string out;
  out.reserve(value.size());
  size_t i = 0;
  while (i < value.size()) {
    bool replaced = false;
    if (value[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (value.substr(i, entity.size()) == entity) {
          out += c;
          i += entity.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += value[i++];
  }
  return out;
}

}  // namespace k3::text::output
