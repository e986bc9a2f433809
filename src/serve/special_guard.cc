#include "serve/special_guard.h"

#include <cstdio>
#include <cstring>

namespace k3::serve {
namespace {

constexpr char kOpen[] = "\xEE\x80\x80";   // U+E000, starts a placeholder
constexpr char kClose[] = "\xEE\x80\x81";  // U+E001, ends it

}  // namespace

SpecialGuard::SpecialGuard(const text::SpecialTokens& specials, uint64_t nonce)
    : specials_(specials) {
  char hex[20];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(nonce));
  prefix_ = std::string(kOpen) + hex + ":";
}

std::string SpecialGuard::ShieldString(const std::string& text) {
  auto match = specials_.FindNext(text, 0);
  if (!match) return text;
  std::string out;
  size_t done = 0;
  for (; match; match = specials_.FindNext(text, done)) {
    out.append(text, done, match->begin - done);
    out += prefix_ + std::to_string(originals_.size()) + kClose;
    originals_.push_back(text.substr(match->begin, match->end - match->begin));
    done = match->end;
  }
  out.append(text, done);
  return out;
}

Json SpecialGuard::Shield(const Json& value) {
  if (value.is_string()) return ShieldString(value.get<std::string>());
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& item : value) out.push_back(Shield(item));
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      out[ShieldString(it.key())] = Shield(it.value());
    }
    return out;
  }
  return value;
}

text::chat::ChatSegments SpecialGuard::Split(const std::string& rendered) const {
  text::chat::ChatSegments segments;
  auto template_text = [&](std::string piece) {
    if (piece.empty()) return;
    if (!segments.empty() && segments.back().allow_special) {
      segments.back().text += piece;
    } else {
      segments.push_back({std::move(piece), /*allow_special=*/true});
    }
  };
  size_t done = 0;
  while (!originals_.empty()) {
    const size_t at = rendered.find(prefix_, done);
    if (at == std::string::npos) break;
    const size_t digits = at + prefix_.size();
    const size_t close = rendered.find(kClose, digits);
    size_t index = originals_.size();
    if (close != std::string::npos && close > digits && close - digits < 10 &&
        rendered.find_first_not_of("0123456789", digits) == close) {
      index = std::stoul(rendered.substr(digits, close - digits));
    }
    if (index >= originals_.size()) {  // mangled by the template: leave it as text
      template_text(rendered.substr(done, digits - done));
      done = digits;
      continue;
    }
    template_text(rendered.substr(done, at - done));
    segments.push_back({originals_[index], /*allow_special=*/false});
    done = close + std::strlen(kClose);
  }
  template_text(rendered.substr(done));
  if (segments.empty()) segments.push_back({"", /*allow_special=*/true});
  return segments;
}

}  // namespace k3::serve
