// Area "errors": requests the contracts say must be refused, and how. Each case is a valid base
// request with one thing broken; the answer must be the status named (400, 401, 404) in the
// protocol's own error shape (frontend spec §5.1 "Validation returns 400 with an OpenAI error
// object", KVV tests/params and k3_features; §5.3 for Anthropic).
#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kValidationArea = "errors";

struct BadCase {
  const char* name;
  const char* path;  // endpoint
  json patch;        // merged into the endpoint's base request (null deletes a field)
};

// Each patch breaks exactly one rule of the OpenAI chat contract.
std::vector<BadCase> ChatCases() {
  const json user = {{"role", "user"}, {"content", "hi"}};
  const json params = {{"type", "object"}};
  auto tool = [&](const char* name, json parameters) {
    return json{{"type", "function"}, {"function", {{"name", name}, {"parameters", parameters}}}};
  };
  const char* chat = "/v1/chat/completions";
  return {
      {"chat.temperature_above_2", chat, {{"temperature", 2.5}}},
      {"chat.temperature_negative", chat, {{"temperature", -0.1}}},
      {"chat.top_p_above_1", chat, {{"top_p", 1.5}}},
      {"chat.n_zero", chat, {{"n", 0}}},
      {"chat.max_tokens_zero", chat, {{"max_tokens", 0}}},
      {"chat.max_tokens_negative", chat, {{"max_tokens", -5}}},
      {"chat.presence_penalty_above_2", chat, {{"presence_penalty", 2.5}}},
      {"chat.frequency_penalty_below_-2", chat, {{"frequency_penalty", -2.5}}},
      {"chat.top_logprobs_without_logprobs", chat, {{"top_logprobs", 2}}},
      {"chat.top_logprobs_above_20", chat, {{"logprobs", true}, {"top_logprobs", 21}}},
      {"chat.unknown_role", chat, {{"messages", {{{"role", "wizard"}, {"content", "hi"}}}}}},
      {"chat.messages_not_a_list", chat, {{"messages", "hi"}}},
      {"chat.messages_missing", chat, {{"messages", nullptr}}},
      {"chat.message_not_an_object", chat, {{"messages", {"hi"}}}},
      {"chat.tool_message_without_tool_call_id",
       chat,
       {{"messages", {user, {{"role", "tool"}, {"content", "42"}}}}}},
      {"chat.tool_parameters_not_an_object", chat, {{"tools", {tool("f", "nope")}}}},
      {"chat.duplicate_tool_names", chat, {{"tools", {tool("f", params), tool("f", params)}}}},
      {"chat.tool_choice_unknown_value",
       chat,
       {{"tools", {tool("f", params)}}, {"tool_choice", "bogus"}}},
      {"chat.tool_choice_required_without_tools", chat, {{"tool_choice", "required"}}},
      {"chat.response_format_unknown_type", chat, {{"response_format", {{"type", "bogus"}}}}},
      {"chat.json_schema_without_schema",
       chat,
       {{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}}}}},
      {"chat.json_schema_strict_not_boolean",
       chat,
       {{"response_format",
         {{"type", "json_schema"},
          {"json_schema", {{"name", "x"}, {"strict", "yes"}, {"schema", params}}}}}}},
      {"chat.json_schema_schema_not_an_object",
       chat,
       {{"response_format",
         {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", "object"}}}}}}},
  };
}

std::vector<BadCase> OtherCases() {
  const char* completions = "/v1/completions";
  const char* messages = "/v1/messages";
  return {
      {"completions.prompt_missing", completions, {{"prompt", nullptr}}},
      {"completions.logprobs_above_5", completions, {{"logprobs", 6}}},
      {"completions.temperature_above_2", completions, {{"temperature", 3}}},
      {"messages.max_tokens_missing", messages, {{"max_tokens", nullptr}}},
      {"messages.temperature_above_1", messages, {{"temperature", 1.5}}},
      {"messages.messages_not_a_list", messages, {{"messages", "hi"}}},
      {"messages.unknown_role",
       messages,
       {{"messages", {{{"role", "wizard"}, {"content", "hi"}}}}}},
      {"messages.tool_without_input_schema",
       messages,
       {{"tools", {{{"name", "f"}, {"description", "no schema"}}}}}},
      {"messages.thinking_budget_below_1024",
       messages,
       {{"max_tokens", 4096}, {"thinking", {{"type", "enabled"}, {"budget_tokens", 10}}}}},
  };
}

json BaseBody(const CheckContext& ctx, const std::string& path) {
  if (path == "/v1/messages") return MessagesBody(ctx, "hi", 4);
  if (path == "/v1/completions") return {{"model", ctx.model}, {"prompt", "hi"}, {"max_tokens", 4}};
  return ChatBody(ctx, "hi", 4);
}

CheckResult RunBadCase(const CheckContext& ctx, const BadCase& bad) {
  json body = BaseBody(ctx, bad.path);
  body.merge_patch(bad.patch);
  const Reply reply = ctx.client->Post(bad.path, body);
  const ErrorShape shape =
      std::string(bad.path) == "/v1/messages" ? ErrorShape::kAnthropic : ErrorShape::kOpenAI;
  return PassUnless(kValidationArea, bad.name, ExpectError(reply, 400, shape));
}

CheckList BodyAndEndpointChecks(const CheckContext& ctx) {
  CheckList out;
  Reply reply = ctx.client->Send("POST", "/v1/chat/completions", "{\"model\": ");
  out.push_back(PassUnless(kValidationArea, "chat.body_not_json",
                           ExpectError(reply, 400, ErrorShape::kOpenAI)));
  reply = ctx.client->Send("POST", "/v1/messages", "{\"model\": ");
  out.push_back(PassUnless(kValidationArea, "messages.body_not_json",
                           ExpectError(reply, 400, ErrorShape::kAnthropic)));
  reply = ctx.client->Get("/v1/k3-verify-no-such-endpoint");
  out.push_back(PassUnless(kValidationArea, "unknown_endpoint_404",
                           ExpectError(reply, 404, ErrorShape::kAny)));
  return out;
}

// With --api-key: a wrong key and a missing key are 401 in each protocol's shape, and the right
// key in x-api-key alone (what Anthropic clients send) is accepted.
CheckList AuthChecks(const CheckContext& ctx) {
  const char* names[] = {"auth.wrong_key_chat", "auth.missing_key_chat", "auth.wrong_key_messages",
                         "auth.wrong_key_models"};
  CheckList out;
  if (!ctx.has_api_key) {
    for (const char* name : names) out.push_back(Skip(kValidationArea, name, "no --api-key given"));
    return out;
  }
  const json chat = ChatBody(ctx, "hi", 4);
  out.push_back(PassUnless(kValidationArea, names[0],
                           ExpectError(ctx.client->Post("/v1/chat/completions", chat, Auth::kWrong),
                                       401, ErrorShape::kOpenAI)));
  out.push_back(PassUnless(kValidationArea, names[1],
                           ExpectError(ctx.client->Post("/v1/chat/completions", chat, Auth::kNone),
                                       401, ErrorShape::kOpenAI)));
  out.push_back(PassUnless(
      kValidationArea, names[2],
      ExpectError(ctx.client->Post("/v1/messages", MessagesBody(ctx, "hi", 4), Auth::kWrong), 401,
                  ErrorShape::kAnthropic)));
  out.push_back(PassUnless(
      kValidationArea, names[3],
      ExpectError(ctx.client->Get("/v1/models", Auth::kWrong), 401, ErrorShape::kOpenAI)));
  return out;
}

}  // namespace

CheckList RunValidationChecks(const CheckContext& ctx) {
  CheckList out;
  for (const auto& cases : {ChatCases(), OtherCases()}) {
    for (const BadCase& bad : cases) out.push_back(RunBadCase(ctx, bad));
  }
  for (auto& result : BodyAndEndpointChecks(ctx)) out.push_back(std::move(result));
  for (auto& result : AuthChecks(ctx)) out.push_back(std::move(result));
  return out;
}

}  // namespace k3::verify
