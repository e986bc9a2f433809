#include "verify/sse.h"

#include <gtest/gtest.h>

namespace k3::verify {
namespace {

std::string Chunk(const std::string& choices, const std::string& usage = "null",
                  const std::string& id = "c1") {
  return "data: {\"id\":\"" + id +
         "\",\"object\":\"chat.completion.chunk\",\"created\":5,\"choices\":" + choices +
         ",\"usage\":" + usage + "}\n\n";
}

const std::string kFirst =
    R"([{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}])";
const std::string kText = R"([{"index":0,"delta":{"content":"Hi"},"finish_reason":null}])";
const std::string kCall =
    R"([{"index":0,"delta":{"tool_calls":[{"index":0,"id":"functions.f:0","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},"finish_reason":null}])";
const std::string kArgs =
    R"([{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"finish_reason":null}])";
const std::string kFinish = R"([{"index":0,"delta":{},"finish_reason":"stop"}])";
const std::string kUsage = R"({"prompt_tokens":3,"completion_tokens":2,"total_tokens":5})";

std::string Check(const std::vector<std::string>& framed, bool include_usage,
                  ChatStreamSummary* summary) {
  ChatStreamExpectations expect;
  expect.include_usage = include_usage;
  return ValidateChatStream(ParseSse(framed), expect, summary);
}

TEST(VerifyChatStream, AcceptsAWellFormedStreamAndRebuildsIt) {
  ChatStreamSummary summary;
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kText), Chunk(kCall), Chunk(kArgs), Chunk(kFinish),
                   Chunk("[]", kUsage), "data: [DONE]\n\n"},
                  true, &summary),
            "");
  EXPECT_EQ(summary.content, "Hi");
  EXPECT_EQ(summary.finish_reason, "stop");
  ASSERT_EQ(summary.tool_calls.size(), 1u);
  EXPECT_EQ(summary.tool_calls[0].arguments, "{\"a\":1}");
  EXPECT_EQ(summary.usage["total_tokens"], 5);
}

TEST(VerifyChatStream, NamesEachViolation) {
  ChatStreamSummary s;
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kFinish)}, false, &s),
            "the stream did not end with data: [DONE]");
  EXPECT_EQ(Check({Chunk(kText), Chunk(kFinish), "data: [DONE]\n\n"}, false, &s),
            "chunk 0: the first delta has role '', expected 'assistant'");
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kFinish, "null", "c2"), "data: [DONE]\n\n"}, false, &s),
            "chunk 1: id/created changed from c1 to c2");
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kFinish), Chunk(kText), "data: [DONE]\n\n"}, false, &s),
            "chunk 2: choice 0 after its finish");
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kFinish), "data: [DONE]\n\n"}, true, &s),
            "no usage chunk (include_usage was set)");
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kFinish), "data: [DONE]\n\n", Chunk(kText)}, false, &s),
            "an event after data: [DONE]");
  EXPECT_EQ(Check({Chunk(kFirst), Chunk(kArgs), Chunk(kFinish), "data: [DONE]\n\n"}, false, &s),
            "chunk 1: tool call 0 starts without id, type \"function\" and a name: "
            "{\"function\":{\"arguments\":\"1}\"},\"index\":0}");
  EXPECT_EQ(Check({Chunk(kFirst), Chunk("null"), "data: [DONE]\n\n"}, false, &s),
            "chunk 1: choices is not an array (got null)");
  EXPECT_EQ(
      Check({Chunk(kFirst), Chunk(kFinish), "data: {oops\n\n", "data: [DONE]\n\n"}, false, &s),
      "chunk 2 is not JSON");
}

TEST(VerifySse, ParsesFieldsCommentsAndMultiLineData) {
  const auto events = ParseSse({": comment\nevent: ping\ndata: {}\n\n", "data: a\ndata: b\r\n\n"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "ping");
  EXPECT_EQ(events[0].data, "{}");
  EXPECT_EQ(events[1].data, "a\nb");
}

std::string Event(const std::string& type, const std::string& data) {
  return "event: " + type + "\ndata: {\"type\":\"" + type + "\"" + data + "}\n\n";
}

const std::string kStart =
    R"(,"message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":0}})";
const std::string kBlock = R"(,"index":0,"content_block":{"type":"text","text":""})";
const std::string kTool =
    R"(,"index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}})";
const std::string kTextDelta = R"(,"index":0,"delta":{"type":"text_delta","text":"Hi"})";
const std::string kJsonDelta =
    R"(,"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"})";
const std::string kDelta =
    R"(,"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":4})";

