// The context-limit decision as data, so each protocol words it in its own way (OpenAI's
// "maximum context length" message is the default; Anthropic's wordings live in src/api).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace k3::serve {

// A request that does not fit: `prompt` token ids (all of them, the generation opener included),
// the requested `max_tokens` (nullopt when not given), the `limit`; `prompt_alone`: the prompt
// leaves no room for any output (prompt >= limit), whatever max_tokens says.
struct ContextOverflow {
  int64_t prompt = 0;
  std::optional<int64_t> max_tokens;
  int64_t limit = 0;
  bool prompt_alone = false;
};

// nullopt when it fits: prompt < limit, and prompt + max_tokens <= limit when max_tokens is given.
std::optional<ContextOverflow> CheckContext(int64_t prompt, std::optional<int64_t> max_tokens,
                                            int64_t limit);

// "This model's maximum context length is L tokens. However, ..." (vLLM's wording).
std::string OpenAiContextMessage(const ContextOverflow& overflow);

}  // namespace k3::serve
