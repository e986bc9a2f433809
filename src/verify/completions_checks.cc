// Area "completions": POST /v1/completions (frontend spec §5.2): the text_completion shape,
// echo, integer logprobs, and its stream.
#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kCompletionsArea = "completions";
constexpr const char* kPrompt = "The capital of France is";

json CompletionBody(const CheckContext& ctx, int max_tokens) {
  return {{"model", ctx.model},
          {"prompt", kPrompt},
          {"max_tokens", max_tokens},
          {"temperature", 0},
          {"seed", 3}};
}

// Choice 0's text of a text_completion, or "" with *error set.
std::string ReadText(const Reply& reply, std::string* error) {
  if (*error = ExpectOkJson(reply); !error->empty()) return "";
  const json& body = reply.json;
  const json choices = body.value("choices", json());
  if (body.value("object", json()) != "text_completion" || !choices.is_array() || choices.empty() ||
      !choices[0].is_object() || !choices[0].value("text", json()).is_string()) {
    *error = "not a text_completion with choices[0].text: " + Describe(reply);
    return "";
  }
  if (auto e = ChatUsageError(body.value("usage", json()), 8); !e.empty()) *error = e;
  return choices[0]["text"];
}

CheckResult BasicCheck(const CheckContext& ctx) {
  std::string error;
  ReadText(ctx.client->Post("/v1/completions", CompletionBody(ctx, 8)), &error);
  return PassUnless(kCompletionsArea, "completions_basic", error);
}

CheckResult EchoCheck(const CheckContext& ctx) {
  json body = CompletionBody(ctx, 4);
  body["echo"] = true;
  std::string error;
  const std::string text = ReadText(ctx.client->Post("/v1/completions", body), &error);
  if (error.empty() && !text.starts_with(kPrompt)) {
    error = "echo: text does not start with the prompt: '" + text.substr(0, 80) + "'";
  }
  return PassUnless(kCompletionsArea, "completions_echo", error);
}

// logprobs 2: {tokens, token_logprobs, top_logprobs, text_offset}, one entry per completion
// token, logprobs <= 0, at most logprobs + 1 alternatives, offsets non-decreasing. (Offsets are
// not compared with the text: with byte-level tokens, bytes and characters disagree.)
std::string LogprobsShapeError(const json& logprobs, const json& usage) {
  if (!logprobs.is_object() || !logprobs.value("tokens", json()).is_array()) {
    return "no choices[0].logprobs.tokens: " + logprobs.dump();
  }
  const size_t num_tokens = logprobs["tokens"].size();
  if (json(num_tokens) != usage.value("completion_tokens", json())) {
    return std::to_string(num_tokens) + " logprob tokens for " +
           usage.value("completion_tokens", json()).dump() + " completion tokens";
  }
  for (const char* key : {"token_logprobs", "top_logprobs", "text_offset"}) {
    if (!logprobs.value(key, json()).is_array() || logprobs[key].size() != num_tokens) {
      return std::string("logprobs.") + key + " missing or of another length";
    }
  }
  for (size_t idx = 0; idx < num_tokens; ++idx) {
    const json& logprob = logprobs["token_logprobs"][idx];
    const json& top = logprobs["top_logprobs"][idx];
    const json& offset = logprobs["text_offset"][idx];
    if (!logprobs["tokens"][idx].is_string() || !logprob.is_number() || logprob.get<double>() > 0 ||
        !top.is_object() || top.size() > 3 || !offset.is_number_integer() ||
        (idx > 0 && offset.get<int64_t>() < logprobs["text_offset"][idx - 1].get<int64_t>())) {
      return "bad entry " + std::to_string(idx) + " of " + logprobs.dump().substr(0, 200);
    }
  }
  return "";
}

CheckList LogprobsChecks(const CheckContext& ctx) {
  json body = CompletionBody(ctx, 6);
  body["logprobs"] = 2;
  const Reply reply = ctx.client->Post("/v1/completions", body);
  std::string error;
  const std::string text = ReadText(reply, &error);
  if (!error.empty()) {
    return {Fail(kCompletionsArea, "completions_logprobs", error),
            Fail(kCompletionsArea, "completions_special_tokens_in_text", error)};
  }
  const json logprobs = reply.json["choices"][0].value("logprobs", json());
  error = LogprobsShapeError(logprobs, reply.json["usage"]);
  // Raw completions carry the chat format's markers, so special tokens must survive in text
  // (spec §5.2, K2VV --use_raw_completions). Unnamed reserved ids (<|reserved_token_N|>) belong
  // to no format and may carry no text, as skip_special_tokens would drop them.
  std::string special = error.empty() ? "" : "needs well-formed logprobs";
  for (size_t idx = 0; special.empty() && idx < logprobs["tokens"].size(); ++idx) {
    const std::string token = logprobs["tokens"][idx];
    if (token.starts_with("<|") && token.ends_with("|>") &&
        !token.starts_with("<|reserved_token_") && text.find(token) == std::string::npos) {
      special = "generated token " + token + " is missing from text '" + text + "'";
    }
  }
  return {PassUnless(kCompletionsArea, "completions_logprobs", error),
          PassUnless(kCompletionsArea, "completions_special_tokens_in_text", special)};
}

CheckResult StreamCheck(const CheckContext& ctx) {
  json body = CompletionBody(ctx, 8);
  std::string error;
  const std::string text = ReadText(ctx.client->Post("/v1/completions", body), &error);
  if (!error.empty()) return Fail(kCompletionsArea, "completions_stream", "non-streamed: " + error);
  body["stream"] = true;
  const Reply reply = ctx.client->Post("/v1/completions", body);
  if (reply.status != 200 || !reply.streamed) {
    return Fail(kCompletionsArea, "completions_stream",
                "expected a 200 stream, got " + Describe(reply));
  }
  ChatStreamExpectations expect;
  expect.object = "text_completion";
  ChatStreamSummary summary;
  if (auto e = ValidateChatStream(ParseSse(reply.events), expect, &summary); !e.empty()) {
    return Fail(kCompletionsArea, "completions_stream", e);
  }
  if (summary.content != text) {
    return Fail(kCompletionsArea, "completions_stream",
                "streamed text '" + summary.content + "' differs from non-streamed '" + text + "'");
  }
  return Pass(kCompletionsArea, "completions_stream");
}

}  // namespace

CheckList RunCompletionsChecks(const CheckContext& ctx) {
  CheckList out = {BasicCheck(ctx), EchoCheck(ctx)};
  for (auto& result : LogprobsChecks(ctx)) out.push_back(std::move(result));
  out.push_back(StreamCheck(ctx));
  return out;
}

}  // namespace k3::verify
