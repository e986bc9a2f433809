#include "serve/effort.h"

#include <array>
#include <string_view>
#include <utility>

namespace k3::serve {
namespace {

// requested -> K3 level; "none" has no level (thinking off).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kK3Levels = {{
    {"minimal", "low"},
    {"low", "low"},
    {"medium", "high"},
    {"high", "high"},
    {"xhigh", "max"},
    {"max", "max"},
}};

}  // namespace

const std::vector<std::string>& EffortNames() {
  static const std::vector<std::string> names = {"none", "minimal", "low", "medium",
                                                 "high", "xhigh",   "max"};
  return names;
}

ResolvedThinking ResolveThinking(const ThinkingOptions& options) {
  ResolvedThinking out;
  out.explicit_flag = options.enabled;
  if (options.effort == "none") out.explicit_flag = false;
  out.enabled = out.explicit_flag.value_or(true);
  if (!options.effort || *options.effort == "none") return out;
  out.k3_effort = *options.effort;  // unknown: kept, so the renderer names it in its 400
  for (const auto& [requested, level] : kK3Levels) {
    if (requested == *options.effort) out.k3_effort = std::string(level);
  }
  return out;
}

}  // namespace k3::serve
