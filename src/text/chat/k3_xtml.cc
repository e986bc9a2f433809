#include "text/chat/k3_xtml.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/chat/conversation_json.h"
#include "text/chat/k3_xtml_messages.h"
#include "text/chat/k3_xtml_writer.h"

namespace k3::text::chat {
namespace {

using k3_xtml::FieldPath;
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
base::Status RenderToolDeclare(const std::vector<Tool>& tools, bool dynamic, XtmlWriter& writer) {
  K3_ASSIGN_OR_RETURN(std::string json, k3_xtml::PyJsonCompactSorted(ToolsToJson(tools)));
  std::string body(dynamic ? kDynamicToolsHeader : kToolsHeader);
  body += "```json\n" + json + "\n```";
  writer.OpenTag("message", {{"role", "system"}, {"type", "tool-declare"}});
  writer.Text(body);
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

base::Status RenderThinkingEffort(const std::string& effort, XtmlWriter& writer) {
  K3_RETURN_IF_ERROR(k3_xtml::CheckThinkingEffort(effort));
  writer.InternalSystemMessage(
      "thinking-effort",
      "`thinking_effort` guides on how much to think in your thinking channel (not including the "
      "response channel), supported values include `low`, `medium`, `high`, and `max`.\n"
      "Now the system is invoked with `thinking_effort=" +
          effort + "`.");
  return base::Status::Ok();
}

// user and system messages: role, optional name, content.
base::Status RenderPlainMessage(const Message& message, size_t index, XtmlWriter& writer) {
  std::vector<k3_xtml::Attr> attrs = {{"role", RoleName(message.role)}};
  if (message.name && !message.name->empty()) attrs.emplace_back("name", *message.name);
  writer.OpenTag("message", attrs);
  K3_RETURN_IF_ERROR(k3_xtml::RenderContent(message.content, index, writer));
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

// A system message carrying a non-empty `tools` list declares them (dynamic form) instead.
base::Status RenderSystem(const Message& message, size_t index, XtmlWriter& writer) {
  if (!message.tools.empty()) return RenderToolDeclare(message.tools, /*dynamic=*/true, writer);
  return RenderPlainMessage(message, index, writer);
}

// Tool results since the latest assistant message, numbered from 1 in render order.
struct ToolState {
  const std::vector<ToolCall>* calls = nullptr;  // the latest assistant's tool_calls
  size_t results = 0;
};

// The tool a result is for: the call it was matched to by id, else its own `tool` (or, when
// that is not set, `name`), else the latest assistant's call at the same position.
base::Result<std::string> ToolName(const Message& message, const OrderedMessage& entry,
                                   const ToolState& state) {
  if (entry.bound_tool) return *entry.bound_tool;
  if (message.tool) return *message.tool;
  if (message.name) return *message.name;
  if (state.calls != nullptr && state.results <= state.calls->size()) {
    return (*state.calls)[state.results - 1].name;
  }
  return base::InvalidArgument(FieldPath(entry.index, "") +
                               ": a tool message needs a resolvable tool name (tool_call_id "
                               "matching a call, `tool`/`name`, or a preceding call by position)");
}

base::Status RenderToolResult(const Message& message, const OrderedMessage& entry, ToolState& state,
                              XtmlWriter& writer) {
  ++state.results;
  K3_ASSIGN_OR_RETURN(std::string tool, ToolName(message, entry, state));
  writer.OpenTag("message",
                 {{"role", "tool"}, {"tool", tool}, {"index", std::to_string(state.results)}});
  K3_RETURN_IF_ERROR(k3_xtml::RenderContent(message.content, entry.index, writer));
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

base::Status RenderAssistant(const Message& message, size_t index, bool thinking, ToolState& state,
                             XtmlWriter& writer) {
  state.calls = &message.tool_calls;
  state.results = 0;
  std::vector<k3_xtml::Attr> attrs = {{"role", "assistant"}};
  if (message.name && !message.name->empty()) attrs.emplace_back("name", *message.name);
  writer.OpenTag("message", attrs);
  K3_RETURN_IF_ERROR(k3_xtml::RenderAssistantBody(message, index, thinking, writer));
  writer.CloseTag("message");
  writer.EndOfMsg();
  return base::Status::Ok();
}

base::Status RenderConversation(const std::vector<Message>& messages, bool thinking,
                                XtmlWriter& writer) {
  ToolState state;
  for (const OrderedMessage& entry : k3_xtml::OrderMessages(messages)) {
    const Message& message = messages[entry.index];
    switch (message.role) {
      case Role::kUser:
        K3_RETURN_IF_ERROR(RenderPlainMessage(message, entry.index, writer));
        break;
      case Role::kSystem:
        K3_RETURN_IF_ERROR(RenderSystem(message, entry.index, writer));
        break;
      case Role::kTool:
        K3_RETURN_IF_ERROR(RenderToolResult(message, entry, state, writer));
        break;
      case Role::kAssistant:
        K3_RETURN_IF_ERROR(RenderAssistant(message, entry.index, thinking, state, writer));
        break;
    }
  }
  return base::Status::Ok();
}

}  // namespace

namespace k3_xtml {

base::Status CheckThinkingEffort(const std::string& effort) {
  if (effort != "low" && effort != "high" && effort != "max") {
    return base::InvalidArgument("unsupported thinking effort \"" + effort +
                                 "\"; supported values are high, low, max");
  }
  return base::Status::Ok();
}

}  // namespace k3_xtml

base::Result<ChatSegments> RenderK3(const Conversation& conversation,
                                    const K3RenderSettings& settings) {
  XtmlWriter writer(settings.image_prompts ? &*settings.image_prompts : nullptr);
  if (!conversation.tools.empty()) {
    K3_RETURN_IF_ERROR(RenderToolDeclare(conversation.tools, /*dynamic=*/false, writer));
  }
  if (settings.thinking && settings.thinking_effort) {
    K3_RETURN_IF_ERROR(RenderThinkingEffort(*settings.thinking_effort, writer));
  }
  K3_RETURN_IF_ERROR(RenderConversation(conversation.messages, settings.thinking, writer));
  K3_RETURN_IF_ERROR(k3_xtml::RenderRequestNotes(settings, writer));
  if (settings.add_generation_prompt) {
    // The assistant message is left open: the model continues it in the chosen channel.
    writer.OpenTag("message", {{"role", "assistant"}});
    writer.OpenTag(settings.thinking ? "think" : "response");
  }
  K3_RETURN_IF_ERROR(writer.CheckImagesConsumed());
  return writer.Take();
}

// The JSON form: read in the order the encoder meets the pieces (declaration, effort, messages,
// notes), so the first malformed one is the one reported.
base::Result<ChatSegments> RenderK3(const nlohmann::ordered_json& messages,
                                    const K3RenderOptions& options) {
  Conversation conversation;
  K3RenderSettings settings{.thinking = options.thinking,
                            .thinking_effort = options.thinking_effort,
                            .add_generation_prompt = options.add_generation_prompt,
                            .image_prompts = options.image_prompts};
  if (options.tools != nullptr && !options.tools->is_null()) {
    if (!options.tools->is_array()) return base::InvalidArgument("tools must be a list or null");
    K3_ASSIGN_OR_RETURN(conversation.tools, ToolsFromJson(*options.tools, "tools"));
  }
  if (options.thinking && options.thinking_effort) {
    K3_RETURN_IF_ERROR(k3_xtml::CheckThinkingEffort(*options.thinking_effort));
  }
  K3_ASSIGN_OR_RETURN(conversation.messages, MessagesFromJson(messages));
  if (options.tool_choice != nullptr) {
    K3_ASSIGN_OR_RETURN(settings.tool_choice, ToolChoiceFromJson(*options.tool_choice));
  }
  if (options.response_format != nullptr) {
    K3_ASSIGN_OR_RETURN(settings.response_format, ResponseFormatFromJson(*options.response_format));
  }
  return RenderK3(conversation, settings);
}

}  // namespace k3::text::chat
