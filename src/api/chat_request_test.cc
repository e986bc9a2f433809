// Both chat protocols convert onto one typed request: an OpenAI Chat body and an Anthropic
// Messages body that say the same thing give equal serve::ChatRequests (and so the same prompt),
// and the typed request holds what the OpenAI body said, field by field.
#include <gtest/gtest.h>

#include "api/anthropic_request.h"
#include "api/openai_request.h"

namespace k3::api {
namespace {

using text::chat::Content;
using text::chat::ContentPart;
using text::chat::Message;
using text::chat::ResponseFormat;
using text::chat::Role;
using text::chat::ToolChoice;

serve::ChatRequest FromOpenAi(const char* body) {
  OpenAiRequest parsed;
  ApiError error;
  EXPECT_TRUE(ParseChatRequest(Json::parse(body), {}, &parsed, &error)) << error.message;
  return parsed.generate.chat.value_or(serve::ChatRequest());
}

serve::ChatRequest FromAnthropic(const char* body) {
  AnthropicRequest parsed;
  ApiError error;
  EXPECT_TRUE(ParseMessagesRequest(Json::parse(body), {}, &parsed, &error)) << error.message;
  return parsed.generate.chat.value_or(serve::ChatRequest());
}

// A tool conversation: system prompt, a call with reasoning, its result, the next question; one
// tool, a required call, no parallel calls, thinking off.
TEST(ChatRequestConversion, OpenAiAndAnthropicToolConversationsAreEqual) {
  const serve::ChatRequest openai = FromOpenAi(R"({
    "model": "k3",
    "messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": "weather in Oslo?"},
      {"role": "assistant", "content": "Checking.", "reasoning_content": "use the tool",
       "tool_calls": [{"id": "functions.get_weather:0", "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
      {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "rain"},
      {"role": "user", "content": [{"type": "text", "text": "and tomorrow?"}]}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "w",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "tool_choice": "required", "parallel_tool_calls": false,
    "thinking": {"type": "disabled"}})");
  const serve::ChatRequest anthropic = FromAnthropic(R"({
    "model": "k3", "max_tokens": 4096, "system": "be brief",
    "messages": [
      {"role": "user", "content": "weather in Oslo?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "use the tool", "signature": "s"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "rain"},
        {"type": "text", "text": "and tomorrow?"}]}],
    "tools": [{"name": "get_weather", "description": "w",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
    "thinking": {"type": "disabled"}})");
  EXPECT_EQ(openai, anthropic);

  // What both say, typed.
  ASSERT_EQ(openai.conversation.messages.size(), 5u);
  const Message& call = openai.conversation.messages[2];
  EXPECT_EQ(call.role, Role::kAssistant);
  EXPECT_EQ(call.reasoning, "use the tool");
  ASSERT_EQ(call.tool_calls.size(), 1u);
  EXPECT_EQ(call.tool_calls[0].name, "get_weather");
  EXPECT_EQ(openai.conversation.messages[3].tool_call_id, "functions.get_weather:0");
  EXPECT_EQ(openai.tool_choice.mode, ToolChoice::Mode::kRequired);
  EXPECT_FALSE(openai.parallel_tool_calls);
  EXPECT_EQ(openai.thinking.enabled, false);
  ASSERT_EQ(openai.conversation.tools.size(), 1u);
  EXPECT_EQ(openai.conversation.tools[0].description, "w");
}

TEST(ChatRequestConversion, ImagesNamedToolChoiceAndThinkingOn) {
  const serve::ChatRequest openai = FromOpenAi(R"({
    "messages": [{"role": "user", "content": [
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
      {"type": "text", "text": "what is it?"}]}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    "tool_choice": {"type": "function", "function": {"name": "f"}},
    "thinking": {"type": "enabled"}})");
  const serve::ChatRequest anthropic = FromAnthropic(R"({
    "max_tokens": 4096,
    "messages": [{"role": "user", "content": [
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
      {"type": "text", "text": "what is it?"}]}],
    "tools": [{"name": "f", "input_schema": {}}],
    "tool_choice": {"type": "tool", "name": "f"},
    "thinking": {"type": "enabled", "budget_tokens": 1024}})");
  EXPECT_EQ(openai, anthropic);
  EXPECT_EQ(openai.conversation.messages[0].content,
            Content::Of({ContentPart::Image("data:image/png;base64,AA"),
                         ContentPart::Text("what is it?")}));
  EXPECT_EQ(openai.tool_choice, (ToolChoice{ToolChoice::Mode::kFunction, "f"}));
  EXPECT_EQ(openai.thinking.enabled, true);
}

// The OpenAI-only fields: response_format, reasoning effort, template kwargs, developer role.
TEST(ChatRequestConversion, OpenAiOnlyFields) {
  const serve::ChatRequest chat = FromOpenAi(R"({
    "messages": [{"role": "developer", "content": "rules", "name": "ops"},
                 {"role": "user", "content": null}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "p", "strict": false,
                        "schema": {"type": "object"}}},
    "reasoning_effort": "low", "chat_template_kwargs": {"preserve_thinking": true}})");
  ASSERT_EQ(chat.conversation.messages.size(), 2u);
  EXPECT_EQ(chat.conversation.messages[0].role, Role::kSystem);
  EXPECT_EQ(chat.conversation.messages[0].name, "ops");
  EXPECT_EQ(chat.conversation.messages[1].content, Content::Null());
  EXPECT_EQ(chat.response_format, (ResponseFormat{.type = ResponseFormat::Type::kJsonSchema,
                                                  .name = "p",
                                                  .schema = Json::parse(R"({"type": "object"})"),
                                                  .strict = false}));
  EXPECT_EQ(chat.thinking.effort, "low");
  EXPECT_FALSE(chat.thinking.enabled.has_value());
  EXPECT_EQ(chat.template_kwargs, Json::parse(R"({"preserve_thinking": true})"));
  // thinking.effort wins over reasoning_effort.
  EXPECT_EQ(FromOpenAi(R"({"messages": [{"role": "user", "content": "x"}],
                           "thinking": {"type": "enabled", "effort": "max"},
                           "reasoning_effort": "low"})")
                .thinking.effort,
            "max");
}

// What the typed form cannot hold is a 400 naming the field (the K3 renderer's messages).
TEST(ChatRequestConversion, FieldsOfTheWrongTypeAre400) {
  for (const char* body : {
           R"({"messages": [{"role": "user", "content": "x", "name": 7}]})",
           R"({"messages": [{"role": "assistant", "content": "x", "reasoning_content": 1}]})",
       }) {
    OpenAiRequest parsed;
    ApiError error;
    EXPECT_FALSE(ParseChatRequest(Json::parse(body), {}, &parsed, &error)) << body;
    EXPECT_EQ(error.http_status, 400) << body;
    EXPECT_NE(error.message.find("must be a string or null"), std::string::npos) << error.message;
  }
}

}  // namespace
}  // namespace k3::api
