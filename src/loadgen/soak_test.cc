// The soak's judges on hand-made inputs: each must fail what it exists to catch (a 5xx, a wrong
// status, a forced call that did not call, a structured output that does not parse, a stream cut
// short, RSS growth past the bound, a leftover gauge on a /metrics text) and pass the good cases.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "loadgen/server_metrics.h"
#include "loadgen/soak_health.h"
#include "loadgen/soak_requests.h"

namespace k3::loadgen {
namespace {

SoakRequest Request(SoakKind kind) {
  std::mt19937_64 rng(3);
  SoakContext context;
  context.max_model_len = 64;
  return BuildSoakRequest(kind, context, rng);
}

SoakResponse Body(int status, std::string body) { return {status, std::move(body), false, false}; }

const char* kChatOk =
    R"({"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop",)"
    R"("message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3}})";

TEST(SoakCheck, PassesGoodAnswersAndFailsServerErrors) {
  const SoakRequest chat = Request(SoakKind::kChat);
  EXPECT_EQ(CheckSoakResponse(chat, Body(200, kChatOk)), "");
  EXPECT_NE(CheckSoakResponse(chat, Body(500, R"({"error":{"message":"boom"}})")), "");
  EXPECT_NE(CheckSoakResponse(chat, Body(200, "not json")), "");
  EXPECT_NE(CheckSoakResponse(Request(SoakKind::kMultiChoice), Body(200, kChatOk)), "");  // 1 of 3
}

TEST(SoakCheck, BadRequestsMustGetTheir400InTheApisShape) {
  for (SoakKind kind : {SoakKind::kBadJson, SoakKind::kBadField, SoakKind::kOversize}) {
    const SoakRequest r = Request(kind);
    EXPECT_EQ(r.expect_status, 400) << SoakKindName(kind);
    EXPECT_EQ(CheckSoakResponse(r, Body(400, R"({"error":{"message":"context: bad","type":"x"}})")),
              "");
    EXPECT_NE(CheckSoakResponse(r, Body(200, kChatOk)), "") << SoakKindName(kind);
    EXPECT_NE(CheckSoakResponse(r, Body(400, R"({"detail":"bad"})")), "") << SoakKindName(kind);
  }
  EXPECT_NE(CheckSoakResponse(Request(SoakKind::kOversize),
                              Body(400, R"({"error":{"message":"bad","type":"x"}})")),
            "");  // a 400 for another reason
  EXPECT_TRUE(
      nlohmann::json::parse(Request(SoakKind::kBadJson).body, nullptr, false).is_discarded());
  const SoakRequest anthropic = Request(SoakKind::kBadMessages);
  EXPECT_NE(CheckSoakResponse(anthropic, Body(400, R"({"error":{"message":"bad"}})")), "");
  EXPECT_EQ(CheckSoakResponse(anthropic, Body(400, R"({"type":"error","error":{"type":)"
                                                   R"("invalid_request_error","message":"m"}})")),
            "");
}

