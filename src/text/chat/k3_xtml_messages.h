// Internal to the K3 renderer: message-level pieces (field access with typed errors, content,
// assistant bodies, and the tool-result re-sorting the encoder applies before rendering).
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

// A string field that may be absent or null (nullopt); INVALID_ARGUMENT for any other type.
base::Result<std::optional<std::string>> OptionalString(const Json& message, const char* key,
                                                        size_t index);

// One message in render order. `bound_tool` is set for a tool result matched to an assistant
// call by id: the matched call's function name overrides the message's own `tool`/`name`.
struct OrderedMessage {
  size_t index;  // position in the request's messages array
  std::optional<std::string> bound_tool;
};

// Checks the messages' shape (an array of objects, each with a string role) and re-sorts each run
// of consecutive tool results into call order when every result in the run matches a call of the
// latest assistant message by tool_call_id (else the run keeps its order). Stable.
base::Result<std::vector<OrderedMessage>> OrderMessages(const Json& messages);

// A message's content: a string, a list of text/image parts, or absent/null (nothing).
base::Status RenderContent(const Json& message, size_t index, XtmlWriter& writer);

// The inside of an assistant message: [think], response, [tools with one call per tool_call].
base::Status RenderAssistantBody(const Json& message, size_t index, bool thinking,
                                 XtmlWriter& writer);

// The notes rendered after the conversation: tool-choice ("required"/"none" only) then
// response-format (json_object, or json_schema with the sorted schema). Defined in
// k3_xtml_options.cc.
base::Status RenderRequestNotes(const K3RenderOptions& options, XtmlWriter& writer);

}  // namespace k3::text::chat::k3_xtml
