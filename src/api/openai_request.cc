#include "api/openai_request.h"

#include <set>

#include "api/fields.h"
#include "api/openai_request_internal.h"
#include "serve/effort.h"
#include "text/chat/conversation_json.h"

namespace k3::api {
namespace {

// Tool and schema names: 1-64 characters (Kimi accepts non-ASCII names such as "翻译"), none of
// them whitespace, control characters or punctuation that would break the tool-call syntax of
// the chat formats (K2 ids are functions.NAME:N; K3 writes tool="NAME").
bool ValidName(const std::string& name) {
  size_t chars = 0;
  for (unsigned char c : name) {
    if ((c & 0xC0) != 0x80) ++chars;
    if (c < 0x80 && !(std::isalnum(c) || c == '_' || c == '-' || c == '.')) return false;
  }
  return chars >= 1 && chars <= 64;
}

// Dynamic tools (K3, Kimi Vendor Verifier test_dynamic_tools.py) are held to K3's own rule:
// ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$ (ASCII only, no leading digit, no '.').
bool ValidDynamicName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  const auto c0 = static_cast<unsigned char>(name[0]);
  if (!(std::isalpha(c0) || c0 == '_') || c0 >= 0x80) return false;
  for (unsigned char c : name) {
    if (c >= 0x80 || !(std::isalnum(c) || c == '_' || c == '-')) return false;
  }
  return true;
}

bool ValidateContent(const Json& content, const std::string& where, ApiError* error) {
  if (content.is_null() || content.is_string()) return true;
  if (!content.is_array()) {
    *error = BadRequest(where + ".content must be a string, null or a list of parts", where);
    return false;
  }
  for (const Json& part : content) {
    const bool text =
        StringOr(part, "type") == "text" && part.contains("text") && part["text"].is_string();
    const std::string type = StringOr(part, "type");
    const bool media = type == "image_url" || type == "video_url";
    if (!text && !media) {
      *error = BadRequest(
          where + ".content parts must be {type: text, text}, image_url or video_url", where);
      return false;
    }
  }
  return true;
}

bool ValidateToolCalls(const Json& calls, const std::string& where, ApiError* error) {
  if (!calls.is_array()) {
    *error = BadRequest(where + ".tool_calls must be a list", where);
    return false;
  }
  for (const Json& call : calls) {
    const Json* function =
        call.is_object() && call.contains("function") ? &call["function"] : nullptr;
    if (function == nullptr || !function->is_object() || !function->contains("name") ||
        !(*function)["name"].is_string()) {
      *error = BadRequest(where + ".tool_calls[] needs function.name", where);
      return false;
    }
    if (function->contains("arguments") && !(*function)["arguments"].is_string() &&
        !(*function)["arguments"].is_object()) {
      *error = BadRequest(where + ".tool_calls[].function.arguments must be a string", where);
      return false;
    }
  }
  return true;
}

bool ValidateResponseFormat(const Json& format, ApiError* error) {
  const std::string param = "response_format";
  if (!format.is_object() || !format.contains("type") || !format["type"].is_string()) {
    *error = BadRequest("'response_format' must be an object with a 'type'", param);
    return false;
  }
  const std::string type = format["type"];
  if (type == "text" || type == "json_object") return true;
  if (type != "json_schema") {
    *error =
        BadRequest("'response_format.type' must be 'text', 'json_object' or 'json_schema'", param);
    return false;
  }
  auto schema = format.find("json_schema");
  if (schema == format.end() || !schema->is_object()) {
    *error = BadRequest("'response_format.json_schema' must be an object", param);
    return false;
  }
  if (!schema->contains("name") || !(*schema)["name"].is_string() ||
      !ValidName((*schema)["name"].get<std::string>())) {
    *error = BadRequest(
        "'response_format.json_schema.name' must be 1-64 letters, digits, '_', '-' or '.'", param);
    return false;
  }
  if (!schema->contains("schema") || !(*schema)["schema"].is_object()) {
    *error = BadRequest("'response_format.json_schema.schema' must be an object", param);
    return false;
  }
  if (schema->contains("strict") && !(*schema)["strict"].is_boolean()) {
    *error = BadRequest("'response_format.json_schema.strict' must be a boolean", param);
    return false;
  }
  return true;
}

bool ValidateThinking(const Json& body, ApiError* error) {
  Fields f(body);
  std::string effort;
  if (!f.Enum("reasoning_effort", serve::EffortNames(), &effort, error)) return false;
  const Json* thinking = f.Get("thinking");
  if (thinking == nullptr) return true;
  if (!thinking->is_object()) {
    *error = BadRequest("'thinking' must be an object", "thinking");
    return false;
  }
  Fields t(*thinking, "thinking");
  std::string value;
  return t.Enum("type", {"enabled", "disabled"}, &value, error) &&
         t.Enum("keep", {"all"}, &value, error) &&
         t.Enum("effort", serve::EffortNames(), &value, error);
}

}  // namespace

