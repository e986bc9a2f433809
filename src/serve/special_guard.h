// The defence against control-token injection for Jinja-rendered chats (K2 family). A template
// renders request text (messages, tools, kwargs) into one string; encoded with specials on, a
// "<|im_end|>" typed by a user would become the control id. SpecialGuard swaps every special-token
// string inside the request's JSON strings for a placeholder before rendering (a private-use
// character, a per-render random nonce, an index: nothing a template filter alters, nothing a
// client can forge), then splits the rendered text at the placeholders: template text stays a
// specials-on segment, each swapped string becomes a specials-off segment, so it is encoded as
// ordinary tokens. Text without special-token strings is untouched, one segment, so its ids are
// exactly what Moonshot's tokenizer gives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "serve/generate_request.h"
#include "text/chat/segment.h"
#include "text/tokenizer/special_tokens.h"

namespace k3::serve {

class SpecialGuard {
 public:
  // `specials` must outlive the guard. `nonce` makes the placeholders unguessable.
  SpecialGuard(const text::SpecialTokens& specials, uint64_t nonce);

  // A copy of `value` with each special-token string in its strings (keys included) swapped.
  Json Shield(const Json& value);
  // The rendered text, split at the placeholders Shield wrote (see the header comment).
  text::chat::ChatSegments Split(const std::string& rendered) const;
  bool swapped_any() const { return !originals_.empty(); }

 private:
  std::string ShieldString(const std::string& text);

  const text::SpecialTokens& specials_;
  std::string prefix_;                  // U+E000 + hex nonce + ":"
  std::vector<std::string> originals_;  // by placeholder index
};

}  // namespace k3::serve
