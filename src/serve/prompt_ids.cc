#include "serve/prompt_ids.h"

#include <string>

namespace k3::serve {
std::vector<int32_t> ToEngineIds(const std::vector<text::TokenId>& ids) {
  return std::vector<int32_t>(ids.begin(), ids.end());
}

base::Result<std::vector<int32_t>> EncodeRenderedChat(const text::Tokenizer& tokenizer,
                                                      const RenderedChat& rendered) {
  std::vector<text::Segment> segments;
  segments.reserve(rendered.segments.size());
  for (const auto& segment : rendered.segments) {
    segments.push_back({segment.text, segment.allow_special});
  }
  K3_ASSIGN_OR_RETURN(auto ids, rendered.join_segments ? tokenizer.EncodeSegmentsJoined(segments)
                                                       : tokenizer.EncodeSegments(segments));
  return ToEngineIds(ids);
}

base::Result<std::vector<int32_t>> EncodeCompletionPrompt(const text::Tokenizer& tokenizer,
                                                          const GenerateRequest& request) {
  if (request.prompt_ids.empty()) {
    K3_ASSIGN_OR_RETURN(auto ids, tokenizer.Encode(request.prompt, text::SpecialMode::kAll));
    return ToEngineIds(ids);
  }
  const auto vocab = static_cast<int32_t>(tokenizer.vocab_size());
  for (int32_t id : request.prompt_ids) {
    if (id < 0 || id >= vocab) {
      return base::InvalidArgument("prompt token id " + std::to_string(id) +
                                   " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  return request.prompt_ids;
}

base::Result<std::vector<int32_t>> PromptIds(const text::Tokenizer& tokenizer,
                                             const ChatFormat& format,
                                             const GenerateRequest& request) {
  if (!request.chat) return EncodeCompletionPrompt(tokenizer, request);
  K3_ASSIGN_OR_RETURN(RenderedChat rendered, format.Render(*request.chat, &tokenizer.specials()));
  return EncodeRenderedChat(tokenizer, rendered);
}

}  // namespace k3::serve
