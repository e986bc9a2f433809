// Areas "stream" and "usage": the SSE framing of chat streams, stream/non-stream agreement at
// temperature 0 with a fixed seed (KVV runs every case both ways), and the usage numbers
// (frontend spec §5.1 Streaming SSE, max_tokens, usage).
#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

// Non-streamed and streamed answers to the same body.
struct BothWays {
  std::string error;
  ChatStreamSummary plain, streamed;
};

BothWays AskBothWays(const CheckContext& ctx, json body, bool include_usage) {
  BothWays out;
  Reply reply = ctx.client->Post("/v1/chat/completions", body);
  if (out.error = ExpectOkJson(reply); !out.error.empty()) return out;
  if (auto e = ReadChatCompletion(reply.json, &out.plain); !e.empty()) {
    out.error = "non-streamed: " + e;
    return out;
  }
  body["stream"] = true;
  if (include_usage) body["stream_options"] = {{"include_usage", true}};
  reply = ctx.client->Post("/v1/chat/completions", body);
  if (reply.status != 200 || !reply.streamed) {
    out.error = "expected a 200 stream, got " + Describe(reply);
    return out;
  }
  ChatStreamExpectations expect;
  expect.include_usage = include_usage;
  if (auto e = ValidateChatStream(ParseSse(reply.events), expect, &out.streamed); !e.empty()) {
    out.error = "malformed stream: " + e;
  }
  return out;
}

std::string Differences(const ChatStreamSummary& a, const ChatStreamSummary& b) {
  auto cut = [](const std::string& s) { return "'" + s.substr(0, 60) + "'"; };
  if (a.content != b.content) return "content " + cut(a.content) + " vs streamed " + cut(b.content);
  if (a.reasoning_content != b.reasoning_content) {
    return "reasoning_content " + cut(a.reasoning_content) + " vs streamed " +
           cut(b.reasoning_content);
  }
  if (a.finish_reason != b.finish_reason) {
    return "finish_reason " + a.finish_reason + " vs streamed " + b.finish_reason;
  }
  if (a.tool_calls.size() != b.tool_calls.size()) return "a different number of tool calls";
  for (size_t idx = 0; idx < a.tool_calls.size(); ++idx) {
    const auto &x = a.tool_calls[idx], &y = b.tool_calls[idx];
    if (x.id != y.id || x.name != y.name || x.arguments != y.arguments) {
      return "tool call " + std::to_string(idx) + ": " + x.id + " " + x.name + x.arguments +
             " vs streamed " + y.id + " " + y.name + y.arguments;
    }
  }
  return "";
}

CheckList StreamChecks(const CheckContext& ctx) {
  json text = ChatBody(ctx, "Tell me a short story.", 24);
  text["temperature"] = 0;
  text["seed"] = 5;
  const BothWays plain = AskBothWays(ctx, text, /*include_usage=*/false);
  const BothWays with_usage = AskBothWays(ctx, text, /*include_usage=*/true);
  json tools = ChatBody(ctx, "What is the weather in Paris for the next 3 days?", ctx.max_tokens);
  tools["tools"] = WeatherTools();
  tools["tool_choice"] = "required";
  tools["temperature"] = 0;
  tools["seed"] = 7;
  const BothWays calls = AskBothWays(ctx, tools, /*include_usage=*/true);
  auto agree = [](const BothWays& both) {
    return both.error.empty() ? Differences(both.plain, both.streamed) : both.error;
  };
  std::string usage_error = with_usage.error;
  if (usage_error.empty()) usage_error = ChatUsageError(with_usage.streamed.usage, 24);
  if (usage_error.empty() && with_usage.streamed.usage["completion_tokens"] !=
                                 with_usage.plain.usage.value("completion_tokens", json())) {
    usage_error = "streamed completion_tokens differ from the non-streamed ones";
  }
  std::string tool_error = agree(calls);
  if (tool_error.empty() && calls.streamed.tool_calls.empty()) tool_error = "no tool call streamed";
  return {PassUnless("stream", "chat_stream_well_formed", plain.error),
          PassUnless("stream", "chat_stream_with_include_usage", with_usage.error),
          PassUnless("stream", "chat_stream_usage_chunk", usage_error),
          PassUnless("stream", "chat_stream_matches_non_stream", agree(plain)),
          PassUnless("stream", "chat_stream_tool_calls_match_non_stream", tool_error)};
}

}  // namespace

CheckList RunStreamChecks(const CheckContext& ctx) { return StreamChecks(ctx); }

}  // namespace k3::verify
