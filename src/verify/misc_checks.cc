// Areas "models" (GET /v1/models) and "reasoning" (frontend spec §5.1 messages: reasoning_content
// on assistant messages; §5.4 Kimi request extensions; KVV "thinking content is correctly passed
// back").
#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

std::string ModelsError(CheckContext& ctx) {
  const Reply reply = ctx.client->Get("/v1/models");
  if (auto e = ExpectOkJson(reply); !e.empty()) return e;
  const json& body = reply.json;
  if (body.value("object", json()) != "list" || !body.contains("data") ||
      !body["data"].is_array()) {
    return "not {\"object\": \"list\", \"data\": [...]}: " + Describe(reply);
  }
  std::string ids;
  for (const auto& model : body["data"]) {
    if (!model.is_object() || !model.contains("id") || !model["id"].is_string()) {
      return "a model entry without a string id: " + model.dump();
    }
    const std::string id = model["id"];
    if (ctx.model.empty()) ctx.model = id;  // no --model: verify the first one listed
    if (id == ctx.model) return "";
    ids += (ids.empty() ? "" : ", ") + id;
  }
  return "model '" + ctx.model + "' is not listed (got " + (ids.empty() ? "none" : ids) + ")";
}

// An assistant turn carrying reasoning, then a new user turn: the server must accept it.
json ReasoningConversation(const CheckContext& ctx) {
  json body = ChatBody(ctx, "What is 2+2?", 8);
  body["messages"].push_back({{"role", "assistant"},
                              {"content", "4"},
                              {"reasoning_content", "The user asks for 2+2, which is 4."}});
  body["messages"].push_back({{"role", "user"}, {"content", "And 3+3?"}});
  return body;
}

CheckResult ExtensionCheck(const CheckContext& ctx, const char* name, const json& patch) {
  json body = ChatBody(ctx, "hi", 4);
  body.merge_patch(patch);
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  ChatStreamSummary answer;
  std::string error = ExpectOkJson(reply);
  if (error.empty()) error = ReadChatCompletion(reply.json, &answer);
  return PassUnless("reasoning", name, error);
}

// The server's own answer, thinking blocks and their signatures as issued, sent back as history
// (a made-up signature is refused by servers that sign, Anthropic's included).
CheckResult ThinkingRoundTripMessages(const CheckContext& ctx) {
  json body = MessagesBody(ctx, "What is 2+2?", 8);
  const Reply first = ctx.client->Post("/v1/messages", body);
  if (auto e = ExpectOkJson(first); !e.empty()) {
    return Fail("reasoning", "messages_thinking_round_trip", "the first turn: " + e);
  }
  json content = first.json.value("content", json::array());
  if (!content.is_array() || content.empty()) content = {{{"type", "text"}, {"text", "4"}}};
  body["messages"].push_back({{"role", "assistant"}, {"content", content}});
  body["messages"].push_back({{"role", "user"}, {"content", "And 3+3?"}});
  const Reply reply = ctx.client->Post("/v1/messages", body);
  std::string error = ExpectOkJson(reply);
  if (error.empty() && reply.json.value("type", json()) != "message") {
    error = "not a message: " + Describe(reply);
  }
  return PassUnless("reasoning", "messages_thinking_round_trip", error);
}

}  // namespace

CheckList RunModelChecks(CheckContext& ctx) {
  return {PassUnless("models", "models_lists_model", ModelsError(ctx))};
}

CheckList RunReasoningChecks(const CheckContext& ctx) {
  return {
      ExtensionCheck(ctx, "chat_reasoning_content_round_trip", ReasoningConversation(ctx)),
      ExtensionCheck(ctx, "chat_template_kwargs_thinking_false",
                     {{"chat_template_kwargs", {{"thinking", false}}}}),
      ExtensionCheck(ctx, "thinking_object_disabled", {{"thinking", {{"type", "disabled"}}}}),
      ExtensionCheck(ctx, "reasoning_effort_low", {{"reasoning_effort", "low"}}),
      ThinkingRoundTripMessages(ctx),
  };
}

}  // namespace k3::verify
