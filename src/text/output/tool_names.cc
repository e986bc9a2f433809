#include "text/output/tool_names.h"

#include "text/output/text_util.h"

namespace k3::text::output {
namespace {

constexpr std::string_view kDotPrefix = "functions.";
constexpr std::string_view kUnderscorePrefix = "functions_";
constexpr std::string_view kBarePrefix = "functions";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view StripTrailingDigits(std::string_view s) {
  while (!s.empty() && IsDigit(s.back())) s.remove_suffix(1);
  return s;
}

// "x_12" -> "x"; anything else unchanged.
std::string_view StripUnderscoreIndex(std::string_view s) {
  std::string_view t = StripTrailingDigits(s);
  if (t.size() < s.size() && t.size() > 1 && t.back() == '_') return t.substr(0, t.size() - 1);
  return s;
}

// The id without surrounding whitespace and without a trailing ":digits" (or bare ':').
std::string_view IdBase(std::string_view raw_id) {
  std::string_view s = TrimAscii(raw_id);
  size_t colon = s.rfind(':');
  if (colon != std::string_view::npos &&
      StripTrailingDigits(TrimAscii(s.substr(colon + 1))).empty()) {
    s = TrimAscii(s.substr(0, colon));
  }
  return s;
}

}  // namespace

bool IsPlausibleToolName(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

ToolNames::ToolNames(const std::vector<std::string>& declared, bool accept_undeclared)
    : declared_(declared.begin(), declared.end()), accept_undeclared_(accept_undeclared) {}

bool ToolNames::Declared(std::string_view name) const {
  return !name.empty() && declared_.count(std::string(name)) > 0;
}

std::optional<std::string> ToolNames::FromK2Id(std::string_view raw_id) const {
  std::string_view base = IdBase(raw_id);
  std::string_view unprefixed = base;
  if (base.starts_with(kDotPrefix)) unprefixed = base.substr(kDotPrefix.size());
  std::string_view candidates[7];
  int n = 0;
  candidates[n++] = unprefixed;
  candidates[n++] = base;
  size_t dot = base.rfind('.');
  if (dot != std::string_view::npos) candidates[n++] = base.substr(dot + 1);
  if (base.starts_with(kUnderscorePrefix)) {
    std::string_view rest = base.substr(kUnderscorePrefix.size());
    candidates[n++] = StripUnderscoreIndex(rest);
    candidates[n++] = rest;
  } else if (base.starts_with(kBarePrefix)) {
    candidates[n++] = StripTrailingDigits(base.substr(kBarePrefix.size()));
  }
  candidates[n++] = StripUnderscoreIndex(base);
  for (int i = 0; i < n; ++i) {
    if (Declared(candidates[i])) return std::string(candidates[i]);
  }
  if (accept_undeclared_ && IsPlausibleToolName(unprefixed)) return std::string(unprefixed);
  return std::nullopt;
}

std::optional<std::string> ToolNames::FromK3Name(std::string_view name) const {
  std::string_view trimmed = TrimAscii(name);
  if (Declared(trimmed)) return std::string(trimmed);
  if (trimmed.starts_with(kDotPrefix) && Declared(trimmed.substr(kDotPrefix.size()))) {
    return std::string(trimmed.substr(kDotPrefix.size()));
  }
  if (accept_undeclared_ && IsPlausibleToolName(trimmed)) return std::string(trimmed);
  return std::nullopt;
}

}  // namespace k3::text::output
