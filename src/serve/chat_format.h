// How one checkpoint's chat prompts are rendered and its outputs read. Two families:
//  - K3 ("XTML", model_type kimi_k3): the native renderer (text/chat/k3_xtml.h), segment-wise
//    with user text encoded with specials off; usage.prompt_tokens excludes the 3-token opener.
//  - Jinja (K2-Instruct, K2-Thinking, K2.5/K2.6, Kimi-Linear): the checkpoint's chat template
//    (text/chat/jinja_chat.h, incl. the TypeScript tool declarations), encoded as one text with
//    specials recognised, which is what Moonshot's tokenizer does (id parity with the reference).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "serve/generate_request.h"
#include "text/chat/jinja_chat.h"
#include "text/chat/segment.h"
#include "text/output/output_parser.h"
#include "text/tokenizer/special_tokens.h"

namespace k3::serve {

enum class ChatFamily { kK3, kJinja };

struct RenderedChat {
  text::chat::ChatSegments segments;
  int opener_tokens = 0;             // generation-opener tokens not counted in prompt_tokens
  bool starts_in_reasoning = false;  // the prompt ends inside a reasoning block
  bool thinking = true;              // reasoning enabled (false: everything is content)
  // Ordinary text runs across segments are tokenized as one (Tokenizer::EncodeSegmentsJoined):
  // a Jinja render is one text to the reference tokenizer; K3's pieces are tokenized apart.
  bool join_segments = false;
};

class ChatFormat {
 public:
  // Reads config.json's model_type and, for the Jinja family, the checkpoint's chat template.
  static base::Result<ChatFormat> FromCheckpoint(const std::string& dir);
  static ChatFormat K3() { return ChatFormat(ChatFamily::kK3); }

  ChatFamily family() const { return family_; }
  text::output::OutputFormat output_format() const;
  // Renders a typed chat request. INVALID_ARGUMENT for what the family's renderer rejects.
  // `specials`: the tokenizer's control tokens, kept out of the request's text (Jinja family,
  // serve/special_guard.h); null renders the whole text as one specials-on segment (the
  // reference's behaviour, for benchmarks).
  base::Result<RenderedChat> Render(const ChatRequest& request,
                                    const text::SpecialTokens* specials = nullptr) const;

 private:
  explicit ChatFormat(ChatFamily family) : family_(family) {}
  base::Result<RenderedChat> RenderK3(const ChatRequest& request) const;
  base::Result<RenderedChat> RenderJinja(const ChatRequest& request,
                                         const text::SpecialTokens* specials) const;

  ChatFamily family_;
  std::shared_ptr<const text::chat::JinjaChatTemplate> jinja_;
};

}  // namespace k3::serve