bool CheckToolName(const std::string& name, const std::string& where, std::set<std::string>* names,
                   ApiError* error) {
  if (!ValidName(name)) {
    *error = BadRequest(where + ".function.name must be 1-64 letters, digits, '_', '-' or '.'",
                        where + ".function.name");
    return false;
  }
  if (!names->insert(name).second) {
    *error = BadRequest("duplicate tool name '" + name + "'", where + ".function.name");
    return false;
  }
  return true;
}

bool ValidateMessages(const Json& messages, ApiError* error) {
  if (!messages.is_array() || messages.empty()) {
    *error = BadRequest("'messages' must be a non-empty list", "messages");
    return false;
  }
  static const std::set<std::string> kRoles = {"system", "developer", "user", "assistant", "tool"};
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    const Json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      *error = BadRequest(where + " must be an object with a 'role'", where);
      return false;
    }
    const std::string role = m["role"];
    if (!kRoles.contains(role)) {
      *error = BadRequest(
          where + ".role '" + role + "' is not one of system, developer, user, assistant, tool",
          where + ".role");
      return false;
    }
    if (m.contains("content") && !ValidateContent(m["content"], where, error)) return false;
    if (role == "tool" && !(m.contains("tool_call_id") && m["tool_call_id"].is_string())) {
      *error = BadRequest(where + " (role tool) needs a string 'tool_call_id'", where);
      return false;
    }
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      if (role != "assistant") {
        *error = BadRequest(where + ": only assistant messages carry tool_calls", where);
        return false;
      }
      if (!ValidateToolCalls(m["tool_calls"], where, error)) return false;
    }
  }
  return true;
}

// One tools list (global, or a system message's dynamic tools): function tools with valid,
// unique names (unique across every list of the request, via *names). Dynamic tools must spell
// out "type": "function" and a name matching ValidDynamicName (global ones may omit the type, as
// OpenAI's API allows).
bool ValidateToolList(const Json& tools, const std::string& where_list, bool dynamic,
                      std::set<std::string>* names, ApiError* error) {
  if (!tools.is_array()) {
    *error = BadRequest("'" + where_list + "' must be a list", where_list);
    return false;
  }
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& tool = tools[i];
    const std::string where = where_list + "[" + std::to_string(i) + "]";
    const Json* function =
        tool.is_object() && tool.contains("function") ? &tool["function"] : nullptr;
    const bool typed = tool.is_object() && tool.contains("type");
    if (!tool.is_object() || (typed && StringOr(tool, "type") != "function") ||
        function == nullptr || !function->is_object()) {
      *error = BadRequest(where + " must be {type: function, function: {...}}", where);
      return false;
    }
    if (dynamic && !typed) {
      *error = BadRequest(where + " needs \"type\": \"function\"", where + ".type");
      return false;
    }
    if (dynamic && !(function->contains("name") && (*function)["name"].is_string() &&
                     ValidDynamicName((*function)["name"].get<std::string>()))) {
      *error = BadRequest(where + ".function.name must match ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$",
                          where + ".function.name");
      return false;
    }
    if (!CheckToolName(StringOr(*function, "name"), where, names, error)) return false;
    if (function->contains("parameters") && !(*function)["parameters"].is_object()) {
      *error = BadRequest(where + ".function.parameters must be an object", where);
      return false;
    }
    if (function->contains("strict") && !(*function)["strict"].is_boolean()) {
      *error = BadRequest(where + ".function.strict must be a boolean", where);
      return false;
    }
  }
  return true;
}

bool ValidateTools(const Json& body, ApiError* error) {
  Fields f(body);
  std::set<std::string> names;
  if (const Json* tools = f.Get("tools");
      tools && !ValidateToolList(*tools, "tools", false, &names, error)) {
    return false;
  }
  const size_t global_tools = names.size();
  // Dynamic tools (K3): `tools` on system messages only, with no content beside them.
  const Json& messages = body.contains("messages") ? body["messages"] : Json::array();
  for (size_t i = 0; messages.is_array() && i < messages.size(); ++i) {
    const Json& m = messages[i];
    if (!m.is_object() || !m.contains("tools") || m["tools"].is_null()) continue;
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (StringOr(m, "role") != "system") {
      *error = BadRequest(where + ": only system messages may carry tools", where + ".tools");
      return false;
    }
    const Json content = m.contains("content") ? m["content"] : Json(nullptr);
    const bool declares = !(m["tools"].is_array() && m["tools"].empty());
    if (declares &&
        !(content.is_null() || (content.is_string() && content.get<std::string>().empty()) ||
          (content.is_array() && content.empty()))) {
      *error = BadRequest(where + ": a system message with tools must have empty content",
                          where + ".content");
      return false;
    }
    if (!ValidateToolList(m["tools"], where + ".tools", true, &names, error)) return false;
  }
  const bool any_tools = global_tools > 0 || names.size() > global_tools;
  const Json* choice = f.Get("tool_choice");
  if (choice == nullptr) return true;
  if (choice->is_string()) {
    const std::string value = *choice;
    if (value != "none" && value != "auto" && value != "required") {
      *error = BadRequest("'tool_choice' must be 'none', 'auto', 'required' or a named function",
                          "tool_choice");
      return false;
    }
    if (value == "required" && !any_tools) {
      *error = BadRequest(kRequiredWithoutTools, "tool_choice");
      return false;
    }
    return true;
  }
  const Json* function = StringOr(*choice, "type") == "function" && choice->contains("function") &&
                                 (*choice)["function"].is_object()
                             ? &(*choice)["function"]
                             : nullptr;
  if (function == nullptr || !function->contains("name") || !(*function)["name"].is_string()) {
    *error = BadRequest(kChoiceNotAFunction, "tool_choice");
    return false;
  }
  if (!names.contains((*function)["name"].get<std::string>())) {
    *error = BadRequest(kChoiceNotDeclared, "tool_choice");
    return false;
  }
  return true;
}

