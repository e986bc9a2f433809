// What Claude Code sends on /v1/messages beyond the basic shape: adaptive thinking with
// output_config.effort, system messages inside `messages`, fields we accept and do not use.
#include <gtest/gtest.h>

#include <string>

#include "api/anthropic_request.h"

namespace k3::api::anthropic_claude_code_test {
namespace {

using text::chat::Content;
using text::chat::Message;
using text::chat::Role;

struct Parsed {
  bool ok = false;
  ApiError error;
  AnthropicRequest request;
  const serve::ChatRequest& chat() const { return *request.generate.chat; }
};

Parsed Parse(const std::string& patch, const ApiOptions& options = {}) {
  Json body = Json::parse(
      R"({"model": "k3", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]})");
  body.merge_patch(Json::parse(patch));
  Parsed out;
  out.ok = ParseMessagesRequest(body, options, &out.request, &out.error);
  return out;
}

TEST(AnthropicClaudeCode, AdaptiveThinkingTakesTheEffortFromOutputConfig) {
  Parsed out =
      Parse(R"({"thinking": {"type": "adaptive"}, "output_config": {"effort": "medium"}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.chat().thinking.enabled, true);
  EXPECT_EQ(out.chat().thinking.effort, "medium");
  for (const char* effort : {"none", "minimal", "low", "high", "xhigh", "max"}) {
    out = Parse(std::string(R"({"thinking": {"type": "adaptive"}, "output_config": {"effort": ")") +
                effort + "\"}}");
    ASSERT_TRUE(out.ok) << effort << ": " << out.error.message;
    EXPECT_EQ(out.chat().thinking.effort, effort);
  }
  out = Parse(R"({"thinking": {"type": "adaptive"}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.chat().thinking.effort, std::nullopt);
}

TEST(AnthropicClaudeCode, BadEffortOrOutputConfigIs400) {
  for (const char* patch :
       {R"({"output_config": {"effort": "extreme"}})", R"({"output_config": {"effort": 3}})",
        R"({"output_config": "high"})"}) {
    const Parsed out = Parse(patch);
    EXPECT_FALSE(out.ok) << patch;
    EXPECT_EQ(out.error.http_status, 400) << patch;
    EXPECT_TRUE(out.error.param.starts_with("output_config")) << patch << ": " << out.error.param;
  }
}

TEST(AnthropicClaudeCode, UnusedFieldsAreAccepted) {
  const Parsed out = Parse(R"({
    "metadata": {"user_id": "u"},
    "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    "output_config": {"effort": "high", "format": null, "task_budget": 5},
    "thinking": {"type": "adaptive"},
    "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]})");
  ASSERT_TRUE(out.ok) << out.error.message;
}

TEST(AnthropicClaudeCode, OutputConfigFormatIsTheResponseFormat) {
  Parsed out = Parse(R"({"output_config": {"format": {"type": "json_schema",
    "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const text::chat::ResponseFormat& format = out.chat().response_format;
  EXPECT_EQ(format.type, text::chat::ResponseFormat::Type::kJsonSchema);
  EXPECT_TRUE(format.strict);
  EXPECT_EQ(format.schema["properties"]["a"]["type"], "integer");
  for (const char* bad : {R"({"output_config": {"format": {"type": "json_object"}}})",
                          R"({"output_config": {"format": {"type": "json_schema"}}})",
                          R"({"output_config": {"format": "json"}})"}) {
    out = Parse(bad);
    EXPECT_FALSE(out.ok) << bad;
    EXPECT_EQ(out.error.param, "output_config.format") << bad;
  }
}

TEST(AnthropicClaudeCode, SystemMessagesStayInPlace) {
  const Parsed out = Parse(R"({"system": "top", "messages": [
    {"role": "user", "content": "a"},
    {"role": "system", "content": [{"type": "text", "text": "mid "}, {"type": "text", "text": "x"}]},
    {"role": "assistant", "content": "b"},
    {"role": "system", "content": "late"},
    {"role": "user", "content": "c"}]})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const std::vector<Message>& m = out.chat().conversation.messages;
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0], (Message{.role = Role::kSystem, .content = Content::Of("top")}));
  EXPECT_EQ(m[1].role, Role::kUser);
  EXPECT_EQ(m[2], (Message{.role = Role::kSystem, .content = Content::Of("mid x")}));
  EXPECT_EQ(m[3].role, Role::kAssistant);
  EXPECT_EQ(m[4], (Message{.role = Role::kSystem, .content = Content::Of("late")}));
  EXPECT_EQ(m[5].role, Role::kUser);
}

}  // namespace
}  // namespace k3::api::anthropic_claude_code_test

namespace k3::api::anthropic_claude_code_test {
namespace {

// Claude Code parses these two sentences to recover (lower max_tokens; compact the history).
TEST(AnthropicClaudeCode, ContextLimitInAnthropicsWording) {
  EXPECT_EQ(AnthropicContextError(*serve::CheckContext(150, 64, 200)).message,
            "input length and max_tokens exceed context limit: 150 + 64 > 200, decrease input "
            "length or max_tokens and try again");
  EXPECT_EQ(AnthropicContextError(*serve::CheckContext(200, 8, 200)).message,
            "input length and max_tokens exceed context limit: 200 + 8 > 200, decrease input "
            "length or max_tokens and try again");
  const ApiError too_long = AnthropicContextError(*serve::CheckContext(210, 8, 200));
  EXPECT_EQ(too_long.http_status, 400);
  EXPECT_EQ(too_long.message, "prompt is too long: 210 tokens > 200 maximum");
  EXPECT_EQ(AnthropicErrorType(too_long.http_status), "invalid_request_error");
}

}  // namespace
}  // namespace k3::api::anthropic_claude_code_test
