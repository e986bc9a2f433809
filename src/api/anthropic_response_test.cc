// AnthropicResponseBuilder: the SSE event order of the Messages streaming spec, and stream
// reassembly equal to the non-streamed Body() for the same updates.
#include "api/anthropic_response.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace k3::api {
namespace {

using serve::ChoiceUpdate;
using text::output::OutputEvent;

OutputEvent Reason(std::string text) { return {.kind = OutputEvent::kReasoning, .text = text}; }
OutputEvent Content(std::string text) { return {.kind = OutputEvent::kContent, .text = text}; }
OutputEvent Begin(int index, const std::string& name) {
  return {.kind = OutputEvent::kToolCallBegin,
          .tool_index = index,
          .id = "functions." + name + ":" + std::to_string(index),
          .name = name};
}
OutputEvent Args(int index, std::string text) {
  return {.kind = OutputEvent::kToolCallArguments, .text = text, .tool_index = index};
}
OutputEvent End(int index, bool complete) {
  return {.kind = OutputEvent::kToolCallEnd, .tool_index = index, .complete = complete};
}

// Each update gets 2 more output tokens; the finishing one gets parsed = the fold of all events.
std::vector<ChoiceUpdate> Finalize(std::vector<ChoiceUpdate> updates, const char* finish,
                                   std::optional<std::string> matched_stop = std::nullopt) {
  std::vector<OutputEvent> all;
  for (size_t i = 0; i < updates.size(); ++i) {
    ChoiceUpdate& u = updates[i];
    all.insert(all.end(), u.events.begin(), u.events.end());
    u.usage = {.prompt_tokens = 20,
               .completion_tokens = static_cast<int64_t>(2 * (i + 1)),
               .cached_tokens = 8};
  }
  ChoiceUpdate& last = updates.back();
  last.finish_reason = finish;
  last.matched_stop = matched_stop;
  last.parsed.emplace();
  text::output::ApplyEvents(all, &*last.parsed);
  return updates;
}

struct SseEvent {
  std::string name;
  Json data;
};

struct Output {
  std::vector<SseEvent> events;
  Json body;
};

Output Feed(const std::vector<ChoiceUpdate>& updates,
            std::shared_ptr<const ThinkingSigner> signer = nullptr, std::string id = "msg_1") {
  const ResponseMeta meta = {.id = std::move(id), .created = 1, .model = "k3"};
  AnthropicResponseBuilder stream(meta, true, signer), whole(meta, false, signer);
  std::vector<std::string> raw, none;
  stream.Start(20, 8, &raw);
  whole.Start(20, 8, &none);
  for (const ChoiceUpdate& u : updates) {
    stream.Add(u, &raw);
    whole.Add(u, &none);
  }
  EXPECT_TRUE(none.empty()) << "the non-streaming builder emitted events";
  // Nothing after message_stop, even when more updates arrive.
  const size_t before = raw.size();
  EXPECT_TRUE(stream.Add(updates.back(), &raw));
  EXPECT_EQ(raw.size(), before);
  Output run;
  for (const std::string& e : raw) {
    const size_t newline = e.find('\n');
    EXPECT_TRUE(e.starts_with("event: ") && e.ends_with("\n\n")) << e;
    EXPECT_EQ(e.compare(newline + 1, 6, "data: "), 0) << e;
    SseEvent parsed{e.substr(7, newline - 7), Json::parse(e.substr(newline + 7))};
    EXPECT_EQ(parsed.data["type"], parsed.name);
    run.events.push_back(std::move(parsed));
  }
  run.body = Json::parse(whole.Body());
  return run;
}

// Checks the documented order and rebuilds the message the way a client does.
Json Reassemble(const std::vector<SseEvent>& events) {
  Json message;
  int open = -1;  // index of the open block, -1 = none
  std::string partial_json;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string& name = events[i].name;
    const Json& data = events[i].data;
    if (i == 0) {
      EXPECT_EQ(name, "message_start");
      message = data["message"];
      EXPECT_TRUE(message["content"].empty());
      EXPECT_TRUE(message["usage"].contains("input_tokens"));
      EXPECT_TRUE(message["usage"].contains("output_tokens"));
      continue;
    }
    EXPECT_NE(name, "message_start") << "duplicate message_start";
    if (name == "ping") {
      EXPECT_EQ(i, 1u) << "one ping, right after message_start";
      continue;
    }
    if (name == "content_block_start") {
      EXPECT_EQ(open, -1) << "block opened inside block " << open;
      open = data["index"];
      EXPECT_EQ(open, static_cast<int>(message["content"].size()));
      message["content"].push_back(data["content_block"]);
      partial_json.clear();
    } else if (name == "content_block_delta") {
      EXPECT_EQ(data["index"], open);
      Json& block = message["content"][static_cast<size_t>(open)];
      const Json& delta = data["delta"];
      if (delta["type"] == "text_delta") {
        EXPECT_EQ(block["type"], "text");
        block["text"] = block["text"].get<std::string>() + delta["text"].get<std::string>();
      } else if (delta["type"] == "thinking_delta") {
        EXPECT_EQ(block["type"], "thinking");
        block["thinking"] =
            block["thinking"].get<std::string>() + delta["thinking"].get<std::string>();
      } else if (delta["type"] == "signature_delta") {
        EXPECT_EQ(block["type"], "thinking");
        EXPECT_EQ(block["signature"], "") << "one signature_delta per block";
        block["signature"] = delta["signature"];
        EXPECT_EQ(events[i + 1].name, "content_block_stop") << "the signature ends the block";
      } else {
        EXPECT_EQ(delta["type"], "input_json_delta");
        EXPECT_EQ(block["type"], "tool_use");
        partial_json += delta["partial_json"].get<std::string>();
      }
    } else if (name == "content_block_stop") {
      EXPECT_EQ(data["index"], open);
      Json& block = message["content"][static_cast<size_t>(open)];
      if (block["type"] == "text") {
        EXPECT_FALSE(block["text"].get<std::string>().empty());
      }
      if (block["type"] == "tool_use" && !partial_json.empty()) {
        block["input"] = Json::parse(partial_json);
      }
      open = -1;
    } else if (name == "message_delta") {
      EXPECT_EQ(open, -1) << "message_delta inside a block";
      EXPECT_EQ(i + 2, events.size()) << "message_delta must precede message_stop";
      message["stop_reason"] = data["delta"]["stop_reason"];
      message["stop_sequence"] = data["delta"]["stop_sequence"];
      message["usage"]["output_tokens"] = data["usage"]["output_tokens"];
    } else {
      EXPECT_EQ(name, "message_stop");
      EXPECT_EQ(i + 1, events.size()) << "events after message_stop";
    }
  }
  EXPECT_FALSE(events.empty());
  if (!events.empty()) {
    EXPECT_EQ(events.back().name, "message_stop");
  }
  return message;
}

