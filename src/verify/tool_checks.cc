// Area "tools": tool_choice semantics and the tool-call shape (frontend spec §5.1 tool_choice,
// parallel_tool_calls; §3.1 ids; KVV tool_call_json_schema). The tools are strict, so a
// conforming server's arguments must validate against their schemas.
#include <regex>
#include <set>

#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kToolArea = "tools";

// One non-streamed request with WeatherTools() and the given tool_choice fields.
struct ToolAnswer {
  std::string error;  // transport, status or shape problem
  ChatStreamSummary answer;
};

ToolAnswer AskWithTools(const CheckContext& ctx, const json& extra) {
  json body = ChatBody(ctx, "What is the weather in Paris for the next 3 days?", ctx.max_tokens);
  body["tools"] = WeatherTools();
  body["temperature"] = 0;
  body["seed"] = 7;
  body.merge_patch(extra);
  ToolAnswer out;
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  if (auto e = ExpectOkJson(reply); !e.empty()) {
    out.error = e;
  } else if (auto e2 = ReadChatCompletion(reply.json, &out.answer); !e2.empty()) {
    out.error = "bad chat.completion: " + e2;
  }
  return out;
}

std::string CallNames(const ChatStreamSummary& answer) {
  std::string names;
  for (const auto& call : answer.tool_calls) names += (names.empty() ? "" : ",") + call.name;
  return "[" + names + "]";
}

// The contract of a forced call: finish_reason tool_calls, at least one call, valid arguments.
std::string ForcedCallError(const ToolAnswer& asked) {
  if (!asked.error.empty()) return asked.error;
  const ChatStreamSummary& answer = asked.answer;
  if (answer.tool_calls.empty()) {
    return "expected at least one tool call, got none (finish_reason '" + answer.finish_reason +
           "', content '" + answer.content.substr(0, 80) + "')";
  }
  if (answer.finish_reason != "tool_calls") {
    return "expected finish_reason tool_calls, got '" + answer.finish_reason + "'";
  }
  return ValidateToolCalls(answer.tool_calls, WeatherTools());
}

CheckResult RequiredCheck(const CheckContext& ctx) {
  return PassUnless(kToolArea, "tool_choice_required",
                    ForcedCallError(AskWithTools(ctx, {{"tool_choice", "required"}})));
}

CheckResult NamedCheck(const CheckContext& ctx) {
  const json choice = {{"type", "function"}, {"function", {{"name", "get_time"}}}};
  const ToolAnswer asked = AskWithTools(ctx, {{"tool_choice", choice}});
  std::string error = ForcedCallError(asked);
  for (const auto& call : asked.answer.tool_calls) {
    if (error.empty() && call.name != "get_time") {
      error = "expected only get_time calls, got " + CallNames(asked.answer);
    }
  }
  return PassUnless(kToolArea, "tool_choice_named_function", error);
}

CheckResult NoneCheck(const CheckContext& ctx) {
  const ToolAnswer asked = AskWithTools(ctx, {{"tool_choice", "none"}});
  std::string error = asked.error;
  if (error.empty() && !asked.answer.tool_calls.empty()) {
    error = "expected no tool calls, got " + CallNames(asked.answer);
  } else if (error.empty() && asked.answer.finish_reason == "tool_calls") {
    error = "finish_reason tool_calls with tool_choice none";
  } else if (error.empty() && asked.answer.content.find("<|tool_call") != std::string::npos) {
    error = "raw tool-call markup leaked into content";
  }
  return PassUnless(kToolArea, "tool_choice_none", error);
}

CheckResult ParallelFalseCheck(const CheckContext& ctx) {
  const ToolAnswer asked =
      AskWithTools(ctx, {{"tool_choice", "required"}, {"parallel_tool_calls", false}});
  std::string error = ForcedCallError(asked);
  if (error.empty() && asked.answer.tool_calls.size() > 1) {
    error = "parallel_tool_calls false allows at most one call, got " + CallNames(asked.answer);
  }
  return PassUnless(kToolArea, "parallel_tool_calls_false", error);
}

// OpenAI: type "function", id a non-empty string unique in the response. Kimi (spec §3.1):
// ids are functions.NAME:IDX with NAME the called function and IDX a conversation-global
// counter, so within one turn the indices are distinct and increase.
CheckResult IdCheck(const CheckContext& ctx) {
  const ToolAnswer asked = AskWithTools(ctx, {{"tool_choice", "required"}});
  if (!asked.error.empty()) return Fail(kToolArea, "tool_call_ids", asked.error);
  if (asked.answer.tool_calls.empty())
    return Fail(kToolArea, "tool_call_ids", "no tool call to check");
  static const std::regex kKimiId(R"(functions\.([A-Za-z0-9_\-\.]+):([0-9]+))");
  std::set<std::string> seen;
  long last_idx = -1;
  for (const auto& call : asked.answer.tool_calls) {
    if (call.type != "function")
      return Fail(kToolArea, "tool_call_ids", "type '" + call.type + "'");
    if (call.id.empty() || !seen.insert(call.id).second) {
      return Fail(kToolArea, "tool_call_ids", "empty or repeated id '" + call.id + "'");
    }
    std::smatch match;
    if (!std::regex_match(call.id, match, kKimiId) || match[1] != call.name) {
      return Fail(kToolArea, "tool_call_ids",
                  "id '" + call.id + "' is not functions." + call.name + ":IDX (Kimi id format)");
    }
    const long idx = std::stol(match[2]);
    if (idx <= last_idx)
      return Fail(kToolArea, "tool_call_ids", "indices do not increase: " + call.id);
    last_idx = idx;
  }
  return Pass(kToolArea, "tool_call_ids");
}

// A finished tool round trip: the assistant's call and the tool's result sent back are accepted
// and answered (spec §5.1 messages: tool_calls with string arguments, tool messages).
CheckResult RoundTripCheck(const CheckContext& ctx) {
  json body = ChatBody(ctx, "Weather in Paris?", 8);
  body["tools"] = WeatherTools();
  const json call = {
      {"id", "functions.get_weather:0"},
      {"type", "function"},
      {"function", {{"name", "get_weather"}, {"arguments", R"({"city":"Paris","days":3})"}}}};
  body["messages"].push_back({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}});
  body["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", "functions.get_weather:0"}, {"content", "sunny, 21C"}});
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  std::string error = ExpectOkJson(reply);
  ChatStreamSummary answer;
  if (error.empty()) error = ReadChatCompletion(reply.json, &answer);
  return PassUnless(kToolArea, "tool_result_round_trip", error);
}

}  // namespace

CheckList RunToolChecks(const CheckContext& ctx) {
  CheckList out = {RequiredCheck(ctx),      NamedCheck(ctx), NoneCheck(ctx),
                   ParallelFalseCheck(ctx), IdCheck(ctx),    RoundTripCheck(ctx)};
  for (CheckResult& r : RunDynamicToolChecks(ctx)) out.push_back(std::move(r));
  return out;
}

}  // namespace k3::verify
