// K3 renderer edge cases: malformed requests are INVALID_ARGUMENT naming the field (never a
// crash), and the documented behaviours the goldens do not pin down.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "text/chat/k3_xtml.h"

namespace k3::text::chat::k3_xtml_error_test {
namespace {

using Json = nlohmann::ordered_json;

base::Result<ChatSegments> Render(const char* request_json) {
  return RenderK3Request(Json::parse(request_json));
}

// Expects INVALID_ARGUMENT with `field` in the message.
void ExpectInvalid(const char* request_json, const std::string& field) {
  SCOPED_TRACE(request_json);
  auto result = Render(request_json);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(field), std::string::npos) << result.status().message();
}

std::string Text(const char* request_json) {
  auto result = Render(request_json);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? JoinSegments(*result) : "";
}

TEST(K3RenderErrors, RequestShape) {
  ExpectInvalid(R"([1])", "request");
  ExpectInvalid(R"({})", "messages");
  ExpectInvalid(R"({"messages": {}})", "messages");
  ExpectInvalid(R"({"messages": [1]})", "messages[0]");
  ExpectInvalid(R"({"messages": [{"content": "x"}]})", "messages[0].role");
  ExpectInvalid(R"({"messages": [{"role": "wizard", "content": "x"}]})", "messages[0].role");
  ExpectInvalid(R"({"messages": [], "thinking": 3})", "thinking");
  ExpectInvalid(R"({"messages": [], "thinking": {"type": 1}})", "thinking.type");
  ExpectInvalid(R"({"messages": [], "reasoning_effort": 2})", "reasoning_effort");
  ExpectInvalid(R"({"messages": [], "tools": {}})", "tools");
  ExpectInvalid(R"({"messages": [], "tool_choice": 1})", "tool_choice");
  ExpectInvalid(R"({"messages": [], "response_format": []})", "response_format");
  ExpectInvalid(R"({"messages": [], "response_format": {"type": 1}})", "response_format.type");
}

TEST(K3RenderErrors, Content) {
  ExpectInvalid(R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content");
  ExpectInvalid(R"({"messages": [{"role": "user", "content": {"a": 1}}]})", "messages[0].content");
  ExpectInvalid(R"({"messages": [{"role": "user", "content": [3]}]})", "messages[0].content[0]");
  ExpectInvalid(R"({"messages": [{"role": "user", "content": [{"text": "x"}]}]})",
                "messages[0].content[0].type");
  ExpectInvalid(R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
                "messages[0].content[0].text");
  ExpectInvalid(R"({"messages": [{"role": "user", "content": "x", "name": 7}]})",
                "messages[0].name");
  ExpectInvalid(R"({"messages": [{"role": "assistant", "content": "x", "reasoning_content": 1}]})",
                "messages[0].reasoning_content");
  ExpectInvalid(R"({"messages": [{"role": "system", "content": "", "tools": "x"}]})",
                "messages[0].tools");
}

TEST(K3RenderErrors, ToolCalls) {
  ExpectInvalid(R"({"messages": [{"role": "assistant", "tool_calls": {"a": 1}}]})",
                "messages[0].tool_calls");
  ExpectInvalid(R"({"messages": [{"role": "assistant", "tool_calls": [1]}]})",
                "messages[0].tool_calls[0]");
  ExpectInvalid(R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]})",
                "messages[0].tool_calls[0].function.name");
  ExpectInvalid(
      R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": ""}}]}]})",
      "messages[0].tool_calls[0].function.name");
  ExpectInvalid(R"({"messages": [{"role": "assistant", "tool_calls":
      [{"function": {"name": "f", "arguments": 3}}]}]})",
                "messages[0].tool_calls[0].function.arguments");
  ExpectInvalid(R"({"messages": [{"role": "assistant", "tool_calls":
      [{"function": {"name": "f", "arguments": "[1, 2]"}}]}]})",
                "messages[0].tool_calls[0].function.arguments");
  // A tool result with no id, name or preceding call has no tool to name.
  ExpectInvalid(R"({"messages": [{"role": "tool", "content": "x"}]})", "messages[0]");
}

