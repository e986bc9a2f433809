#include "text/jinja/py_str.h"

#include <algorithm>

#include "base/utf8.h"

namespace k3::text::jinja {
namespace {

struct CodePoint {
  char32_t cp;
  size_t begin;
  size_t len;
};

std::vector<CodePoint> Decode(std::string_view text) {
  std::vector<CodePoint> out;
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp;
    bool valid;
    size_t len = base::DecodeUtf8(text.substr(pos), &cp, &valid);
    out.push_back({valid ? cp : 0xDC00 + static_cast<unsigned char>(text[pos]), pos, len});
    pos += len;
  }
  return out;
}

char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
char ToUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

std::vector<std::string> SplitWhitespace(std::string_view text, int64_t maxsplit, bool from_right) {
  std::vector<CodePoint> cps = Decode(text);
  if (from_right) std::reverse(cps.begin(), cps.end());
  std::vector<std::string> parts;
  size_t i = 0;
  auto piece = [&](size_t a, size_t b) {  // [a, b) in cps order
    size_t lo = from_right ? cps[b - 1].begin : cps[a].begin;
    size_t hi = from_right ? cps[a].begin + cps[a].len : cps[b - 1].begin + cps[b - 1].len;
    return std::string(text.substr(lo, hi - lo));
  };
  while (i < cps.size()) {
    while (i < cps.size() && IsPySpace(cps[i].cp)) ++i;
    if (i == cps.size()) break;
    size_t start = i;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = cps.size();
      while (end > start && IsPySpace(cps[end - 1].cp)) --end;  // Python strips the remainder
      parts.push_back(piece(start, end));
      break;
    }
    while (i < cps.size() && !IsPySpace(cps[i].cp)) ++i;
    parts.push_back(piece(start, i));
  }
  if (from_right) std::reverse(parts.begin(), parts.end());
  return parts;
}

}  // namespace

bool IsPySpace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string_view PyStrip(std::string_view text, const std::string* chars, bool left, bool right) {
  std::vector<CodePoint> cps = Decode(text);
  std::vector<CodePoint> set = chars ? Decode(*chars) : std::vector<CodePoint>{};
  auto strip = [&](char32_t cp) {
    if (!chars) return IsPySpace(cp);
    return std::any_of(set.begin(), set.end(), [&](const CodePoint& c) { return c.cp == cp; });
  };
  size_t a = 0, b = cps.size();
  while (left && a < b && strip(cps[a].cp)) ++a;
  while (right && b > a && strip(cps[b - 1].cp)) --b;
  if (a == b) return {};
  return text.substr(cps[a].begin, cps[b - 1].begin + cps[b - 1].len - cps[a].begin);
}

base::Result<std::vector<std::string>> PySplit(std::string_view text, const std::string* sep,
                                               int64_t maxsplit, bool from_right) {
  if (!sep) return SplitWhitespace(text, maxsplit, from_right);
  if (sep->empty()) return base::InvalidArgument("empty separator");
  std::vector<std::string> parts;
  if (!from_right) {
    size_t pos = 0;
    for (size_t hit; (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) &&
                     (hit = text.find(*sep, pos)) != std::string_view::npos;
         pos = hit + sep->size()) {
      parts.emplace_back(text.substr(pos, hit - pos));
    }
    parts.emplace_back(text.substr(pos));
    return parts;
  }
  size_t end = text.size();
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    if (end < sep->size()) break;
    size_t hit = text.rfind(*sep, end - sep->size());
    if (hit == std::string_view::npos) break;
    parts.emplace_back(text.substr(hit + sep->size(), end - hit - sep->size()));
    end = hit;
  }
  parts.emplace_back(text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

base::Result<std::string> PyReplace(std::string_view text, std::string_view old_text,
                                    std::string_view new_text, int64_t count, size_t max_bytes) {
  std::string out;
  auto append = [&](std::string_view piece) {
    out.append(piece);
    return out.size() <= max_bytes;
  };
  bool ok = true;
  if (old_text.empty()) {  // Python inserts `new` before every character and at the end
    std::vector<CodePoint> cps = Decode(text);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size() && ok; ++i) {
      if (count < 0 || done < count) ok = append(new_text), ++done;
      if (i < cps.size()) ok = ok && append(text.substr(cps[i].begin, cps[i].len));
    }
  } else {
    size_t pos = 0;
    int64_t done = 0;
    for (size_t hit; ok && (count < 0 || done < count) &&
                     (hit = text.find(old_text, pos)) != std::string_view::npos;
         ++done) {
      ok = append(text.substr(pos, hit - pos)) && append(new_text);
      pos = hit + old_text.size();
    }
    ok = ok && append(text.substr(pos));
  }
  if (!ok) return base::ResourceExhausted("replace() result exceeds the size limit");
  return out;
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ToLower(c);
  return out;
}

std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ToUpper(c);
  return out;
}

std::string PyCapitalize(std::string_view text) {
  std::string out = AsciiLower(text);
  if (!out.empty()) out[0] = ToUpper(out[0]);
  return out;
}

std::string JinjaTitle(std::string_view text) {
  std::string out;
  bool word_start = true;
  for (char c : text) {
    bool boundary = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
                    c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    out.push_back(boundary ? c : word_start ? ToUpper(c) : ToLower(c));
    word_start = boundary;
  }
  return out;
}

}  // namespace k3::text::jinja
