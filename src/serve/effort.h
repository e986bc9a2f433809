// The reasoning-effort vocabulary every protocol accepts (OpenAI reasoning_effort, Kimi
// thinking.effort, Anthropic output_config.effort) and the one mapping onto what a chat family
// renders. The table (docs/frontend.md, "Effort"):
//
//   requested  none  minimal  low  medium  high  xhigh  max   (absent)
//   K3         off   low      low  high    high  max    max   max
//   Jinja      off   (the templates have no effort: thinking stays as requested)
//
// K3's official encoder renders only low, high and max (its note also names medium, which it
// refuses); medium is rounded up, as K3's own default is the highest level.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "serve/generate_request.h"

namespace k3::serve {

// "none", "minimal", "low", "medium", "high", "xhigh", "max": the accepted values, in order.
const std::vector<std::string>& EffortNames();

// What a family renders for a request's thinking options.
struct ResolvedThinking {
  bool enabled = true;                // false: no reasoning channel
  std::optional<bool> explicit_flag;  // Jinja: the template's `thinking` kwarg when decided
  std::string k3_effort = "max";      // K3: one of low, high, max
};

// thinking.enabled wins when false; effort "none" turns thinking off; an effort outside the
// vocabulary is left as given (the API layers reject it before, so the renderer reports it).
ResolvedThinking ResolveThinking(const ThinkingOptions& options);

}  // namespace k3::serve
