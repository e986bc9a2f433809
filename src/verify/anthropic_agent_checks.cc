// Area "anthropic", the request shapes Claude Code sends (issue 19): adaptive thinking with
// output_config.effort, a system message inside `messages`, images / text documents / search
// results inside tool_result, and the two context-limit 400s in Anthropic's wording (Claude Code
// parses them to recover). Area "reasoning": OpenAI reasoning_effort takes none..max.
#include <regex>

#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kAgentArea = "anthropic";

json AgentBody(const CheckContext& ctx) { return MessagesBody(ctx, "Say hello.", 8); }

std::string ExpectOkMessage(const Reply& reply) {
  std::string error = ExpectOkJson(reply);
  if (error.empty() && reply.json.value("type", "") != "message") {
    error = "not a message: " + Describe(reply);
  }
  return error;
}

CheckResult AdaptiveThinking(const CheckContext& ctx) {
  json body = AgentBody(ctx);
  body["thinking"] = {{"type", "adaptive"}};
  body["output_config"] = {{"effort", "medium"}};
  body["context_management"] = {{"edits", json::array()}};
  body["metadata"] = {{"user_id", "k3-verify"}};
  return PassUnless(kAgentArea, "messages_adaptive_thinking_effort",
                    ExpectOkMessage(ctx.client->Post("/v1/messages", body)));
}

CheckResult SystemInMessages(const CheckContext& ctx) {
  json body = AgentBody(ctx);
  body["messages"].push_back({{"role", "assistant"}, {"content", "Hello! How can I help?"}});
  body["messages"].push_back({{"role", "system"}, {"content", "Answer in French."}});
  body["messages"].push_back({{"role", "user"}, {"content", "Say hello again."}});
  return PassUnless(kAgentArea, "messages_system_role_inside_messages",
                    ExpectOkMessage(ctx.client->Post("/v1/messages", body)));
}

// A tool turn whose result carries `content` (a list of blocks).
json AfterToolCall(const CheckContext& ctx, const json& content) {
  json body = MessagesBody(ctx, "What is the weather in Paris?", 8);
  body["tools"] = json::parse(R"([{"name": "get_weather", "description": "Current weather",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}])");
  body["messages"].push_back(json::parse(R"({"role": "assistant", "content": [{"type": "tool_use",
    "id": "toolu_01k3v", "name": "get_weather", "input": {"city": "Paris"}}]})"));
  json result = {{"type", "tool_result"}, {"tool_use_id", "toolu_01k3v"}, {"content", content}};
  body["messages"].push_back({{"role", "user"}, {"content", json::array({result})}});
  return body;
}

CheckList ToolResultBlocks(const CheckContext& ctx) {
  const std::string png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJg"
      "gg==";
  const json image = {
      {{"type", "text"}, {"text", "The radar:"}},
      {{"type", "image"},
       {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", png}}}}};
  const json text = {
      {{"type", "document"},
       {"title", "Forecast"},
       {"source", {{"type", "text"}, {"media_type", "text/plain"}, {"data", "Sunny, 21 C."}}}},
      {{"type", "search_result"},
       {"source", "https://example.com/weather"},
       {"title", "Paris weather"},
       {"content", {{{"type", "text"}, {"text", "21 C and sunny"}}}}}};
  return {PassUnless(kAgentArea, "messages_tool_result_image",
                     ExpectOkMessage(ctx.client->Post("/v1/messages", AfterToolCall(ctx, image)))),
          PassUnless(kAgentArea, "messages_tool_result_document_and_search_result",
                     ExpectOkMessage(ctx.client->Post("/v1/messages", AfterToolCall(ctx, text))))};
}

// "" when `reply` is an Anthropic 400 whose message matches `pattern`.
std::string ExpectContextError(const Reply& reply, const std::regex& pattern) {
  std::string error = ExpectError(reply, 400, ErrorShape::kAnthropic);
  if (!error.empty()) return error;
  const json& inner = reply.json["error"];
  const std::string message = inner.value("message", "");
  if (inner.value("type", "") != "invalid_request_error") return "type: " + Describe(reply);
  if (!std::regex_match(message, pattern)) return "wording: " + json(message).dump();
  return "";
}

CheckList ContextLimit(const CheckContext& ctx) {
  static const std::regex kInput(
      "input length and max_tokens exceed context limit: [0-9]+ \\+ 100000000 > [0-9]+, "
      "decrease input length or max_tokens and try again");
  static const std::regex kTooLong("prompt is too long: [0-9]+ tokens > [0-9]+ maximum");
  json body = AgentBody(ctx);
  body["max_tokens"] = 100000000;
  CheckList out = {PassUnless(kAgentArea, "messages_context_limit_max_tokens_wording",
                              ExpectContextError(ctx.client->Post("/v1/messages", body), kInput))};
  const Reply models = ctx.client->Get("/v1/models");
  const json data = models.is_json ? models.json.value("data", json::array()) : json::array();
  const json limit = data.is_array() && !data.empty() && data[0].is_object()
                         ? data[0].value("max_model_len", json())
                         : json();
  if (!limit.is_number_integer() || limit.get<int64_t>() > (1 << 20)) {
    out.push_back(Skip(kAgentArea, "messages_prompt_too_long_wording",
                       "no max_model_len of at most 1M tokens in /v1/models"));
    return out;
  }
  std::string words;  // at least one token per word, whatever the tokenizer
  for (int64_t i = 0; i <= limit.get<int64_t>(); ++i) words += "word ";
  body = MessagesBody(ctx, words, 8);
  out.push_back(PassUnless(kAgentArea, "messages_prompt_too_long_wording",
                           ExpectContextError(ctx.client->Post("/v1/messages", body), kTooLong)));
  return out;
}

CheckResult EffortVocabulary(const CheckContext& ctx) {
  std::string error;
  for (const char* effort : {"none", "minimal", "low", "medium", "high", "xhigh", "max"}) {
    json body = ChatBody(ctx, "Say hello.", 4);
    body["reasoning_effort"] = effort;
    const std::string failed = ExpectOkJson(ctx.client->Post("/v1/chat/completions", body));
    if (!failed.empty() && error.empty()) error = std::string(effort) + ": " + failed;
  }
  return PassUnless("reasoning", "reasoning_effort_none_to_max", error);
}

}  // namespace

CheckList RunAnthropicAgentChecks(const CheckContext& ctx) {
  CheckList out = {AdaptiveThinking(ctx), SystemInMessages(ctx)};
  for (auto& list : {ToolResultBlocks(ctx), ContextLimit(ctx)}) {
    for (const auto& result : list) out.push_back(result);
  }
  out.push_back(EffortVocabulary(ctx));
  return out;
}

}  // namespace k3::verify
