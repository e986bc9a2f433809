// Constrained decoding for chat requests: decides from the request whether the reply must follow a
// grammar — response_format json_object / json_schema, tool_choice required / named / none, or a
// strict tool — and builds it (reasoning first, unconstrained; then content or tool calls in the
// checkpoint's syntax). Grammars are cached by everything they depend on, so a repeated schema
// or tool list reuses its compiled grammar and its warm masks.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/result.h"
#include "serve/chat_format.h"
#include "serve/generate_request.h"
#include "structured/grammar.h"
#include "structured/vocabulary.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::serve {

// The structured-output view of a tokenizer: its ranks as ordinary tokens and its named specials,
// over `logits_width` ids (the model's vocabulary size; specials at or past it are left out).
std::shared_ptr<const structured::Vocabulary> StructuredVocabulary(const text::Tokenizer& tokenizer,
                                                                   int64_t logits_width);

class ChatConstraints {
 public:
  // `logits_width` is the model's vocabulary size (ids at or above the tokenizer's are never
  // allowed). The vocabulary index is built on first use (~0.2 s for Kimi's 163,840 ids).
  ChatConstraints(const text::Tokenizer* tokenizer, int64_t logits_width, int32_t eos_token_id);

  // Null when the request needs no grammar. INVALID_ARGUMENT naming the field and keyword when
  // a schema uses something the matcher cannot enforce.
  base::Result<std::shared_ptr<const structured::Grammar>> ForChat(
      const ChatRequest& request, const RenderedChat& rendered, text::output::OutputFormat format,
      const std::vector<int32_t>& stop_token_ids);

  size_t cached_grammars() const;

 private:
  std::shared_ptr<const structured::Vocabulary> vocabulary();

  const text::Tokenizer* tokenizer_;
  int64_t logits_width_;
  int32_t eos_;
  std::once_flag vocab_once_;
  std::shared_ptr<const structured::Vocabulary> vocab_;

  static constexpr size_t kCacheCapacity = 256;
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const structured::Grammar>,
                                            std::list<std::string>::iterator>>
      cache_;
};

}  // namespace k3::serve
