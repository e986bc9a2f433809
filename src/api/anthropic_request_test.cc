// Anthropic Messages request bodies -> the typed chat request and the sampling fields.
#include "api/anthropic_request.h"

#include <gtest/gtest.h>

#include <string>

namespace k3::api {
namespace {

using text::chat::Content;
using text::chat::ContentPart;
using text::chat::Message;
using text::chat::Role;
using text::chat::ToolCall;
using text::chat::ToolChoice;

struct Outcome {
  bool ok = false;
  ApiError error;
  std::string exception;  // a parse that throws is a bug: it becomes a 500, not a 400
  AnthropicRequest request;
  const serve::ChatRequest& chat() const { return *request.generate.chat; }
};

const char* kMinimal =
    R"({"model": "k3", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]})";

Outcome Parse(const Json& body, const ApiOptions& options = {}) {
  Outcome out;
  try {
    out.ok = ParseMessagesRequest(body, options, &out.request, &out.error);
  } catch (const std::exception& e) {
    out.exception = e.what();
  }
  return out;
}

Outcome ParsePatched(const std::string& patch, const ApiOptions& options = {}) {
  Json body = Json::parse(kMinimal);
  body.merge_patch(Json::parse(patch));
  return Parse(body, options);
}

void ExpectRejected(const std::string& patch, const std::string& param) {
  const Outcome out = ParsePatched(patch);
  ASSERT_TRUE(out.exception.empty()) << patch << " threw: " << out.exception;
  EXPECT_FALSE(out.ok) << patch;
  EXPECT_EQ(out.error.http_status, 400) << patch;
  EXPECT_FALSE(out.error.message.empty()) << patch;
  EXPECT_TRUE(out.error.param.starts_with(param))
      << patch << ": param '" << out.error.param << "', want prefix '" << param << "'";
}

TEST(AnthropicRequest, RejectsBadSamplingAndThinking) {
  ExpectRejected(R"({"max_tokens": null})", "max_tokens");
  ExpectRejected(R"({"max_tokens": 0})", "max_tokens");
  ExpectRejected(R"({"temperature": 1.5})", "temperature");
  ExpectRejected(R"({"top_p": 0})", "top_p");
  ExpectRejected(R"({"top_k": -1})", "top_k");
  ExpectRejected(R"({"stop_sequences": [1]})", "stop_sequences");
  ExpectRejected(R"({"stream": "yes"})", "stream");
  ExpectRejected(R"({"thinking": {"type": "enabled", "budget_tokens": 1023}})", "thinking");
  ExpectRejected(R"({"thinking": {"type": "enabled", "budget_tokens": 4096}})", "thinking");
  ExpectRejected(R"({"thinking": {"type": "enabled", "budget_tokens": 8000}})", "thinking");
  ExpectRejected(R"({"thinking": {"type": "bogus"}})", "thinking");
  ExpectRejected(R"({"thinking": "enabled"})", "thinking");
  ExpectRejected(R"({"k3_forced_output": "x"})", "k3_forced_output");
}

// BUG: thinking {type: enabled} without budget_tokens reads a missing key through the const
// operator[] of nlohmann::ordered_json (undefined behaviour; an assertion in debug builds).
TEST(AnthropicRequest, ThinkingWithoutBudgetIs400) {
  ExpectRejected(R"({"thinking": {"type": "enabled"}})", "thinking");
}

TEST(AnthropicRequest, RejectsBadMessagesAndBlocks) {
  ExpectRejected(R"({"messages": null})", "messages");
  ExpectRejected(R"({"messages": "hi"})", "messages");
  ExpectRejected(R"({"messages": [{"role": "developer", "content": "x"}]})", "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "system", "content": [{"type": "image"}]}]})",
                 "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "user"}]})", "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "user", "content": 5}]})", "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "user", "content": [{"type": "audio"}]}]})",
                 "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant",
                     "content": [{"type": "document", "source": {}}]}]})",
                 "messages[1]");
  ExpectRejected(R"({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]})",
                 "messages[0]");
  ExpectRejected(R"({"system": 5})", "system");
  ExpectRejected(R"({"system": [{"type": "image"}]})", "system");
  ExpectRejected(R"({"tools": {"name": "f"}})", "tools");
  ExpectRejected(R"({"tools": [{"description": "no name"}]})", "tools");
  ExpectRejected(R"({"tool_choice": {"type": "bogus"}})", "tool_choice");
  ExpectRejected(R"({"tool_choice": "auto"})", "tool_choice");
  ExpectRejected(
      R"({"tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool", "name": "g"}})",
      "tool_choice");
  ExpectRejected(
      R"({"tools": [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}]})",
      "tools");
  // Client tools need an input_schema object (as Anthropic's API); server tools are refused.
  ExpectRejected(R"({"tools": [{"name": "f"}]})", "tools");
  ExpectRejected(R"({"tools": [{"name": "f", "input_schema": "x"}]})", "tools");
  ExpectRejected(R"({"tools": [{"type": "web_search_20250305", "name": "web_search"}]})", "tools");
}

