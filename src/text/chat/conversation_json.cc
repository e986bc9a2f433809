#include "text/chat/conversation_json.h"

#include <string>
#include <utility>

#include "text/chat/k3_xtml_writer.h"

namespace k3::text::chat {
namespace {

using k3_xtml::FieldPath;

const Json* Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A member that may be absent or null (nullopt); INVALID_ARGUMENT for a non-string.
base::Result<std::optional<std::string>> OptionalString(const Json& object, const char* key,
                                                        const std::string& path) {
  const Json* value = Field(object, key);
  if (value == nullptr || value->is_null()) return std::optional<std::string>();
  if (!value->is_string()) return base::InvalidArgument(path + " must be a string or null");
  return std::optional<std::string>(value->get<std::string>());
}

// An id as Python's str() prints it (ids are compared as strings); null and absent are none.
base::Result<std::optional<std::string>> OptionalId(const Json* id) {
  if (id == nullptr || id->is_null()) return std::optional<std::string>();
  K3_ASSIGN_OR_RETURN(std::string text, k3_xtml::PyStr(*id));
  return std::optional<std::string>(std::move(text));
}

// The url of an image_url/video_url part: {"url": ...} or the string itself.
std::string MediaUrl(const Json& part, const char* key) {
  const Json* media = Field(part, key);
  if (media == nullptr) return {};
  if (media->is_string()) return media->get<std::string>();
  const Json* url = media->is_object() ? Field(*media, "url") : nullptr;
  return url != nullptr && url->is_string() ? url->get<std::string>() : std::string();
}

base::Result<ContentPart> ReadPart(const Json& part, const std::string& path) {
  if (!part.is_object()) return base::InvalidArgument(path + " must be an object");
  const Json* type = Field(part, "type");
  if (type == nullptr || !type->is_string()) {
    return base::InvalidArgument(path + ".type must be a string");
  }
  const std::string& kind = type->get_ref<const std::string&>();
  if (kind == "image" || kind == "image_url") {
    return ContentPart{ContentPart::Kind::kImage, {}, MediaUrl(part, "image_url")};
  }
  if (kind == "video_url") {
    return ContentPart{ContentPart::Kind::kVideo, {}, MediaUrl(part, "video_url")};
  }
  const Json* text = Field(part, "text");
  if (text == nullptr || !text->is_string()) {
    return base::InvalidArgument(path + ".text must be a string (part type \"" + kind + "\")");
  }
  return ContentPart::Text(text->get<std::string>());
}

base::Result<Content> ReadContent(const Json& message, size_t index) {
  const Json* content = Field(message, "content");
  if (content == nullptr) return Content();
  if (content->is_null()) return Content::Null();
  if (content->is_string()) return Content::Of(content->get<std::string>());
  if (!content->is_array()) {
    return base::InvalidArgument(FieldPath(index, "content") +
                                 " must be a string, a list of content parts or null");
  }
  std::vector<ContentPart> parts;
  parts.reserve(content->size());
  for (size_t j = 0; j < content->size(); ++j) {
    std::string path = FieldPath(index, "content[" + std::to_string(j) + "]");
    K3_ASSIGN_OR_RETURN(ContentPart part, ReadPart((*content)[j], path));
    parts.push_back(std::move(part));
  }
  return Content::Of(std::move(parts));
}

// One tool call: name and arguments under `function`, or on the call itself without one.
base::Result<ToolCall> ReadCall(const Json& call, const std::string& path) {
  if (!call.is_object()) return base::InvalidArgument(path + " must be an object");
  const Json* function = Field(call, "function");
  const std::string fn_path = function != nullptr ? path + ".function" : path;
  if (function == nullptr) function = &call;
  const Json* name = function->is_object() ? Field(*function, "name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    return base::InvalidArgument(fn_path + ".name must be a non-empty string");
  }
  ToolCall out;
  K3_ASSIGN_OR_RETURN(out.id, OptionalId(Field(call, "id")));
  out.name = name->get<std::string>();
  if (const Json* arguments = Field(*function, "arguments")) {
    if (!arguments->is_null() && !arguments->is_object() && !arguments->is_string()) {
      return base::InvalidArgument(fn_path +
                                   ".arguments must be an object or a JSON object string");
    }
    out.arguments = *arguments;
  }
  return out;
}

base::Status ReadAssistant(const Json& message, size_t index, Message* out) {
  // `reasoning_content or reasoning`: the first that is neither null nor empty.
  for (const char* key : {"reasoning_content", "reasoning"}) {
    K3_ASSIGN_OR_RETURN(std::optional<std::string> text,
                        OptionalString(message, key, FieldPath(index, key)));
    if (text && !text->empty()) {
      out->reasoning = std::move(*text);
      break;
    }
  }
  K3_ASSIGN_OR_RETURN(out->content, ReadContent(message, index));
  const Json* calls = Field(message, "tool_calls");
  if (calls == nullptr || calls->is_null()) return base::Status::Ok();
  const std::string path = FieldPath(index, "tool_calls");
  if (!calls->is_array()) return base::InvalidArgument(path + " must be a list or null");
  out->tool_calls.reserve(calls->size());
  for (size_t j = 0; j < calls->size(); ++j) {
    K3_ASSIGN_OR_RETURN(ToolCall call, ReadCall((*calls)[j], path + "[" + std::to_string(j) + "]"));
    out->tool_calls.push_back(std::move(call));
  }
  return base::Status::Ok();
}

base::Status ReadToolResult(const Json& message, size_t index, Message* out) {
  const Json* id = Field(message, "tool_call_id");
  if (id == nullptr) id = Field(message, "id");
  K3_ASSIGN_OR_RETURN(out->tool_call_id, OptionalId(id));
  K3_ASSIGN_OR_RETURN(out->tool, OptionalString(message, "tool", FieldPath(index, "tool")));
  K3_ASSIGN_OR_RETURN(out->content, ReadContent(message, index));
  return base::Status::Ok();
}

base::Status ReadSystem(const Json& message, size_t index, Message* out) {
  if (const Json* tools = Field(message, "tools"); tools != nullptr && !tools->is_null()) {
    const std::string path = FieldPath(index, "tools");
    if (!tools->is_array()) return base::InvalidArgument(path + " must be a list or null");
    K3_ASSIGN_OR_RETURN(out->tools, ToolsFromJson(*tools, path));
  }
  K3_ASSIGN_OR_RETURN(out->content, ReadContent(message, index));
  return base::Status::Ok();
}

base::Result<Role> ReadRole(const std::string& role, size_t index,
                            const MessageReadOptions& options) {
  if (role == "system" || (options.developer_is_system && role == "developer")) {
    return Role::kSystem;
  }
  if (role == "user") return Role::kUser;
  if (role == "assistant") return Role::kAssistant;
  if (role == "tool") return Role::kTool;
  return base::InvalidArgument(FieldPath(index, "role") + " \"" + role +
                               "\" is not one of system, user, assistant, tool");
}

base::Result<Message> ReadMessage(const Json& message, size_t index,
                                  const MessageReadOptions& options) {
  Message out;
  K3_ASSIGN_OR_RETURN(out.role,
                      ReadRole(message["role"].get_ref<const std::string&>(), index, options));
  K3_ASSIGN_OR_RETURN(out.name, OptionalString(message, "name", FieldPath(index, "name")));
  switch (out.role) {
    case Role::kAssistant:
      K3_RETURN_IF_ERROR(ReadAssistant(message, index, &out));
      break;
    case Role::kTool:
      K3_RETURN_IF_ERROR(ReadToolResult(message, index, &out));
      break;
    case Role::kSystem:
      K3_RETURN_IF_ERROR(ReadSystem(message, index, &out));
      break;
    case Role::kUser:
      K3_ASSIGN_OR_RETURN(out.content, ReadContent(message, index));
      break;
  }
  return out;
}

base::Result<Tool> ReadTool(const Json& tool, const std::string& path) {
  const Json* function = tool.is_object() ? Field(tool, "function") : nullptr;
  const Json* type = tool.is_object() ? Field(tool, "type") : nullptr;
  if (function == nullptr || !function->is_object() ||
      (type != nullptr && !(type->is_string() && *type == "function"))) {
    return base::InvalidArgument(path + " must be {type: function, function: {name, ...}}");
  }
  const Json* name = Field(*function, "name");
  if (name == nullptr || !name->is_string()) {
    return base::InvalidArgument(path + ".function.name must be a string");
  }
  Tool out;
  out.name = name->get<std::string>();
  K3_ASSIGN_OR_RETURN(out.description,
                      OptionalString(*function, "description", path + ".function.description"));
  if (const Json* parameters = Field(*function, "parameters");
      parameters != nullptr && !parameters->is_null()) {
    out.parameters = *parameters;
  }
  if (const Json* strict = Field(*function, "strict"); strict != nullptr && !strict->is_null()) {
    if (!strict->is_boolean()) {
      return base::InvalidArgument(path + ".function.strict must be a boolean or null");
    }
    out.strict = strict->get<bool>();
  }
  return out;
}

Json PartToJson(const ContentPart& part) {
  switch (part.kind) {
    case ContentPart::Kind::kText:
      return Json{{"type", "text"}, {"text", part.text}};
    case ContentPart::Kind::kImage:
      return Json{{"type", "image_url"}, {"image_url", {{"url", part.url}}}};
    case ContentPart::Kind::kVideo:
      return Json{{"type", "video_url"}, {"video_url", {{"url", part.url}}}};
  }
  return Json();
}

Json CallToJson(const ToolCall& call) {
  Json function = {{"name", call.name}};
  if (call.arguments) function["arguments"] = *call.arguments;
  Json out = Json::object();
  if (call.id) out["id"] = *call.id;
  out["type"] = "function";
  out["function"] = std::move(function);
  return out;
}

Json MessageToJson(const Message& message) {
  Json out = {{"role", RoleName(message.role)}};
  switch (message.content.form) {
    case Content::Form::kAbsent:
      break;
    case Content::Form::kNull:
      out["content"] = nullptr;
      break;
    case Content::Form::kText:
      out["content"] = message.content.text;
      break;
    case Content::Form::kParts: {
      Json parts = Json::array();
      for (const ContentPart& part : message.content.parts) parts.push_back(PartToJson(part));
      out["content"] = std::move(parts);
      break;
    }
  }
  if (message.name) out["name"] = *message.name;
  if (!message.reasoning.empty()) out["reasoning_content"] = message.reasoning;
  if (!message.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ToolCall& call : message.tool_calls) calls.push_back(CallToJson(call));
    out["tool_calls"] = std::move(calls);
  }
  if (message.tool_call_id) out["tool_call_id"] = *message.tool_call_id;
  if (message.tool) out["tool"] = *message.tool;
  if (!message.tools.empty()) out["tools"] = ToolsToJson(message.tools);
  return out;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

base::Result<std::vector<Message>> MessagesFromJson(const Json& messages,
                                                    const MessageReadOptions& options) {
  if (!messages.is_array()) return base::InvalidArgument("messages must be an array");
  for (size_t i = 0; i < messages.size(); ++i) {  // the shape of all first, as the encoder does
    if (!messages[i].is_object()) {
      return base::InvalidArgument(FieldPath(i, "") + " must be an object");
    }
    const Json* role = Field(messages[i], "role");
    if (role == nullptr || !role->is_string()) {
      return base::InvalidArgument(FieldPath(i, "role") + " must be a string");
    }
  }
  std::vector<Message> out;
  out.reserve(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    K3_ASSIGN_OR_RETURN(Message message, ReadMessage(messages[i], i, options));
    out.push_back(std::move(message));
  }
  return out;
}

base::Result<std::vector<Tool>> ToolsFromJson(const Json& tools, std::string_view where) {
  if (!tools.is_array()) return base::InvalidArgument(std::string(where) + " must be a list");
  std::vector<Tool> out;
  out.reserve(tools.size());
  for (size_t i = 0; i < tools.size(); ++i) {
    K3_ASSIGN_OR_RETURN(Tool tool,
                        ReadTool(tools[i], std::string(where) + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(tool));
  }
  return out;
}

base::Result<ToolChoice> ToolChoiceFromJson(const Json& tool_choice) {
  ToolChoice out;
  if (tool_choice.is_null()) return out;
  if (tool_choice.is_string()) {
    if (tool_choice == "none") out.mode = ToolChoice::Mode::kNone;
    if (tool_choice == "required") out.mode = ToolChoice::Mode::kRequired;
    return out;
  }
  if (!tool_choice.is_object()) {
    return base::InvalidArgument("tool_choice must be a string, an object or null");
  }
  out.mode = ToolChoice::Mode::kFunction;
  const Json* function = Field(tool_choice, "function");
  const Json* name =
      function != nullptr && function->is_object() ? Field(*function, "name") : nullptr;
  if (name != nullptr && name->is_string()) out.function = name->get<std::string>();
  return out;
}

base::Result<ResponseFormat> ResponseFormatFromJson(const Json& response_format) {
  ResponseFormat out;
  if (response_format.is_null()) return out;
  std::string type;
  if (response_format.is_string()) {
    type = response_format.get<std::string>();
  } else if (!response_format.is_object()) {
    return base::InvalidArgument("response_format must be an object, a string or null");
  } else if (const Json* t = Field(response_format, "type"); t != nullptr && !t->is_null()) {
    if (!t->is_string()) return base::InvalidArgument("response_format.type must be a string");
    type = t->get<std::string>();
  }
  if (type == "json_object") out.type = ResponseFormat::Type::kJsonObject;
  if (type != "json_schema") return out;
  out.type = ResponseFormat::Type::kJsonSchema;
  const Json* spec = response_format.is_object() ? Field(response_format, "json_schema") : nullptr;
  if (spec == nullptr) return out;
  out.schema = *spec;
  if (!spec->is_object()) return out;
  if (const Json* schema = Field(*spec, "schema")) {
    out.schema = *schema;
  } else if (const Json* nested = Field(*spec, "json_schema")) {
    out.schema = *nested;
  }
  if (const Json* name = Field(*spec, "name"); name != nullptr && name->is_string()) {
    out.name = name->get<std::string>();
  }
  if (const Json* strict = Field(*spec, "strict"); strict != nullptr && strict->is_boolean()) {
    out.strict = strict->get<bool>();
  }
  return out;
}

Json MessagesToJson(const std::vector<Message>& messages) {
  Json out = Json::array();
  for (const Message& message : messages) out.push_back(MessageToJson(message));
  return out;
}

Json ToolToJson(const Tool& tool) {
  Json function = {{"name", tool.name}};
  if (tool.description) function["description"] = *tool.description;
  if (tool.parameters) function["parameters"] = *tool.parameters;
  if (tool.strict) function["strict"] = *tool.strict;
  return Json{{"type", "function"}, {"function", std::move(function)}};
}

Json ToolsToJson(const std::vector<Tool>& tools) {
  Json out = Json::array();
  for (const Tool& tool : tools) out.push_back(ToolToJson(tool));
  return out;
}

}  // namespace k3::text::chat
