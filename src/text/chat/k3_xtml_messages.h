// Internal to the K3 renderer: message-level pieces (content, assistant bodies, and the
// tool-result re-sorting the encoder applies before rendering), over the typed conversation.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "text/chat/k3_xtml.h"
#include "text/chat/k3_xtml_writer.h"

namespace k3::text::chat::k3_xtml {

// The member `key` of an object, or null when absent (`object` must be an object).
const Json* Field(const Json& object, const char* key);

// One message in render order. `bound_tool` is set for a tool result matched to an assistant
// call by id: the matched call's function name overrides the message's own `tool`/`name`.
struct OrderedMessage {
  size_t index;  // position in the conversation's messages
  std::optional<std::string> bound_tool;
};

// Re-sorts each run of consecutive tool results into call order when every result in the run
// matches a call of the latest assistant message by tool_call_id (else the run keeps its order).
// Stable.
std::vector<OrderedMessage> OrderMessages(const std::vector<Message>& messages);

// A message's content: a string, a list of text/image parts, or absent/null (nothing). A video
// part is INVALID_ARGUMENT (the encoder reads its missing text).
base::Status RenderContent(const Content& content, size_t index, XtmlWriter& writer);

// The inside of an assistant message: [think], response, [tools with one call per tool_call].
base::Status RenderAssistantBody(const Message& message, size_t index, bool thinking,
                                 XtmlWriter& writer);

// INVALID_ARGUMENT unless the effort is one the encoder accepts (low, high, max).
base::Status CheckThinkingEffort(const std::string& effort);

// The notes rendered after the conversation: tool-choice ("required"/"none" only) then
// response-format (json_object, or json_schema with the sorted schema). Defined in
// k3_xtml_options.cc.
base::Status RenderRequestNotes(const K3RenderSettings& settings, XtmlWriter& writer);

}  // namespace k3::text::chat::k3_xtml
