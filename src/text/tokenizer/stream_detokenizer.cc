#include "text/tokenizer/stream_detokenizer.h"

#include "base/utf8.h"

namespace k3::text {

base::Status StreamDetokenizer::Push(TokenId id, std::string* text) {
  K3_ASSIGN_OR_RETURN(std::string_view bytes, tokenizer_.TokenBytes(id));
  pending_.append(bytes);
  size_t complete = base::CompleteUtf8PrefixLength(pending_);
  if (complete == 0) return base::Status::Ok();
  std::string_view ready(pending_.data(), complete);
  if (base::IsValidUtf8(ready)) {
    text->append(ready);
  } else {
    text->append(base::Utf8Replace(ready));
  }
  pending_.erase(0, complete);
  return base::Status::Ok();
}

void StreamDetokenizer::Finish(std::string* text) {
  if (!pending_.empty()) text->append(base::Utf8Replace(pending_));
  pending_.clear();
}

}  // namespace k3::text
