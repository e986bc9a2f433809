// Prompt token ids exactly as the server computes them (chat rendering + tokenizer), with no
// engine: the Frontend prepares every request through these functions, and the router (which
// hashes the ids into cache blocks to find the warmest replica) calls the same ones.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "serve/chat_format.h"
#include "serve/generate_request.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::serve {

// Tokenizer ids as the engine's ids (same values).
std::vector<int32_t> ToEngineIds(const std::vector<text::TokenId>& ids);

// The ids of a rendered chat (segments encoded with or without specials, as rendered).
base::Result<std::vector<int32_t>> EncodeRenderedChat(const text::Tokenizer& tokenizer,
                                                      const RenderedChat& rendered);

// A completion prompt: given ids (checked against the vocabulary) or the text with specials.
base::Result<std::vector<int32_t>> EncodeCompletionPrompt(const text::Tokenizer& tokenizer,
                                                          const GenerateRequest& request);

// Either kind: renders request.chat with `format` when it is a chat request.
base::Result<std::vector<int32_t>> PromptIds(const text::Tokenizer& tokenizer,
                                             const ChatFormat& format,
                                             const GenerateRequest& request);

}  // namespace k3::serve