// BUG: non-string values where the converter calls json::value(key, "") throw type_error
// (a 500 at the service) instead of a 400.
TEST(AnthropicRequest, NonStringTypesAre400NotExceptions) {
  ExpectRejected(R"({"messages": [{"role": 1, "content": "hi"}]})", "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "user", "content": [{"type": 1}]}]})", "messages[0]");
  ExpectRejected(R"({"tools": [{"name": 7}]})", "tools");
  ExpectRejected(R"({"tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": 1}})",
                 "tool_choice");
  ExpectRejected(R"({"thinking": {"type": 1}})", "thinking");
  ExpectRejected(R"({"messages": [{"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": 5, "content": "x"}]}]})",
                 "messages[0]");
  ExpectRejected(R"({"messages": [{"role": "user", "content": "q"}, {"role": "assistant",
                     "content": [{"type": "tool_use", "id": 5, "name": "f", "input": {}}]}]})",
                 "messages[1]");
  ExpectRejected(R"({"tools": [{"name": "f", "input_schema": {}}],
                     "tool_choice": {"type": "auto", "disable_parallel_tool_use": "yes"}})",
                 "tool_choice");
}

TEST(AnthropicRequest, SamplingFields) {
  const Outcome out = ParsePatched(R"({"temperature": 0.7, "top_p": 0.9, "top_k": 20,
      "stop_sequences": ["END"], "stream": true, "metadata": {"user_id": "u"}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const engine::SamplingParams& s = out.request.generate.sampling;
  EXPECT_EQ(s.max_tokens, 4096);
  EXPECT_TRUE(out.request.generate.max_tokens_given);
  EXPECT_EQ(s.temperature, 0.7);
  EXPECT_EQ(s.top_p, 0.9);
  EXPECT_EQ(s.top_k, 20);
  EXPECT_EQ(out.request.generate.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(out.request.stream);
  EXPECT_EQ(out.chat().conversation.messages,
            (std::vector<Message>{{.role = Role::kUser, .content = Content::Of("hi")}}));
}

TEST(AnthropicRequest, ThinkingBudgetInRange) {
  Outcome out = ParsePatched(R"({"thinking": {"type": "enabled", "budget_tokens": 1024}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.chat().thinking.enabled, true);
  out = ParsePatched(R"({"thinking": {"type": "disabled"}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.chat().thinking.enabled, false);
}

TEST(AnthropicRequest, SystemStringAndBlocksBecomeASystemMessage) {
  for (const char* system :
       {R"({"system": "be brief"})",
        R"({"system": [{"type": "text", "text": "be "}, {"type": "text", "text": "brief"}]})"}) {
    const Outcome out = ParsePatched(system);
    ASSERT_TRUE(out.ok) << out.error.message;
    const std::vector<Message>& messages = out.chat().conversation.messages;
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0], (Message{.role = Role::kSystem, .content = Content::Of("be brief")}));
    EXPECT_EQ(messages[1].role, Role::kUser);
  }
}

// Two turns, three calls: ids become functions.{name}:{n} with n counted over the conversation,
// and tool_result ids follow; thinking becomes reasoning_content.
TEST(AnthropicRequest, ToolUseIdsAreRenamedAcrossTheConversation) {
  const Outcome out = ParsePatched(R"({
    "tools": [{"name": "get_weather", "description": "w", "input_schema": {"type": "object",
               "properties": {"city": {"type": "string"}}}},
              {"name": "get_time", "input_schema": {}}],
    "messages": [
      {"role": "user", "content": "weather and time?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "need tools", "signature": "sig"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Oslo"}},
        {"type": "tool_use", "id": "toolu_B", "name": "get_time", "input": {}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_A", "content": "rain"},
        {"type": "tool_result", "tool_use_id": "toolu_B",
         "content": [{"type": "text", "text": "noon"}], "is_error": false}]},
      {"role": "assistant", "content": [
        {"type": "redacted_thinking", "data": "xx"},
        {"type": "tool_use", "id": "toolu_C", "name": "get_weather", "input": {"city": "Rome"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_C", "content": "sun"},
        {"type": "text", "text": "thanks"}]}]})");
  ASSERT_TRUE(out.ok) << out.error.message << out.exception;
  const std::vector<Message>& m = out.chat().conversation.messages;
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m[1].role, Role::kAssistant);
  EXPECT_EQ(m[1].content, Content::Of("Checking."));
  EXPECT_EQ(m[1].reasoning, "need tools");
  ASSERT_EQ(m[1].tool_calls.size(), 2u);
  EXPECT_EQ(m[1].tool_calls[0], (ToolCall{.id = "functions.get_weather:0",
                                          .name = "get_weather",
                                          .arguments = Json("{\"city\":\"Oslo\"}")}));
  EXPECT_EQ(m[1].tool_calls[1].id, "functions.get_time:1");
  EXPECT_EQ(m[1].tool_calls[1].arguments, Json("{}"));
  Message rain{.role = Role::kTool, .content = Content::Of("rain")};
  rain.tool_call_id = "functions.get_weather:0";
  EXPECT_EQ(m[2], rain);
  Message noon{.role = Role::kTool, .content = Content::Of("noon")};
  noon.tool_call_id = "functions.get_time:1";
  EXPECT_EQ(m[3], noon);
  EXPECT_EQ(m[4].tool_calls[0].id, "functions.get_weather:2");
  EXPECT_TRUE(m[4].reasoning.empty());
  EXPECT_EQ(m[5].tool_call_id, "functions.get_weather:2");
  EXPECT_EQ(m[6],
            (Message{.role = Role::kUser, .content = Content::Of({ContentPart::Text("thanks")})}));
  // tools -> function tools, input_schema -> parameters.
  const std::vector<text::chat::Tool>& tools = out.chat().conversation.tools;
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0], (text::chat::Tool{.name = "get_weather",
                                        .description = "w",
                                        .parameters = Json::parse(R"({"type": "object",
      "properties": {"city": {"type": "string"}}})")}));
  EXPECT_EQ(tools[1].parameters, Json::object());
}

