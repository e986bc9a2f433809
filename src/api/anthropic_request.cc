#include "api/anthropic_request.h"

#include <map>
#include <set>

#include "api/anthropic_blocks.h"
#include "api/fields.h"
#include "api/openai_request_internal.h"
#include "serve/effort.h"
#include "text/chat/conversation.h"

namespace k3::api {
namespace {

using text::chat::Content;
using text::chat::ContentPart;
using text::chat::Message;
using text::chat::Role;
using text::chat::ToolCall;
using text::chat::ToolChoice;

struct Converter {
  std::map<std::string, std::string> renamed;  // client tool_use id -> functions.{name}:{n}
  int calls = 0;                               // tool calls so far in the conversation
  ApiError* error;
  const ThinkingSigner* signer = nullptr;

  bool Fail(std::string message, std::string param) {
    *error = BadRequest(std::move(message), std::move(param));
    return false;
  }

  // Text of a string or a list of text blocks.
  bool Text(const Json& content, const std::string& where, std::string* out) {
    if (content.is_string()) {
      *out = content.get<std::string>();
      return true;
    }
    if (!content.is_array()) return Fail(where + " must be a string or a list of blocks", where);
    for (const Json& block : content) {
      if (StringOr(block, "type") != "text" || !block.contains("text") ||
          !block["text"].is_string()) {
        return Fail(where + " blocks must be {type: text, text}", where);
      }
      *out += block["text"].get<std::string>();
    }
    return true;
  }

  // User blocks: tool_result blocks become tool messages (in order), the rest one user message
  // after them.
  bool UserBlocks(const Json& content, const std::string& where, std::vector<Message>* out) {
    std::vector<ContentPart> parts;
    for (const Json& block : content) {
      const std::string type = StringOr(block, "type");
      const BlockResult converted = ContentBlock(block, where, &parts, error);
      if (converted == BlockResult::kError) return false;
      if (converted == BlockResult::kConverted) continue;
      if (type == "tool_result") {
        const std::string id = StringOr(block, "tool_use_id");
        if (id.empty()) return Fail(where + ": tool_result needs tool_use_id", where);
        Message message{.role = Role::kTool, .content = Content::Of("")};
        if (block.contains("content") &&
            !ToolResultContent(block["content"], where, &message.content, error)) {
          return false;
        }
        auto it = renamed.find(id);
        message.tool_call_id = it == renamed.end() ? id : it->second;
        out->push_back(std::move(message));
      } else {
        return Fail(where + ": unsupported content block type '" + type + "'", where);
      }
    }
    if (!parts.empty()) {
      out->push_back({.role = Role::kUser, .content = Content::Of(std::move(parts))});
    }
    return true;
  }

  // A tool_use block; its id becomes functions.{name}:{n}.
  bool ToolUse(const Json& block, const std::string& where, Message* message) {
    const std::string name = block["name"];
    const std::string id =
        "functions." + name + ":" + std::to_string(message->tool_calls.size() + calls);
    if (block.contains("id") && !block["id"].is_string()) {
      return Fail(where + ": tool_use.id must be a string", where);
    }
    renamed[StringOr(block, "id", id)] = id;
    const Json input = block.contains("input") ? block["input"] : Json::object();
    message->tool_calls.push_back({.id = id, .name = name, .arguments = Json(Dump(input))});
    return true;
  }

  // A thinking block's signature must be one this server issued for exactly its text.
  bool Signed(const Json& block, const std::string& where) {
    if (signer == nullptr) return true;
    const Json* signature = Fields(block).Get("signature");
    if (signature == nullptr || !signature->is_string() ||
        !signer->Verify(block["thinking"].get<std::string>(), signature->get<std::string>())) {
      return Fail(
          "invalid 'signature' in thinking block (it was not issued by this server for this "
          "text)",
          where);
    }
    return true;
  }

  bool AssistantBlocks(const Json& content, const std::string& where, std::vector<Message>* out) {
    Message message{.role = Role::kAssistant};
    std::string text;
    for (const Json& block : content) {
      const std::string type = StringOr(block, "type");
      if (type == "text" && block.contains("text") && block["text"].is_string()) {
        text += block["text"].get<std::string>();
      } else if (type == "thinking" && block.contains("thinking") &&
                 block["thinking"].is_string()) {
        if (!Signed(block, where)) return false;
        message.reasoning += block["thinking"].get<std::string>();
      } else if (type == "redacted_thinking") {
        continue;  // opaque to us
      } else if (type == "tool_use" && block.contains("name") && block["name"].is_string()) {
        if (!ToolUse(block, where, &message)) return false;
      } else {
        return Fail(where + ": unsupported assistant block type '" + type + "'", where);
      }
    }
    calls += static_cast<int>(message.tool_calls.size());
    message.content = Content::Of(std::move(text));
    out->push_back(std::move(message));
    return true;
  }

