// Area "usage": token accounting and the length limit (frontend spec §5.1 max_tokens /
// max_completion_tokens, n, logprobs; OpenAI usage object).
#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kUsageArea = "usage";

// Sends `body`, reads choice 0; "" or what went wrong.
std::string Ask(const CheckContext& ctx, const json& body, Reply* reply,
                ChatStreamSummary* answer) {
  *reply = ctx.client->Post("/v1/chat/completions", body);
  if (auto e = ExpectOkJson(*reply); !e.empty()) return e;
  return ReadChatCompletion(reply->json, answer);
}

CheckResult TotalsCheck(const CheckContext& ctx) {
  Reply reply;
  ChatStreamSummary answer;
  std::string error = Ask(ctx, ChatBody(ctx, "Count to five.", 16), &reply, &answer);
  if (error.empty()) error = ChatUsageError(answer.usage, 16);
  return PassUnless(kUsageArea, "usage_totals", error);
}

// A 3-token budget the random or rambling answer will hit: finish_reason "length" exactly when
// completion_tokens reached the limit.
CheckResult LengthCheck(const CheckContext& ctx, const char* name, const char* limit_field) {
  constexpr int kLimit = 3;
  json body = ChatBody(ctx, "Write a long essay about the sea.", kLimit);
  if (std::string(limit_field) != "max_tokens") {
    body.erase("max_tokens");
    body[limit_field] = kLimit;
  }
  Reply reply;
  ChatStreamSummary answer;
  if (auto e = Ask(ctx, body, &reply, &answer); !e.empty()) return Fail(kUsageArea, name, e);
  if (auto e = ChatUsageError(answer.usage, kLimit); !e.empty()) return Fail(kUsageArea, name, e);
  const int64_t used = answer.usage["completion_tokens"];
  if (answer.finish_reason == "length" && used != kLimit) {
    return Fail(kUsageArea, name,
                "finish_reason length with completion_tokens " + std::to_string(used) +
                    " below the limit " + std::to_string(kLimit));
  }
  if (used == kLimit && answer.finish_reason != "length" && answer.finish_reason != "stop") {
    return Fail(kUsageArea, name,
                "the limit was reached but finish_reason is '" + answer.finish_reason + "'");
  }
  if (answer.finish_reason != "length") {
    return Skip(kUsageArea, name,
                "the model stopped before the limit (finish_reason " + answer.finish_reason + ")");
  }
  return Pass(kUsageArea, name);
}

// n = 2: one choice per index (or, as Kimi's own API does, a 400 refusing n != 1).
CheckResult TwoChoicesCheck(const CheckContext& ctx) {
  json body = ChatBody(ctx, "Say something.", 4);
  body["n"] = 2;
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  if (reply.status == 400) {
    return PassUnless(kUsageArea, "n_2_choices", ExpectError(reply, 400, ErrorShape::kOpenAI));
  }
  if (auto e = ExpectOkJson(reply); !e.empty()) return Fail(kUsageArea, "n_2_choices", e);
  const json choices = reply.json.value("choices", json());
  if (!choices.is_array() || choices.size() != 2 || choices[0].value("index", -1) != 0 ||
      choices[1].value("index", -1) != 1) {
    return Fail(kUsageArea, "n_2_choices",
                "expected choices with index 0 and 1: " + Describe(reply));
  }
  return PassUnless(kUsageArea, "n_2_choices",
                    ChatUsageError(reply.json.value("usage", json()), 8));
}

// logprobs + top_logprobs 2: choices[0].logprobs.content[] = {token, logprob <= 0, bytes,
// top_logprobs[2]} (spec §5.1 logprobs).
CheckResult LogprobsCheck(const CheckContext& ctx) {
  json body = ChatBody(ctx, "Say something.", 6);
  body["logprobs"] = true;
  body["top_logprobs"] = 2;
  body["chat_template_kwargs"] = {{"thinking", false}};  // the tokens land in content
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  if (auto e = ExpectOkJson(reply); !e.empty()) return Fail(kUsageArea, "chat_logprobs_shape", e);
  const json choices = reply.json.value("choices", json::array());
  const json choice = choices.is_array() && !choices.empty() ? choices[0] : json();
  const json logprobs = choice.is_object() ? choice.value("logprobs", json()) : json();
  const json content = logprobs.is_object() ? logprobs.value("content", json()) : json();
  if (!content.is_array() || content.empty()) {
    return Fail(kUsageArea, "chat_logprobs_shape",
                "no choices[0].logprobs.content[]: " + Describe(reply));
  }
  for (const auto& entry : content) {
    const bool ok =
        entry.is_object() && entry.value("token", json()).is_string() &&
        entry.value("logprob", json()).is_number() && entry["logprob"].get<double>() <= 0 &&
        entry.value("bytes", json()).is_array() && entry.value("top_logprobs", json()).is_array() &&
        entry["top_logprobs"].size() == 2;
    if (!ok) return Fail(kUsageArea, "chat_logprobs_shape", "bad entry " + entry.dump());
  }
  return Pass(kUsageArea, "chat_logprobs_shape");
}

}  // namespace

CheckList RunUsageChecks(const CheckContext& ctx) {
  return {TotalsCheck(ctx), LengthCheck(ctx, "finish_length_at_max_tokens", "max_tokens"),
          LengthCheck(ctx, "finish_length_at_max_completion_tokens", "max_completion_tokens"),
          TwoChoicesCheck(ctx), LogprobsCheck(ctx)};
}

}  // namespace k3::verify