TEST(SoakCheck, ForcedCallsAndStructuredOutputsAreJudgedOnTheirContent) {
  const SoakRequest tool = Request(SoakKind::kToolCall);
  EXPECT_NE(CheckSoakResponse(tool, Body(200, kChatOk)), "");  // finish stop, no call
  const std::string call =
      R"({"object":"chat.completion","usage":{},"choices":[{"finish_reason":"tool_calls",)"
      R"("message":{"tool_calls":[{"function":{"name":"get_weather","arguments":"ARGS"}}]}}]})";
  auto with = [&](std::string args) {
    std::string text = call;
    return text.replace(text.find("ARGS"), 4, args);
  };
  EXPECT_EQ(CheckSoakResponse(tool, Body(200, with(R"({\"city\":\"Oslo\"})"))), "");
  EXPECT_NE(CheckSoakResponse(tool, Body(200, with(R"({\"city\":)"))), "");
  // Members of the wrong type or missing are failures, never exceptions.
  for (const char* odd : {R"({"object":1,"choices":[{"finish_reason":null}],"usage":{}})",
                          R"({"object":"chat.completion","choices":[7],"usage":{}})",
                          R"({"object":"chat.completion","choices":[{"finish_reason":"tool_calls",)"
                          R"("message":{"tool_calls":[{"function":3}]}}],"usage":{}})"}) {
    EXPECT_NE(CheckSoakResponse(tool, Body(200, odd)), "") << odd;
  }
  EXPECT_NE(CheckSoakResponse(Request(SoakKind::kMessagesStream), {200, "event:\n\n", true, false}),
            "");
  const SoakRequest structured = Request(SoakKind::kStructured);
  std::string ok = kChatOk, bad = kChatOk;
  ok.replace(ok.find("\"hi\""), 4, R"("{\"ok\":true,\"n\":3}")");
  bad.replace(bad.find("\"hi\""), 4, R"("{\"ok\":true,")");
  EXPECT_EQ(CheckSoakResponse(structured, Body(200, ok)), "");
  EXPECT_NE(CheckSoakResponse(structured, Body(200, bad)), "");
}

TEST(SoakCheck, StreamsMustEndProperlyUnlessCancelled) {
  const SoakRequest stream = Request(SoakKind::kChatStream);
  const std::string events =
      "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"completion_tokens\":1}}\n\n";
  EXPECT_EQ(CheckSoakResponse(stream, {200, events + "data: [DONE]\n\n", true, false}), "");
  EXPECT_NE(CheckSoakResponse(stream, {200, events, true, false}), "");  // no [DONE]
  EXPECT_NE(CheckSoakResponse(stream, {200, "data: {\"error\":{}}\n\n", true, false}), "");
  EXPECT_EQ(CheckSoakResponse(Request(SoakKind::kCancel), {200, events, true, true}), "");
  const SoakRequest messages = Request(SoakKind::kMessagesStream);
  const std::string start = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";
  EXPECT_NE(CheckSoakResponse(messages, {200, start, true, false}), "");
  EXPECT_EQ(
      CheckSoakResponse(
          messages,
          {200, start + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", true, false}),
      "");
}

TEST(SoakHealth, RssGrowthPastTheBoundAfterWarmUpFails) {
  EXPECT_EQ(ParseVmRssKib("Name:\tk3\nVmPeak:\t  9 kB\nVmRSS:\t  123456 kB\n"), 123456);
  EXPECT_FALSE(ParseVmRssKib("Name:\tk3\n").has_value());
  const std::vector<RssSample> samples = {{0, 1000}, {5, 90000}, {10, 100000}, {20, 110000}};
  // Warm-up growth (1000 -> 90000) does not count; 90000 -> 110000 is 20000 KiB.
  EXPECT_EQ(JudgeRss(samples, 5, 20000, true).failure, "");
  const RssVerdict v = JudgeRss(samples, 5, 19999, true);
  EXPECT_NE(v.failure, "");
  EXPECT_EQ(v.start_kib, 1000);
  EXPECT_EQ(v.baseline_kib, 90000);
  EXPECT_EQ(v.peak_kib, 110000);
  EXPECT_NE(JudgeRss({}, 5, 1 << 20, true).failure, "");  // required but never sampled
  EXPECT_EQ(JudgeRss({}, 5, 1 << 20, false).failure, "");
}

TEST(SoakHealth, LeftoversOnAMetricsPage) {
  const std::string clean =
      "# TYPE k3_requests_pending gauge\nk3_requests_pending 0\nk3_queue_depth 0\n"
      "k3_running_sequences 0\nk3_kv_blocks_referenced 0\nk3_state_slots_in_use 0\n"
      "k3_cache_usage_ratio 0.5\n";
  EXPECT_TRUE(Leftovers(ParsePrometheus(clean)).empty());
  std::string leaked = clean;
  leaked.replace(leaked.find("k3_kv_blocks_referenced 0"), 25, "k3_kv_blocks_referenced 3");
  const auto left = Leftovers(ParsePrometheus(leaked));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0].find("k3_kv_blocks_referenced"), std::string::npos);
  std::string missing = clean;
  missing.erase(missing.find("k3_state_slots_in_use 0\n"), 24);
  EXPECT_EQ(Leftovers(ParsePrometheus(missing)).size(), 1u);
  EXPECT_EQ(Leftovers({}).size(), std::size(kLeftoverGauges));
}

}  // namespace
}  // namespace k3::loadgen