  bool Messages(const Json& input, std::vector<Message>* out) {
    for (size_t i = 0; i < input.size(); ++i) {
      const std::string where = "messages[" + std::to_string(i) + "]";
      const Json& m = input[i];
      const std::string role = StringOr(m, "role");
      if ((role != "user" && role != "assistant" && role != "system") || !m.contains("content")) {
        return Fail(where + " needs role user, assistant or system and content", where);
      }
      const Json& content = m["content"];
      if (role == "system") {  // kept in place: both chat families render it where it stands
        std::string text;
        if (!Text(content, where + ".content", &text)) return false;
        out->push_back({.role = Role::kSystem, .content = Content::Of(std::move(text))});
      } else if (content.is_string()) {
        out->push_back({.role = role == "user" ? Role::kUser : Role::kAssistant,
                        .content = Content::Of(content.get<std::string>())});
      } else if (!content.is_array()) {
        return Fail(where + ".content must be a string or a list of blocks", where);
      } else if (role == "user" ? !UserBlocks(content, where, out)
                                : !AssistantBlocks(content, where, out)) {
        return false;
      }
    }
    return true;
  }

  static std::string Dump(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
};

// Client tools only (Anthropic answers 400 without an input_schema); server tools (a "type" such
// as web_search_...) are not something this server runs.
bool ConvertTool(const Json& tool, std::vector<text::chat::Tool>* out, ApiError* error) {
  if (!tool.is_object() || StringOr(tool, "name").empty()) {
    *error = BadRequest("tools[] need a string 'name'", "tools");
    return false;
  }
  if (tool.contains("type") && tool["type"] != "custom") {
    *error = BadRequest("tools[]: only client tools (type \"custom\") are supported", "tools");
    return false;
  }
  const auto schema = tool.find("input_schema");
  if (schema == tool.end() || !schema->is_object()) {
    *error = BadRequest("tools[] need an 'input_schema' object", "tools");
    return false;
  }
  const Json* description = Fields(tool).Get("description");
  if (description != nullptr && !description->is_string()) {
    *error = BadRequest("tools[]: 'description' must be a string", "tools");
    return false;
  }
  text::chat::Tool converted{.name = StringOr(tool, "name"), .parameters = *schema};
  if (description != nullptr) converted.description = description->get<std::string>();
  out->push_back(std::move(converted));
  return true;
}

// tool_choice; `named` is set to the name of a {type: tool} choice (null when not a string).
bool ConvertToolChoice(const Json& choice, serve::ChatRequest* chat, const Json** named,
                       ApiError* error) {
  const std::string type = StringOr(choice, "type");
  if (type == "auto") {
    chat->tool_choice.mode = ToolChoice::Mode::kAuto;
  } else if (type == "any") {
    chat->tool_choice.mode = ToolChoice::Mode::kRequired;
  } else if (type == "none") {
    chat->tool_choice.mode = ToolChoice::Mode::kNone;
  } else if (type == "tool" && choice.contains("name")) {
    chat->tool_choice = {ToolChoice::Mode::kFunction, StringOr(choice, "name")};
    *named = &choice["name"];
  } else {
    *error = BadRequest("'tool_choice.type' must be auto, any, tool or none", "tool_choice");
    return false;
  }
  bool disable_parallel = false;
  if (!Fields(choice, "tool_choice").Bool("disable_parallel_tool_use", &disable_parallel, error)) {
    return false;
  }
  if (disable_parallel) chat->parallel_tool_calls = false;
  return true;
}

// output_config: `effort` (the shared vocabulary, serve/effort.h) is the thinking effort; `format`
// (structured outputs) the response_format; other members are accepted and not used.
bool ConvertOutputConfig(const Json& body, serve::ChatRequest* chat, ApiError* error) {
  const Json* config = Fields(body).Get("output_config");
  if (config == nullptr) return true;
  if (!config->is_object()) {
    *error = BadRequest("'output_config' must be an object", "output_config");
    return false;
  }
  std::string effort;
  if (!Fields(*config, "output_config").Enum("effort", serve::EffortNames(), &effort, error)) {
    return false;
  }
  if (!effort.empty()) chat->thinking.effort = effort;
  const Json* format = Fields(*config).Get("format");
  if (format == nullptr) return true;
  // Structured outputs: {type: json_schema, schema} -> a strict json_schema response_format.
  if (!format->is_object() || StringOr(*format, "type") != "json_schema" ||
      !format->contains("schema") || !(*format)["schema"].is_object()) {
    *error = BadRequest("'output_config.format' must be {type: json_schema, schema: {...}}",
                        "output_config.format");
    return false;
  }
  chat->response_format = {.type = text::chat::ResponseFormat::Type::kJsonSchema,
                           .name = "output",
                           .schema = (*format)["schema"]};
  return true;
}

// thinking.type: enabled (budget_tokens >= 1024), adaptive (the model decides how much; the
// effort comes from output_config) or disabled.
bool ConvertThinking(const Json& body, serve::ChatRequest* chat, ApiError* error) {
  if (!ConvertOutputConfig(body, chat, error)) return false;
  const Json* thinking = Fields(body).Get("thinking");
  if (thinking == nullptr) return true;
  const std::string type = StringOr(*thinking, "type");
  if (type == "disabled" || type == "adaptive") {
    chat->thinking.enabled = type == "adaptive";
    return true;
  }
  if (type != "enabled") {
    *error = BadRequest("'thinking.type' must be 'enabled', 'adaptive' or 'disabled'", "thinking");
    return false;
  }
  const Json budget = thinking->contains("budget_tokens") ? (*thinking)["budget_tokens"] : Json();
  if (!budget.is_number_integer() || budget.get<int64_t>() < 1024) {
    *error = BadRequest("'thinking.budget_tokens' must be an integer >= 1024", "thinking");
    return false;
  }
  chat->thinking.enabled = true;
  return true;
}

// What the OpenAI validator checks of a request, applied to the converted one (its messages and
// params): a conversation, valid unique tool names, a tool_choice that fits the tools.
bool ValidateConverted(const serve::ChatRequest& chat, const Json* named, ApiError* error) {
  if (chat.conversation.messages.empty()) {
    *error = BadRequest("'messages' must be a non-empty list", "messages");
    return false;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < chat.conversation.tools.size(); ++i) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!CheckToolName(chat.conversation.tools[i].name, where, &names, error)) return false;
  }
  const ToolChoice& choice = chat.tool_choice;
  if (choice.mode == ToolChoice::Mode::kRequired && names.empty()) {
    *error = BadRequest(kRequiredWithoutTools, "tool_choice");
    return false;
  }
  if (choice.mode != ToolChoice::Mode::kFunction) return true;
  if (named == nullptr || !named->is_string()) {
    *error = BadRequest(kChoiceNotAFunction, "tool_choice");
    return false;
  }
  if (!names.contains(choice.function)) {
    *error = BadRequest(kChoiceNotDeclared, "tool_choice");
    return false;
  }
  return true;
}

}  // namespace