std::vector<std::string> BlockTypes(const Json& message) {
  std::vector<std::string> types;
  for (const Json& block : message["content"]) types.push_back(block["type"]);
  return types;
}

TEST(AnthropicStream, ThinkingTextToolUse) {
  std::vector<ChoiceUpdate> u(4);
  u[0].events = {Content(""), Reason("Let me "), Reason("think.")};
  u[1].events = {Content("Checking"), Content(" the weather.")};
  u[2].events = {Begin(0, "get_weather"), Args(0, "{\"city\":"), Args(0, " \"Oslo\"}")};
  u[3].events = {End(0, true), Begin(1, "get_time"), End(1, true)};
  const Output run = Feed(Finalize(u, "tool_calls"));
  const Json rebuilt = Reassemble(run.events);
  EXPECT_EQ(BlockTypes(rebuilt),
            (std::vector<std::string>{"thinking", "text", "tool_use", "tool_use"}));
  EXPECT_EQ(rebuilt["content"], run.body["content"]);
  EXPECT_EQ(rebuilt["stop_reason"], "tool_use");
  EXPECT_EQ(run.body["stop_reason"], "tool_use");
  EXPECT_EQ(run.body["content"][2]["input"], Json::parse(R"({"city": "Oslo"})"));
  EXPECT_EQ(run.body["content"][3]["input"], Json::object());
  EXPECT_EQ(run.body["usage"]["output_tokens"], 8);
  EXPECT_EQ(rebuilt["usage"]["output_tokens"], run.body["usage"]["output_tokens"]);
  EXPECT_EQ(run.body["usage"]["input_tokens"], 12);
  EXPECT_EQ(run.body["usage"]["cache_read_input_tokens"], 8);
  EXPECT_EQ(rebuilt["id"], run.body["id"]);
  EXPECT_EQ(rebuilt["role"], "assistant");
  int deltas = 0;
  for (const SseEvent& e : run.events) {
    if (e.name == "content_block_delta" && e.data["delta"]["type"] == "input_json_delta") ++deltas;
  }
  EXPECT_EQ(deltas, 2);
}

