#include "api/anthropic_request.h"

#include <map>

#include "api/fields.h"
#include "api/openai_request_internal.h"

namespace k3::api {
namespace {

struct Converter {
  std::map<std::string, std::string> renamed;  // client tool_use id -> functions.{name}:{n}
  ApiError* error;

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

  bool UserBlocks(const Json& content, const std::string& where, Json* messages) {
    Json parts = Json::array();
    for (const Json& block : content) {
      const std::string type = StringOr(block, "type");
      if (type == "text" && block.contains("text") && block["text"].is_string()) {
        parts.push_back({{"type", "text"}, {"text", block["text"]}});
      } else if (type == "image") {
        parts.push_back({{"type", "image_url"}, {"image_url", {{"url", ""}}}});
      } else if (type == "tool_result") {
        const std::string id = StringOr(block, "tool_use_id");
        if (id.empty()) return Fail(where + ": tool_result needs tool_use_id", where);
        std::string result;
        if (block.contains("content") && !Text(block["content"], where, &result)) return false;
        auto it = renamed.find(id);
        messages->push_back({{"role", "tool"},
                             {"tool_call_id", it == renamed.end() ? id : it->second},
                             {"content", result}});
      } else {
        return Fail(where + ": unsupported content block type '" + type + "'", where);
      }
    }
    if (!parts.empty()) messages->push_back({{"role", "user"}, {"content", parts}});
    return true;
  }

  bool AssistantBlocks(const Json& content, const std::string& where, Json* messages) {
    Json message = {{"role", "assistant"}, {"content", ""}};
    std::string text, reasoning;
    Json calls = Json::array();
    for (const Json& block : content) {
      const std::string type = StringOr(block, "type");
      if (type == "text" && block.contains("text") && block["text"].is_string()) {
        text += block["text"].get<std::string>();
      } else if (type == "thinking" && block.contains("thinking") &&
                 block["thinking"].is_string()) {
        reasoning += block["thinking"].get<std::string>();
      } else if (type == "redacted_thinking") {
        continue;  // opaque to us
      } else if (type == "tool_use" && block.contains("name") && block["name"].is_string()) {
        const std::string name = block["name"];
        const std::string id = "functions." + name + ":" + std::to_string(calls.size() + calls_);
        if (block.contains("id") && !block["id"].is_string()) {
          return Fail(where + ": tool_use.id must be a string", where);
        }
        renamed[StringOr(block, "id", id)] = id;
        const Json input = block.contains("input") ? block["input"] : Json::object();
        calls.push_back({{"id", id},
                         {"type", "function"},
                         {"function", {{"name", name}, {"arguments", Dump(input)}}}});
      } else {
        return Fail(where + ": unsupported assistant block type '" + type + "'", where);
      }
    }
    calls_ += static_cast<int>(calls.size());
    message["content"] = text;
    if (!reasoning.empty()) message["reasoning_content"] = reasoning;
    if (!calls.empty()) message["tool_calls"] = std::move(calls);
    messages->push_back(std::move(message));
    return true;
  }

  static std::string Dump(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }

  int calls_ = 0;
};

bool ConvertTools(const Json& body, Json* chat, ApiError* error) {
  Fields f(body);
  if (const Json* tools = f.Get("tools")) {
    if (!tools->is_array()) {
      *error = BadRequest("'tools' must be a list", "tools");
      return false;
    }
    Json out = Json::array();
    for (const Json& tool : *tools) {
      if (!tool.is_object() || StringOr(tool, "name").empty()) {
        *error = BadRequest("tools[] need a string 'name'", "tools");
        return false;
      }
      // Client tools must declare input_schema (Anthropic answers 400 without one); server
      // tools (a "type" such as web_search_...) are not something this server runs.
      if (tool.contains("type") && tool["type"] != "custom") {
        *error = BadRequest("tools[]: only client tools (type \"custom\") are supported", "tools");
        return false;
      }
      const auto schema = tool.find("input_schema");
      if (schema == tool.end() || !schema->is_object()) {
        *error = BadRequest("tools[] need an 'input_schema' object", "tools");
        return false;
      }
      Json function = {{"name", tool["name"]}};
      if (tool.contains("description")) function["description"] = tool["description"];
      function["parameters"] = *schema;
      out.push_back({{"type", "function"}, {"function", function}});
    }
    (*chat)["tools"] = std::move(out);
  }
  if (const Json* choice = f.Get("tool_choice")) {
    const std::string type = StringOr(*choice, "type");
    if (type == "auto")
      (*chat)["tool_choice"] = "auto";
    else if (type == "any")
      (*chat)["tool_choice"] = "required";
    else if (type == "none")
      (*chat)["tool_choice"] = "none";
    else if (type == "tool" && choice->contains("name")) {
      (*chat)["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*choice)["name"]}}}};
    } else {
      *error = BadRequest("'tool_choice.type' must be auto, any, tool or none", "tool_choice");
      return false;
    }
    bool disable_parallel = false;
    if (!Fields(*choice, "tool_choice")
             .Bool("disable_parallel_tool_use", &disable_parallel, error)) {
      return false;
    }
    if (disable_parallel) (*chat)["parallel_tool_calls"] = false;
  }
  return true;
}

bool ConvertThinking(const Json& body, Json* chat, ApiError* error) {
  const Json* thinking = Fields(body).Get("thinking");
  if (thinking == nullptr) return true;
  const std::string type = StringOr(*thinking, "type");
  if (type == "disabled") {
    (*chat)["thinking"] = {{"type", "disabled"}};
    return true;
  }
  if (type != "enabled") {
    *error = BadRequest("'thinking.type' must be 'enabled' or 'disabled'", "thinking");
    return false;
  }
  const Json budget = thinking->contains("budget_tokens") ? (*thinking)["budget_tokens"] : Json();
  if (!budget.is_number_integer() || budget.get<int64_t>() < 1024) {
    *error = BadRequest("'thinking.budget_tokens' must be an integer >= 1024", "thinking");
    return false;
  }
  (*chat)["thinking"] = {{"type", "enabled"}};
  return true;
}

}  // namespace

bool ParseCountTokensRequest(const Json& body, Json* chat, ApiError* error) {
  if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array()) {
    *error = BadRequest("'messages' must be a list", "messages");
    return false;
  }
  Converter convert{.error = error};
  Json messages = Json::array();
  if (const Json* system = Fields(body).Get("system")) {
    std::string text;
    if (!convert.Text(*system, "system", &text)) return false;
    messages.push_back({{"role", "system"}, {"content", text}});
  }
  const Json& input = body["messages"];
  for (size_t i = 0; i < input.size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    const Json& m = input[i];
    const std::string role = StringOr(m, "role");
    if ((role != "user" && role != "assistant") || !m.contains("content")) {
      *error = BadRequest(where + " needs role user or assistant and content", where);
      return false;
    }
    const Json& content = m["content"];
    if (content.is_string()) {
      messages.push_back({{"role", role}, {"content", content}});
    } else if (!content.is_array()) {
      *error = BadRequest(where + ".content must be a string or a list of blocks", where);
      return false;
    } else if (role == "user" ? !convert.UserBlocks(content, where, &messages)
                              : !convert.AssistantBlocks(content, where, &messages)) {
      return false;
    }
  }
  *chat = {{"messages", std::move(messages)}};
  return ConvertTools(body, chat, error) && ConvertThinking(body, chat, error) &&
         ValidateMessages((*chat)["messages"], error) && ValidateChatExtras(*chat, error);
}

bool ParseMessagesRequest(const Json& body, const ApiOptions& options, AnthropicRequest* out,
                          ApiError* error) {
  Json chat;
  if (!ParseCountTokensRequest(body, &chat, error)) return false;
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