bool ParseCountTokensRequest(const Json& body, serve::ChatRequest* chat, ApiError* error,
                             const ThinkingSigner* signer) {
  if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array()) {
    *error = BadRequest("'messages' must be a list", "messages");
    return false;
  }
  *chat = serve::ChatRequest();
  Converter convert{.error = error, .signer = signer};
  std::vector<Message>& messages = chat->conversation.messages;
  Fields f(body);
  if (const Json* system = f.Get("system")) {
    std::string text;
    if (!convert.Text(*system, "system", &text)) return false;
    messages.push_back({.role = Role::kSystem, .content = Content::Of(std::move(text))});
  }
  if (!convert.Messages(body["messages"], &messages)) return false;
  if (const Json* tools = f.Get("tools")) {
    if (!tools->is_array()) {
      *error = BadRequest("'tools' must be a list", "tools");
      return false;
    }
    for (const Json& tool : *tools) {
      if (!ConvertTool(tool, &chat->conversation.tools, error)) return false;
    }
  }
  const Json* named = nullptr;
  if (const Json* choice = f.Get("tool_choice")) {
    if (!ConvertToolChoice(*choice, chat, &named, error)) return false;
  }
  return ConvertThinking(body, chat, error) && ValidateConverted(*chat, named, error);
}

bool ParseMessagesRequest(const Json& body, const ApiOptions& options, AnthropicRequest* out,
                          ApiError* error) {
  serve::ChatRequest chat;
  if (!ParseCountTokensRequest(body, &chat, error, options.signer.get())) return false;
  Fields f(body);
  int64_t max_tokens = 0, top_k = 0;
  double temperature = 1.0, top_p = 1.0;
  if (f.Get("max_tokens") == nullptr) {
    *error = BadRequest("'max_tokens' is required", "max_tokens");
    return false;
  }
  engine::SamplingParams& s = out->generate.sampling;
  if (!f.Integer("max_tokens", 1, INT64_MAX, &max_tokens, error) ||
      !f.Number("temperature", 0, 1, &temperature, error) ||
      !f.Number("top_p", 0, 1, &top_p, error) || !f.Integer("top_k", 0, 1 << 30, &top_k, error) ||
      !f.StringOrList("stop_sequences", 64, &out->generate.stop, error) ||
      !f.Bool("stream", &out->stream, error)) {
    return false;
  }
  if (const Json* thinking = f.Get("thinking");
      thinking && StringOr(*thinking, "type") == "enabled" &&
      (*thinking)["budget_tokens"].get<int64_t>() >= max_tokens) {
    *error = BadRequest("'thinking.budget_tokens' must be less than max_tokens", "thinking");
    return false;
  }
  if (f.Get("top_p") != nullptr && top_p <= 0) {
    *error = BadRequest("'top_p' must be greater than 0", "top_p");
    return false;
  }
  s.max_tokens = max_tokens;
  s.temperature = temperature;
  s.top_p = top_p;
  s.top_k = static_cast<int>(top_k);
  out->generate.max_tokens_given = true;
  if (const Json* forced = f.Get("k3_forced_output")) {
    if (!options.allow_forced_output || !forced->is_string()) {
      *error = BadRequest("'k3_forced_output' needs a server started with --scripted-output",
                          "k3_forced_output");
      return false;
    }
    out->generate.forced_output = forced->get<std::string>();
  }
  out->generate.chat = std::move(chat);
  return true;
}

}  // namespace k3::api
