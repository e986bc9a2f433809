// Request-level pieces: the tool-choice and response-format notes, and the mapping from a
// chat-completions request body to K3RenderOptions (the JSON form).
#include <string>
#include <string_view>

#include "text/chat/k3_xtml.h"
#include "text/chat/k3_xtml_messages.h"

namespace k3::text::chat {
namespace k3_xtml {
namespace {

constexpr std::string_view kRawJsonRule =
    "Your response must be raw JSON data without markdown code blocks (```json) or any "
    "additional formatting.";

base::Status RenderToolChoice(const ToolChoice& tool_choice, XtmlWriter& writer) {
  if (tool_choice.mode == ToolChoice::Mode::kRequired) {
    writer.InternalSystemMessage("tool-choice",
                                 "The system is invoked with `tool_choice=required`.\n"
                                 "You MUST call tools in the next message.");
  } else if (tool_choice.mode == ToolChoice::Mode::kNone) {
    writer.InternalSystemMessage("tool-choice",
                                 "The system is invoked with `tool_choice=none`.\n"
                                 "You MUST NOT call any tools in the next message.");
  }
  return base::Status::Ok();
}

base::Status RenderResponseFormat(const ResponseFormat& response_format, XtmlWriter& writer) {
  if (response_format.type == ResponseFormat::Type::kJsonObject) {
    writer.InternalSystemMessage(
        "response-format",
        "The system is invoked with `response_format=json_object`.\n" + std::string(kRawJsonRule));
  } else if (response_format.type == ResponseFormat::Type::kJsonSchema) {
    K3_ASSIGN_OR_RETURN(std::string json, PyJsonCompactSorted(response_format.schema));
    writer.InternalSystemMessage(
        "response-format",
        "The system is invoked with `response_format=json_schema`.\n" + std::string(kRawJsonRule) +
            "\nThe JSON data must match the following schema:\n```json\n" + json + "\n```");
  }
  return base::Status::Ok();
}

// A member that must be a string when present and not null.
base::Result<std::optional<std::string>> StringMember(const Json& object, const char* key,
                                                      std::string_view path) {
  const Json* value = Field(object, key);
  if (value == nullptr || value->is_null()) return std::optional<std::string>();
  if (!value->is_string()) {
    return base::InvalidArgument(std::string(path) + " must be a string or null");
  }
  return std::optional<std::string>(value->get<std::string>());
}

// thinking: absent/null (on), a bool, or {type, effort}; `effort` gets thinking.effort if set.
base::Status ReadThinking(const Json& request, K3RenderOptions* options,
                          std::optional<std::string>* effort) {
  const Json* thinking = Field(request, "thinking");
  if (thinking == nullptr || thinking->is_null()) return base::Status::Ok();
  if (thinking->is_boolean()) {
    options->thinking = thinking->get<bool>();
    return base::Status::Ok();
  }
  if (!thinking->is_object()) return base::InvalidArgument("thinking must be an object or null");
  const Json* type = Field(*thinking, "type");
  if (type != nullptr && !type->is_null() && !type->is_string()) {
    return base::InvalidArgument("thinking.type must be a string or null");
  }
  options->thinking = !(type != nullptr && type->is_string() && *type == "disabled");
  K3_ASSIGN_OR_RETURN(*effort, StringMember(*thinking, "effort", "thinking.effort"));
  return base::Status::Ok();
}

// A pass-through member: absent/null gives null; otherwise its JSON type must be allowed.
base::Result<const Json*> PassThrough(const Json& request, const char* key, bool allow_array,
                                      bool allow_object_or_string, std::string_view expected) {
  const Json* value = Field(request, key);
  if (value == nullptr || value->is_null()) return static_cast<const Json*>(nullptr);
  bool ok = (allow_array && value->is_array()) ||
            (allow_object_or_string && (value->is_object() || value->is_string()));
  if (!ok) return base::InvalidArgument(std::string(key) + " must be " + std::string(expected));
  return value;
}

}  // namespace

base::Status RenderRequestNotes(const K3RenderSettings& settings, XtmlWriter& writer) {
  K3_RETURN_IF_ERROR(RenderToolChoice(settings.tool_choice, writer));
  return RenderResponseFormat(settings.response_format, writer);
}

}  // namespace k3_xtml

base::Result<K3RenderOptions> K3OptionsFromRequest(const nlohmann::ordered_json& request) {
  using k3_xtml::PassThrough;
  if (!request.is_object()) return base::InvalidArgument("the request must be a JSON object");
  K3RenderOptions options;
  std::optional<std::string> effort;
  K3_RETURN_IF_ERROR(k3_xtml::ReadThinking(request, &options, &effort));
  if (!effort) {
    K3_ASSIGN_OR_RETURN(effort,
                        k3_xtml::StringMember(request, "reasoning_effort", "reasoning_effort"));
  }
  options.thinking_effort = effort ? *effort : "max";
  K3_ASSIGN_OR_RETURN(options.tools, PassThrough(request, "tools", true, false, "a list or null"));
  K3_ASSIGN_OR_RETURN(options.tool_choice, PassThrough(request, "tool_choice", false, true,
                                                       "a string, an object or null"));
  K3_ASSIGN_OR_RETURN(options.response_format, PassThrough(request, "response_format", false, true,
                                                           "an object, a string or null"));
  return options;
}

base::Result<ChatSegments> RenderK3Request(const nlohmann::ordered_json& request) {
  K3_ASSIGN_OR_RETURN(K3RenderOptions options, K3OptionsFromRequest(request));
  const k3_xtml::Json* messages = k3_xtml::Field(request, "messages");
  if (messages == nullptr) return base::InvalidArgument("messages is required");
  return RenderK3(*messages, options);
}

}  // namespace k3::text::chat
