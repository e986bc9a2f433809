#include "text/chat/k3_xtml.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/chat/k3_xtml_messages.h"
#include "text/chat/k3_xtml_writer.h"

namespace k3::text::chat {
namespace {

using k3_xtml::Field;
using k3_xtml::FieldPath;
using k3_xtml::Json;
using k3_xtml::OrderedMessage;
using k3_xtml::XtmlWriter;

constexpr std::string_view kToolsHeader =
    "# Tools\nHere are the available tools, described in JSONSchema.\n\n";
constexpr std::string_view kDynamicToolsHeader =
    "## New Tools Available\n"
    "The system dynamically extends the toolset via lazy-loading.\n"
    "You have access to all existing and extended tools.\n"
    "Here are the specs for the extended tools.\n\n";

// The tool-declare system message (tools sorted and compact); its body is not stripped.
base::Status RenderToolDeclare(const Json& tools, bool dynamic, XtmlWriter& writer) {
  K3_ASSIGN_OR_RETURN(std::string json, k3_xtml::PyJsonCompactSorted(tools));
  std::string body(dynamic ? kDynamicToolsHeader : kToolsHeader);
  body += "```json\n" + json + "\n```";
  writer.OpenTag("message", {{"role", "system"}, {"type", "tool-declare"}});
  writer.Text(body);
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

base::Status RenderThinkingEffort(const std::string& effort, XtmlWriter& writer) {
  if (effort != "low" && effort != "high" && effort != "max") {
    return base::InvalidArgument("unsupported thinking effort \"" + effort +
                                 "\"; supported values are high, low, max");
  }
  writer.InternalSystemMessage(
      "thinking-effort",
      "`thinking_effort` guides on how much to think in your thinking channel (not including the "
      "response channel), supported values include `low`, `medium`, `high`, and `max`.\n"
      "Now the system is invoked with `thinking_effort=" +
          effort + "`.");
  return base::Status::Ok();
}

// user and system messages: role, optional name, content.
base::Status RenderPlainMessage(const Json& message, size_t index, std::string_view role,
                                XtmlWriter& writer) {
  K3_ASSIGN_OR_RETURN(std::optional<std::string> name,
                      k3_xtml::OptionalString(message, "name", index));
  std::vector<k3_xtml::Attr> attrs = {{"role", role}};
  if (name && !name->empty()) attrs.emplace_back("name", *name);
  writer.OpenTag("message", attrs);
  K3_RETURN_IF_ERROR(k3_xtml::RenderContent(message, index, writer));
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

// A system message carrying a non-empty `tools` list declares them (dynamic form) instead.
base::Status RenderSystem(const Json& message, size_t index, XtmlWriter& writer) {
  const Json* tools = Field(message, "tools");
  if (tools != nullptr && !tools->is_null() && !tools->is_array()) {
    return base::InvalidArgument(FieldPath(index, "tools") + " must be a list or null");
  }
  if (tools != nullptr && !tools->is_null() && !tools->empty()) {
    return RenderToolDeclare(*tools, /*dynamic=*/true, writer);
  }
  return RenderPlainMessage(message, index, "system", writer);
}

// Tool results since the latest assistant message, numbered from 1 in render order.
struct ToolState {
  const Json* calls = nullptr;  // the latest assistant's tool_calls (validated when rendered)
  size_t results = 0;
};

// The tool a result is for: the call it was matched to by id, else its own `tool` (or, when that
// key is absent, `name`), else the latest assistant's call at the same position.
base::Result<std::string> ToolName(const Json& message, const OrderedMessage& entry,
                                   const ToolState& state) {
  if (entry.bound_tool) return *entry.bound_tool;
  const char* key = Field(message, "tool") != nullptr ? "tool" : "name";
  K3_ASSIGN_OR_RETURN(std::optional<std::string> own,
                      k3_xtml::OptionalString(message, key, entry.index));
  if (own) return *own;
  if (state.calls != nullptr && state.calls->is_array() && state.results <= state.calls->size()) {
    const Json& call = (*state.calls)[state.results - 1];
    const Json* function = call.is_object() ? Field(call, "function") : nullptr;
    if (function == nullptr) function = &call;
    const Json* name = function->is_object() ? Field(*function, "name") : nullptr;
    if (name != nullptr && name->is_string()) return name->get<std::string>();
  }
  return base::InvalidArgument(FieldPath(entry.index, "") +
                               ": a tool message needs a resolvable tool name (tool_call_id "
                               "matching a call, `tool`/`name`, or a preceding call by position)");
}

base::Status RenderToolResult(const Json& message, const OrderedMessage& entry, ToolState& state,
                              XtmlWriter& writer) {
  ++state.results;
  K3_ASSIGN_OR_RETURN(std::string tool, ToolName(message, entry, state));
  writer.OpenTag("message",
                 {{"role", "tool"}, {"tool", tool}, {"index", std::to_string(state.results)}});
  K3_RETURN_IF_ERROR(k3_xtml::RenderContent(message, entry.index, writer));
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

base::Status RenderAssistant(const Json& message, size_t index, bool thinking, ToolState& state,
                             XtmlWriter& writer) {
  const Json* calls = Field(message, "tool_calls");
  state.calls = (calls != nullptr && !calls->is_null()) ? calls : nullptr;
  state.results = 0;
  K3_ASSIGN_OR_RETURN(std::optional<std::string> name,
                      k3_xtml::OptionalString(message, "name", index));
  std::vector<k3_xtml::Attr> attrs = {{"role", "assistant"}};
  if (name && !name->empty()) attrs.emplace_back("name", *name);
  writer.OpenTag("message", attrs);
  K3_RETURN_IF_ERROR(k3_xtml::RenderAssistantBody(message, index, thinking, writer));
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

base::Status RenderConversation(const Json& messages, const K3RenderOptions& options,
                                XtmlWriter& writer) {
  K3_ASSIGN_OR_RETURN(std::vector<OrderedMessage> order, k3_xtml::OrderMessages(messages));
  ToolState state;
  for (const OrderedMessage& entry : order) {
    const Json& message = messages[entry.index];
    const std::string& role = message["role"].get_ref<const std::string&>();
    if (role == "user") {
      K3_RETURN_IF_ERROR(RenderPlainMessage(message, entry.index, "user", writer));
    } else if (role == "system") {
      K3_RETURN_IF_ERROR(RenderSystem(message, entry.index, writer));
    } else if (role == "tool") {
      K3_RETURN_IF_ERROR(RenderToolResult(message, entry, state, writer));
    } else if (role == "assistant") {
      K3_RETURN_IF_ERROR(RenderAssistant(message, entry.index, options.thinking, state, writer));
    } else {
      return base::InvalidArgument(FieldPath(entry.index, "role") + " \"" + role +
                                   "\" is not one of system, user, assistant, tool");
    }
  }
  return base::Status::Ok();
}

}  // namespace

base::Result<ChatSegments> RenderK3(const nlohmann::ordered_json& messages,
                                    const K3RenderOptions& options) {
  XtmlWriter writer(options.image_prompts ? &*options.image_prompts : nullptr);
  if (options.tools != nullptr && !options.tools->is_null()) {
    if (!options.tools->is_array()) return base::InvalidArgument("tools must be a list or null");
    if (!options.tools->empty()) {
      K3_RETURN_IF_ERROR(RenderToolDeclare(*options.tools, /*dynamic=*/false, writer));
    }
  }
  if (options.thinking && options.thinking_effort) {
    K3_RETURN_IF_ERROR(RenderThinkingEffort(*options.thinking_effort, writer));
  }
  K3_RETURN_IF_ERROR(RenderConversation(messages, options, writer));
  K3_RETURN_IF_ERROR(k3_xtml::RenderRequestNotes(options, writer));
  if (options.add_generation_prompt) {
    // The assistant message is left open: the model continues it in the chosen channel.
    writer.OpenTag("message", {{"role", "assistant"}});
    writer.OpenTag(options.thinking ? "think" : "response");
  }
  K3_RETURN_IF_ERROR(writer.CheckImagesConsumed());
  return writer.Take();
}

}  // namespace k3::text::chat