TEST(AnthropicStream, StopReasons) {
  struct Case {
    const char* finish;
    std::optional<std::string> matched;
    const char* stop_reason;
  };
  for (const Case& c :
       {Case{"stop", std::nullopt, "end_turn"}, Case{"length", std::nullopt, "max_tokens"},
        Case{"stop", "END", "stop_sequence"}}) {
    std::vector<ChoiceUpdate> u(2);
    u[0].events = {Content("Hello")};
    u[1].events = {Content(" world")};
    const Output run = Feed(Finalize(u, c.finish, c.matched));
    const Json rebuilt = Reassemble(run.events);
    EXPECT_EQ(BlockTypes(rebuilt), std::vector<std::string>{"text"});
    EXPECT_EQ(rebuilt["content"], run.body["content"]);
    EXPECT_EQ(run.body["content"][0]["text"], "Hello world");
    EXPECT_EQ(rebuilt["stop_reason"], c.stop_reason) << c.finish;
    EXPECT_EQ(run.body["stop_reason"], c.stop_reason) << c.finish;
    const Json stop_sequence = c.matched ? Json(*c.matched) : Json(nullptr);
    EXPECT_EQ(rebuilt["stop_sequence"], stop_sequence);
    EXPECT_EQ(run.body["stop_sequence"], stop_sequence);
  }
}

// An empty content event opens no block: no spurious empty leading text block.
TEST(AnthropicStream, EmptyOutputHasNoBlocks) {
  std::vector<ChoiceUpdate> u(1);
  u[0].events = {Content("")};
  const Output run = Feed(Finalize(u, "stop"));
  const Json rebuilt = Reassemble(run.events);
  EXPECT_TRUE(rebuilt["content"].empty());
  EXPECT_TRUE(run.body["content"].empty());
  EXPECT_EQ(run.body["stop_reason"], "end_turn");
}

TEST(AnthropicBody, IncompleteToolCallIsDropped) {
  std::vector<ChoiceUpdate> u(2);
  u[0].events = {Content("Calling"), Begin(0, "get_weather"), Args(0, "{\"city\": \"Os")};
  u[1].events = {End(0, false)};
  const auto updates = Finalize(u, "length");
  ASSERT_EQ(updates.back().parsed->tool_calls.size(), 1u);
  const Output run = Feed(updates);
  EXPECT_EQ(BlockTypes(run.body), std::vector<std::string>{"text"});
  EXPECT_EQ(run.body["stop_reason"], "max_tokens");
}

// BUG (low): K2 output may have content after a tool section ("Text after a section end is
// content again"). The stream sends text, tool_use, text blocks in that order, but Body() builds
// the content from the folded ParsedOutput: one merged text block, then the tool_use.
TEST(AnthropicStream, ContentAfterAToolCallKeepsItsPlaceInTheBody) {
  std::vector<ChoiceUpdate> u(2);
  u[0].events = {Content("Before."), Begin(0, "get_time"), Args(0, "{}"), End(0, true)};
  u[1].events = {Content("After.")};
  const Output run = Feed(Finalize(u, "tool_calls"));
  const Json rebuilt = Reassemble(run.events);
  EXPECT_EQ(BlockTypes(rebuilt), (std::vector<std::string>{"text", "tool_use", "text"}));
  EXPECT_EQ(rebuilt["content"], run.body["content"]);
}

// Thinking blocks carry the signer's signature of their text (streamed as a signature_delta
// before the block's stop); tool_use ids are Anthropic-shaped, unique in a message, and differ
// between messages.
TEST(AnthropicStream, SignedThinkingAndAnthropicToolIds) {
  const auto signer = std::make_shared<const ThinkingSigner>("sixteen byte key!");
  std::vector<ChoiceUpdate> u(2);
  u[0].events = {Reason("Let me "), Reason("think."), Content("Calling.")};
  u[1].events = {Begin(0, "get_time"), End(0, true), Begin(1, "get_time"), End(1, true)};
  const Output run = Feed(Finalize(u, "tool_calls"), signer);
  const Json rebuilt = Reassemble(run.events);
  EXPECT_EQ(rebuilt["content"], run.body["content"]);
  EXPECT_EQ(run.body["content"][0]["signature"], signer->Sign("Let me think."));
  const std::regex shape("^toolu_[A-Za-z0-9]{20,}$");
  std::set<std::string> ids;
  for (const Json& block : run.body["content"]) {
    if (block["type"] != "tool_use") continue;
    EXPECT_TRUE(std::regex_match(block["id"].get<std::string>(), shape)) << block["id"];
    ids.insert(block["id"]);
  }
  EXPECT_EQ(ids.size(), 2u);
  const Output other = Feed(Finalize(u, "tool_calls"), signer, "msg_2");
  EXPECT_NE(other.body["content"][2]["id"], run.body["content"][2]["id"]);
}

}  // namespace
}  // namespace k3::api
