// Area "tools", the dynamic-tool contract (K3: `tools` declared in a system message with empty
// content; Kimi Vendor Verifier tests/k3_features/test_dynamic_tools.py, frontend spec §4.2):
// tool_choice "required" with only dynamic tools yields a call of one of them; entries without
// "type", names outside ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$, and dynamic tools on a user message are
// a 400 in OpenAI's error shape.
#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kToolArea = "tools";

// A chat body whose first message is a system message declaring `tools` (role `role`).
json DynamicBody(const CheckContext& ctx, const json& tools, const std::string& role = "system") {
  json body = ChatBody(ctx, "What is the weather in Paris for the next 3 days?", ctx.max_tokens);
  body["messages"].insert(body["messages"].begin(),
                          json{{"role", role}, {"content", ""}, {"tools", tools}});
  return body;
}

std::string RequiredOnlyDynamicError(const CheckContext& ctx) {
  const json tools = WeatherTools();
  json body = DynamicBody(ctx, tools);
  body["tool_choice"] = "required";
  body["temperature"] = 0;
  body["seed"] = 5;
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  if (auto e = ExpectOkJson(reply); !e.empty()) return e;
  ChatStreamSummary answer;
  if (auto e = ReadChatCompletion(reply.json, &answer); !e.empty()) return e;
  if (answer.tool_calls.empty()) {
    return "expected a call of a dynamic tool, got none (finish_reason '" + answer.finish_reason +
           "')";
  }
  if (answer.finish_reason != "tool_calls") {
    return "expected finish_reason tool_calls, got '" + answer.finish_reason + "'";
  }
  return ValidateToolCalls(answer.tool_calls, tools);
}

std::string Refused(const CheckContext& ctx, const json& body) {
  return ExpectError(ctx.client->Post("/v1/chat/completions", body), 400, ErrorShape::kOpenAI);
}

json NamedTool(const std::string& name) {
  return {{"type", "function"},
          {"function", {{"name", name}, {"parameters", {{"type", "object"}}}}}};
}

}  // namespace

CheckList RunDynamicToolChecks(const CheckContext& ctx) {
  json untyped = NamedTool("lookup");
  untyped.erase("type");
  return {
      PassUnless(kToolArea, "dynamic_tools_required", RequiredOnlyDynamicError(ctx)),
      PassUnless(kToolArea, "dynamic_tools_missing_type",
                 Refused(ctx, DynamicBody(ctx, json::array({untyped})))),
      PassUnless(kToolArea, "dynamic_tools_name_leading_digit",
                 Refused(ctx, DynamicBody(ctx, json::array({NamedTool("1lookup")})))),
      PassUnless(kToolArea, "dynamic_tools_name_with_dot",
                 Refused(ctx, DynamicBody(ctx, json::array({NamedTool("a.b")})))),
      PassUnless(kToolArea, "dynamic_tools_on_user_message",
                 Refused(ctx, DynamicBody(ctx, json::array({NamedTool("lookup")}), "user"))),
      PassUnless(kToolArea, "dynamic_tools_duplicate_name",
                 Refused(ctx, DynamicBody(ctx, json::array({NamedTool("x"), NamedTool("x")})))),
  };
}

}  // namespace k3::verify