bool ToChatRequest(const Json& body, serve::ChatRequest* out, ApiError* error) {
  auto fail = [error](const base::Status& status) {
    *error = FromStatus(status);
    return false;
  };
  auto messages = text::chat::MessagesFromJson(body["messages"], {.developer_is_system = true});
  if (!messages.ok()) return fail(messages.status());
  out->conversation.messages = std::move(messages).value();
  Fields f(body);
  if (const Json* tools = f.Get("tools")) {
    auto typed = text::chat::ToolsFromJson(*tools, "tools");
    if (!typed.ok()) return fail(typed.status());
    out->conversation.tools = std::move(typed).value();
  }
  auto choice = text::chat::ToolChoiceFromJson(body.value("tool_choice", Json()));
  auto format = text::chat::ResponseFormatFromJson(body.value("response_format", Json()));
  if (!choice.ok()) return fail(choice.status());
  if (!format.ok()) return fail(format.status());
  out->tool_choice = std::move(choice).value();
  out->response_format = std::move(format).value();
  if (const Json* parallel = f.Get("parallel_tool_calls")) {
    out->parallel_tool_calls = parallel->get<bool>();
  }
  const Json* thinking = f.Get("thinking");
  if (const Json* type = thinking ? Fields(*thinking).Get("type") : nullptr) {
    out->thinking.enabled = *type == "enabled";
  }
  const Json* effort = thinking ? Fields(*thinking).Get("effort") : nullptr;
  if (effort == nullptr) effort = f.Get("reasoning_effort");
  if (effort != nullptr) out->thinking.effort = effort->get<std::string>();
  if (const Json* kwargs = f.Get("chat_template_kwargs")) out->template_kwargs = *kwargs;
  return true;
}

bool ValidateChatExtras(const Json& body, ApiError* error) {
  if (!ValidateTools(body, error) || !ValidateThinking(body, error)) return false;
  Fields f(body);
  if (const Json* format = f.Get("response_format")) {
    if (!ValidateResponseFormat(*format, error)) return false;
  }
  bool parallel = true;
  if (!f.Bool("parallel_tool_calls", &parallel, error)) return false;
  if (const Json* kwargs = f.Get("chat_template_kwargs"); kwargs && !kwargs->is_object()) {
    *error = BadRequest("'chat_template_kwargs' must be an object", "chat_template_kwargs");
    return false;
  }
  return true;
}

bool ParseChatRequest(const Json& body, const ApiOptions& options, OpenAiRequest* out,
                      ApiError* error) {
  if (!body.is_object()) {
    *error = BadRequest("the request body must be a JSON object");
    return false;
  }
  if (!body.contains("messages")) {
    *error = BadRequest("'messages' is required", "messages");
    return false;
  }
  if (!ValidateMessages(body["messages"], error) || !ValidateChatExtras(body, error) ||
      !ParseSampling(body, options, &out->generate, error)) {
    return false;
  }
  Fields f(body);
  bool logprobs = false;
  int64_t top = 0;
  if (!f.Bool("stream", &out->stream, error) || !f.Bool("logprobs", &logprobs, error) ||
      !f.Integer("top_logprobs", 0, 20, &top, error)) {
    return false;
  }
  if (f.Get("top_logprobs") != nullptr && !logprobs) {
    *error = BadRequest("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    return false;
  }
  if (const Json* so = f.Get("stream_options")) {
    if (!so->is_object() ||
        !Fields(*so, "stream_options").Bool("include_usage", &out->include_usage, error)) {
      if (error->message.empty()) *error = BadRequest("'stream_options' must be an object");
      return false;
    }
  }
  out->top_logprobs = static_cast<int>(top);
  out->generate.want_logprobs = logprobs;
  if (logprobs) out->generate.sampling.logprobs = static_cast<int>(top);
  out->generate.chat.emplace();
  return ToChatRequest(body, &*out->generate.chat, error);
}

}  // namespace k3::api
