#include "serve/context_limit.h"

namespace k3::serve {

std::optional<ContextOverflow> CheckContext(int64_t prompt, std::optional<int64_t> max_tokens,
                                            int64_t limit) {
  const bool prompt_alone = prompt >= limit;
  if (!prompt_alone && !(max_tokens && prompt + *max_tokens > limit)) return std::nullopt;
  return ContextOverflow{
      .prompt = prompt, .max_tokens = max_tokens, .limit = limit, .prompt_alone = prompt_alone};
}

std::string OpenAiContextMessage(const ContextOverflow& overflow) {
  const std::string head =
      "This model's maximum context length is " + std::to_string(overflow.limit) + " tokens. ";
  if (overflow.prompt_alone || !overflow.max_tokens) {
    return head + "However, your prompt has " + std::to_string(overflow.prompt) + " tokens.";
  }
  return head + "However, you requested " + std::to_string(overflow.prompt + *overflow.max_tokens) +
         " tokens (" + std::to_string(overflow.prompt) + " in the prompt, " +
         std::to_string(*overflow.max_tokens) + " for the completion).";
}

}  // namespace k3::serve
