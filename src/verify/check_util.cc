#include "verify/check_util.h"

#include "verify/json_schema_lite.h"

namespace k3::verify {
namespace {

using nlohmann::json;

bool IsString(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string();
}

std::string OpenAIShape(const json& body) {
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) {
    return "no {\"error\": {...}} object";
  }
  const json& error = body["error"];
  if (!IsString(error, "message") || error["message"].get<std::string>().empty()) {
    return "error.message is not a non-empty string";
  }
  if (!IsString(error, "type")) return "error.type is not a string";
  if (!error.contains("param") || !error.contains("code")) return "error lacks param or code";
  return "";
}

std::string AnthropicShape(const json& body) {
  if (!body.is_object() || body.value("type", json()) != "error") return "type is not \"error\"";
  if (!body.contains("error") || !body["error"].is_object()) return "no error object";
  if (!IsString(body["error"], "type")) return "error.type is not a string";
  if (!IsString(body["error"], "message")) return "error.message is not a string";
  return "";
}

}  // namespace

json ChatBody(const CheckContext& ctx, const std::string& user_text, int max_tokens) {
  return {{"model", ctx.model},
          {"messages", json::array({{{"role", "user"}, {"content", user_text}}})},
          {"max_tokens", max_tokens}};
}

json MessagesBody(const CheckContext& ctx, const std::string& user_text, int max_tokens) {
  return {{"model", ctx.model},
          {"max_tokens", max_tokens},
          {"messages", json::array({{{"role", "user"}, {"content", user_text}}})}};
}

std::string ExpectError(const Reply& reply, int status, ErrorShape shape) {
  const std::string wanted = "expected HTTP " + std::to_string(status);
  if (reply.status != status) return wanted + ", got " + Describe(reply);
  if (!reply.is_json) return wanted + " with a JSON error body, got " + Describe(reply);
  const std::string openai = OpenAIShape(reply.json);
  const std::string anthropic = AnthropicShape(reply.json);
  switch (shape) {
    case ErrorShape::kOpenAI:
      return openai.empty() ? ""
                            : "not the OpenAI error shape (" + openai + "): " + Describe(reply);
    case ErrorShape::kAnthropic:
      return anthropic.empty()
                 ? ""
                 : "not the Anthropic error shape (" + anthropic + "): " + Describe(reply);
    case ErrorShape::kAny:
      return openai.empty() || anthropic.empty() ? "" : "no known error shape: " + Describe(reply);
  }
  return "";
}

std::string ExpectOkJson(const Reply& reply) {
  if (reply.status != 200 || !reply.is_json)
    return "expected HTTP 200 JSON, got " + Describe(reply);
  return "";
}

std::string ReadChatCompletion(const json& body, ChatStreamSummary* answer) {
  *answer = ChatStreamSummary{};
  if (body.value("object", json()) != "chat.completion") return "object is not chat.completion";
  answer->id = body.value("id", "");
  if (!body.contains("choices") || !body["choices"].is_array() || body["choices"].empty()) {
    return "no choices";
  }
  const json& choice = body["choices"][0];
  const json message = choice.value("message", json());
  if (!message.is_object() || message.value("role", json()) != "assistant") {
    return "choices[0].message.role is not assistant";
  }
  auto text = [&](const char* key) {
    return IsString(message, key) ? message[key].get<std::string>() : "";
  };
  answer->content = text("content");
  answer->reasoning_content = text("reasoning_content");
  answer->finish_reason = choice.value("finish_reason", json()).is_string()
                              ? choice["finish_reason"].get<std::string>()
                              : "";
  answer->usage = body.value("usage", json());
  json calls = message.value("tool_calls", json::array());
  if (calls.is_null()) calls = json::array();
  if (!calls.is_array()) return "message.tool_calls is not an array";
  for (const auto& call : calls) {
    const json function = call.value("function", json());
    if (!IsString(call, "id") || !IsString(call, "type") || !IsString(function, "name") ||
        !IsString(function, "arguments")) {
      return "a tool call without string id, type, function.name and function.arguments: " +
             call.dump();
    }
    answer->tool_calls.push_back(
        {call["id"], call["type"], function["name"], function["arguments"]});
  }
  return "";
}

std::string ValidateToolCalls(const std::vector<StreamedToolCall>& calls, const json& tools) {
  for (const StreamedToolCall& call : calls) {
    const json* schema = nullptr;
    for (const auto& tool : tools) {
      if (tool["function"]["name"] == call.name) schema = &tool["function"]["parameters"];
    }
    if (schema == nullptr) return "a call to the undeclared tool '" + call.name + "'";
    const json args = json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
    if (args.is_discarded()) return call.name + " arguments are not JSON: " + call.arguments;
    if (auto e = ValidateSchema(*schema, args); !e.empty()) {
      return call.name + " arguments " + call.arguments + " break the schema: " + e;
    }
  }
  return "";
}

// "" when usage has integer prompt/completion/total tokens with total = prompt + completion
// and completion <= max_tokens.
std::string ChatUsageError(const json& usage, int max_tokens) {
  if (!usage.is_object()) return "no usage object";
  for (const char* key : {"prompt_tokens", "completion_tokens", "total_tokens"}) {
    if (!usage.contains(key) || !usage[key].is_number_integer()) {
      return std::string("usage.") + key + " is not an integer: " + usage.dump();
    }
  }
  const int64_t prompt = usage["prompt_tokens"], completion = usage["completion_tokens"];
  if (prompt <= 0) return "usage.prompt_tokens is not positive: " + usage.dump();
  if (usage["total_tokens"].get<int64_t>() != prompt + completion) {
    return "total_tokens != prompt_tokens + completion_tokens: " + usage.dump();
  }
  if (completion > max_tokens) {
    return "completion_tokens " + std::to_string(completion) + " > max_tokens " +
           std::to_string(max_tokens);
  }
  return "";
}

json WeatherTools() {
  const json weather = {{"type", "object"},
                        {"properties",
                         {{"city", {{"type", "string"}}},
                          {"days", {{"type", "integer"}, {"minimum", 1}, {"maximum", 7}}}}},
                        {"required", {"city", "days"}},
                        {"additionalProperties", false}};
  const json time = {{"type", "object"},
                     {"properties", {{"zone", {{"type", "string"}, {"enum", {"UTC", "CET"}}}}}},
                     {"required", {"zone"}},
                     {"additionalProperties", false}};
  auto tool = [](const char* name, const char* description, const json& parameters) {
    return json{{"type", "function"},
                {"function",
                 {{"name", name},
                  {"description", description},
                  {"parameters", parameters},
                  {"strict", true}}}};
  };
  return json::array({tool("get_weather", "Weather forecast for a city", weather),
                      tool("get_time", "Current time in a zone", time)});
}

}  // namespace k3::verify