TEST(K3RenderErrors, EffortAndImages) {
  // The official encoder accepts low, high and max only (its note mentions medium, too).
  ExpectInvalid(R"({"messages": [], "reasoning_effort": "medium"})", "medium");
  // With thinking off the effort is not looked at.
  EXPECT_EQ(Text(R"({"messages": [], "reasoning_effort": "medium",
                     "thinking": {"type": "disabled"}})"),
            "<|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>");
  Json messages = Json::parse(R"([{"role": "user", "content": [{"type": "image"}]}])");
  K3RenderOptions options;
  options.image_prompts = std::vector<std::string>{};
  EXPECT_EQ(RenderK3(messages, options).status().code(), base::StatusCode::kInvalidArgument);
  options.image_prompts = std::vector<std::string>{"<A>", "<B>"};
  EXPECT_EQ(RenderK3(messages, options).status().code(), base::StatusCode::kInvalidArgument);
}

TEST(K3Render, PlaceholderInTextTakesAnImagePrompt) {
  Json messages = Json::parse(R"([{"role": "user", "content": "a<|kimi_image_placeholder|>b"}])");
  K3RenderOptions options;
  options.thinking = false;
  options.image_prompts = std::vector<std::string>{"<IMG>"};
  auto result = RenderK3(messages, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ChatSegments& s = *result;
  ASSERT_GE(s.size(), 10u);
  EXPECT_EQ(s[7].text, "a");
  EXPECT_EQ(s[8].text, "<IMG>");
  EXPECT_TRUE(s[8].allow_special);
  EXPECT_EQ(s[9].text, "b");
}

TEST(K3Render, ArgumentsAndNotes) {
  // Non-string values are json.dumps with default separators, keys in their given order.
  std::string text = Text(R"({"thinking": {"type": "disabled"}, "messages": [
      {"role": "assistant", "tool_calls": [{"function": {"name": "f",
        "arguments": {"o": {"b": 1, "a": [1.5, "é"]}}}}]}]})");
  EXPECT_NE(text.find(R"(<|sep|>{"b": 1, "a": [1.5, "é"]}<|close|>argument)"), std::string::npos)
      << text;
  // tool_choice as a named function renders no note; a string response_format is its type.
  text = Text(R"({"messages": [], "thinking": {"type": "disabled"},
      "tool_choice": {"type": "function", "function": {"name": "f"}},
      "response_format": "json_object"})");
  EXPECT_EQ(text.find("tool-choice"), std::string::npos);
  EXPECT_NE(text.find("response_format=json_object"), std::string::npos);
  // json_schema without a schema prints null.
  text = Text(R"({"messages": [], "thinking": {"type": "disabled"},
      "response_format": {"type": "json_schema"}})");
  EXPECT_NE(text.find("```json\nnull\n```"), std::string::npos) << text;
  // An empty tool name from the message renders an attribute with no value segment.
  auto segments = Render(R"({"messages": [{"role": "tool", "name": "", "content": "r"}]})");
  ASSERT_TRUE(segments.ok());
  EXPECT_NE(JoinSegments(*segments).find(R"(tool="" index="1")"), std::string::npos);
}

// Tool results: a run matched by id is re-sorted and named after the matched calls; a run with
// any unmatched id keeps its order and its own names.
TEST(K3Render, ToolResultBinding) {
  const char* calls = R"({"role": "assistant", "tool_calls": [
      {"id": "a", "function": {"name": "fa"}}, {"id": "b", "function": {"name": "fb"}}]})";
  std::string matched =
      Text((std::string(R"({"thinking": false, "messages": [)") + calls +
            R"(, {"role": "tool", "tool_call_id": "b", "name": "stale", "content": "B"},
          {"role": "tool", "tool_call_id": "a", "content": "A"}]})")
               .c_str());
  EXPECT_NE(matched.find(R"(tool="fa" index="1"<|sep|>A<|close|>message<|sep|><|end_of_msg|>)"
                         R"(<|open|>message role="tool" tool="fb" index="2"<|sep|>B)"),
            std::string::npos)
      << matched;
  std::string unmatched =
      Text((std::string(R"({"thinking": false, "messages": [)") + calls +
            R"(, {"role": "tool", "tool_call_id": "b", "name": "own", "content": "B"},
          {"role": "tool", "tool_call_id": "zz", "content": "Z"}]})")
               .c_str());
  EXPECT_NE(unmatched.find(R"(tool="own" index="1"<|sep|>B)"), std::string::npos) << unmatched;
  EXPECT_NE(unmatched.find(R"(tool="fb" index="2"<|sep|>Z)"), std::string::npos) << unmatched;
}

}  // namespace
}  // namespace k3::text::chat::k3_xtml_error_test