std::vector<std::string> GoodMessageStream() {
  return {Event("message_start", kStart),
          Event("ping", ""),
          Event("content_block_start", kBlock),
          Event("content_block_delta", kTextDelta),
          Event("content_block_stop", R"(,"index":0)"),
          Event("content_block_start", kTool),
          Event("content_block_delta", kJsonDelta),
          Event("content_block_stop", R"(,"index":1)"),
          Event("message_delta", kDelta),
          Event("message_stop", "")};
}

TEST(VerifyMessageStream, AcceptsTheDocumentedOrder) {
  MessageStreamSummary summary;
  EXPECT_EQ(ValidateMessageStream(ParseSse(GoodMessageStream()), &summary), "");
  ASSERT_EQ(summary.blocks.size(), 2u);
  EXPECT_EQ(summary.blocks[0].text, "Hi");
  EXPECT_EQ(summary.blocks[1].input_json, "{\"a\":1}");
  EXPECT_EQ(summary.stop_reason, "tool_use");
}

TEST(VerifyMessageStream, RejectsOutOfOrderEvents) {
  MessageStreamSummary s;
  auto without = [](size_t idx) {
    auto events = GoodMessageStream();
    events.erase(events.begin() + idx);
    return ParseSse(events);
  };
  EXPECT_EQ(ValidateMessageStream(without(0), &s),
            "event 1: the first event is 'content_block_start', expected message_start");
  EXPECT_EQ(ValidateMessageStream(without(4), &s),
            "event 4: content_block_start while a block is open or after message_delta");
  EXPECT_EQ(ValidateMessageStream(without(8), &s), "event 8: message_stop before message_delta");
  EXPECT_EQ(ValidateMessageStream(without(9), &s), "the stream ended without message_stop");
  auto events = GoodMessageStream();
  events.push_back(Event("content_block_delta", kTextDelta));
  EXPECT_EQ(ValidateMessageStream(ParseSse(events), &s),
            "event 10: 'content_block_delta' after message_stop");
  events = GoodMessageStream();
  events.insert(events.begin() + 1, Event("message_start", kStart));
  EXPECT_EQ(ValidateMessageStream(ParseSse(events), &s), "event 1: a second message_start");
  events = GoodMessageStream();
  events[6] =
      Event("content_block_delta", R"(,"index":1,"delta":{"type":"text_delta","text":"x"})");
  EXPECT_EQ(ValidateMessageStream(ParseSse(events), &s),
            "event 6: a text_delta in a tool_use block");
  events = GoodMessageStream();
  events[8] =
      Event("message_delta", R"(,"delta":{"stop_reason":null},"usage":{"output_tokens":4})");
  EXPECT_EQ(ValidateMessageStream(ParseSse(events), &s),
            "event 8: message_delta without delta.stop_reason");
  events = GoodMessageStream();
  events[2] =
      "event: content_block_stop\ndata: {\"type\":\"content_block_start\"" + kBlock + "}\n\n";
  EXPECT_EQ(ValidateMessageStream(ParseSse(events), &s),
            "event 2: event name 'content_block_stop' but data.type 'content_block_start'");
}

// Found by client_stream_fuzzer: an index that is not an integer was read with json::value and
// threw. Every reader must answer with a violation instead.
TEST(VerifyMessageStream, NonIntegerIndexesAreViolationsNotExceptions) {
  MessageStreamSummary s;
  for (const char* index : {R"("0")", "{}", "1.5", "1e300", "99999999999", "null"}) {
    auto events = GoodMessageStream();
    events[3] = Event("content_block_delta", std::string(R"(,"index":)") + index +
                                                 R"(,"delta":{"type":"text_delta","text":"Hi"})");
    EXPECT_EQ(ValidateMessageStream(ParseSse(events), &s),
              "event 3: content_block_delta for a closed index")
        << index;
  }
  ChatStreamSummary summary;
  EXPECT_EQ(Check({Chunk(R"([{"index":{},"delta":{"role":"assistant"}}])"), "data: [DONE]\n\n"},
                  false, &summary),
            "chunk 0: a choice without an index");
  EXPECT_EQ(Check({Chunk(R"([7])"), "data: [DONE]\n\n"}, false, &summary),
            "chunk 0: a choice without an index");
  const std::string bad_call =
      R"([{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":"x"}]},"finish_reason":null}])";
  EXPECT_EQ(Check({Chunk(bad_call), "data: [DONE]\n\n"}, false, &summary),
            "chunk 0: a tool_calls delta without an index");
  EXPECT_EQ(Check({Chunk(R"([{"index":0,"delta":{"role":"assistant","tool_calls":[3]}}])"),
                   "data: [DONE]\n\n"},
                  false, &summary),
            "chunk 0: a tool_calls delta without an index");
}

}  // namespace
}  // namespace k3::verify
