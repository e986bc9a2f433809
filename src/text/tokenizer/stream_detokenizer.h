// StreamDetokenizer: turns ids into text one at a time for streaming responses. Emits only
// complete UTF-8 characters; bytes of a character split across tokens are held back (at most 3)
// until the rest arrives. Finish() flushes what is left as U+FFFD, so the concatenation of all
// outputs equals Tokenizer::Decode of all ids. Not thread-safe: one per stream.
#pragma once

#include <string>

#include "base/result.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::text {

class StreamDetokenizer {
 public:
  explicit StreamDetokenizer(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  // Appends the text that became complete with `id` to *text (possibly nothing).
  // OUT_OF_RANGE for an unknown id, leaving the stream unchanged.
  base::Status Push(TokenId id, std::string* text);
  // Appends the held-back bytes, replaced, to *text; the stream is then empty.
  void Finish(std::string* text);
  // Bytes held back waiting for the rest of a character.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;
};

}  // namespace k3::text