TEST(AnthropicRequest, ToolChoiceMapping) {
  const std::string tools = R"("tools": [{"name": "f", "input_schema": {"type": "object"}}])";
  const std::pair<const char*, ToolChoice> cases[] = {
      {R"({"type": "auto"})", {ToolChoice::Mode::kAuto, ""}},
      {R"({"type": "any"})", {ToolChoice::Mode::kRequired, ""}},
      {R"({"type": "none"})", {ToolChoice::Mode::kNone, ""}},
      {R"({"type": "tool", "name": "f"})", {ToolChoice::Mode::kFunction, "f"}},
  };
  for (const auto& [choice, expected] : cases) {
    const Outcome out = ParsePatched("{" + tools + R"(, "tool_choice": )" + choice + "}");
    ASSERT_TRUE(out.ok) << choice << ": " << out.error.message;
    EXPECT_EQ(out.chat().tool_choice, expected) << choice;
    EXPECT_TRUE(out.chat().parallel_tool_calls) << choice;
  }
  const Outcome out = ParsePatched(
      "{" + tools + R"(, "tool_choice": {"type": "auto", "disable_parallel_tool_use": true}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_FALSE(out.chat().parallel_tool_calls);
}

TEST(AnthropicRequest, ImageBlocksAndForcedOutput) {
  Outcome out = ParsePatched(R"({"messages": [{"role": "user", "content": [
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
      {"type": "text", "text": "what is it?"}]}]})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const std::vector<ContentPart>& parts = out.chat().conversation.messages[0].content.parts;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].kind, ContentPart::Kind::kImage);
  EXPECT_EQ(parts[1], ContentPart::Text("what is it?"));

  out = ParsePatched(R"({"k3_forced_output": "hi"})", {.allow_forced_output = true});
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.forced_output, "hi");
}

TEST(AnthropicCountTokens, ConvertsWithoutSamplingFields) {
  serve::ChatRequest chat;
  ApiError error;
  ASSERT_TRUE(ParseCountTokensRequest(
      Json::parse(R"({"system": "s", "messages": [{"role": "user", "content": "hi"}]})"), &chat,
      &error))
      << error.message;
  EXPECT_EQ(chat.conversation.messages.size(), 2u);
  EXPECT_FALSE(ParseCountTokensRequest(Json::parse("[]"), &chat, &error));
  EXPECT_EQ(error.http_status, 400);
}

}  // namespace
}  // namespace k3::api
