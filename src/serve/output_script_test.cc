// --script-file rules: parsing (JSON array, JSONL, errors), selection, and each format's rendering
// read back by the real output parser (the same path a scripted generation takes).
#include "serve/output_script.h"

#include <gtest/gtest.h>

namespace k3::serve {
namespace {

using text::output::OutputFormat;
using text::output::OutputParser;
using text::output::ParsedOutput;
using text::output::ParserOptions;

ChatRequest WithToolResults(int results, const std::string& tool) {
  ChatRequest request;
  request.conversation.tools.push_back({.name = tool});
  text::chat::Message user;
  user.content = text::chat::Content::Of("please run it");
  request.conversation.messages.push_back(user);
  for (int i = 0; i < results; ++i) {
    text::chat::Message result;
    result.role = text::chat::Role::kTool;
    result.content = text::chat::Content::Of("ok");
    request.conversation.messages.push_back(result);
  }
  return request;
}

ParsedOutput ParseBack(const std::string& text, const ParserOptions& options) {
  OutputParser parser(options);
  std::vector<text::output::OutputEvent> events;
  parser.Feed(text, &events);
  parser.Finish(false, &events);
  return parser.result();
}

const char kScript[] = R"([
  {"has_tool": "bash", "tool_results": 0, "reasoning": "Run it.", "text": "Running.",
   "tool_calls": [{"name": "bash", "arguments": {"command": "echo \"a&b\"", "n": 2, "on": true}}]},
  {"has_tool": "bash", "text": "Done."},
  {"last_user_contains": "title", "text": "A title"}
])";

TEST(OutputScript, SelectsTheFirstMatchingRule) {
  auto script = OutputScript::Parse(kScript);
  ASSERT_TRUE(script.ok()) << script.status().message();
  ASSERT_EQ(script->size(), 3u);
  EXPECT_EQ(script->Select(WithToolResults(0, "bash"))->text, "Running.");
  EXPECT_EQ(script->Select(WithToolResults(2, "bash"))->text, "Done.");
  EXPECT_EQ(script->Select(WithToolResults(0, "other")), nullptr);
}

TEST(OutputScript, K3OutputParsesBackToTheRule) {
  auto script = OutputScript::Parse(kScript);
  ASSERT_TRUE(script.ok());
  for (bool thinking : {true, false}) {
    ParserOptions options{.format = OutputFormat::kK3,
                          .starts_in_reasoning = thinking,
                          .thinking_enabled = thinking,
                          .tool_names = {"bash"}};
    const ScriptRule& rule = *script->Select(WithToolResults(0, "bash"));
    const ParsedOutput parsed = ParseBack(OutputScript::Render(rule, options), options);
    EXPECT_EQ(parsed.reasoning, thinking ? "Run it." : "");
    EXPECT_EQ(parsed.content, "Running.");
    ASSERT_EQ(parsed.tool_calls.size(), 1u);
    EXPECT_EQ(parsed.tool_calls[0].name, "bash");
    EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments), rule.tool_calls[0].arguments);
  }
}

TEST(OutputScript, K2OutputParsesBackToTheRule) {
  auto script = OutputScript::Parse(kScript);
  ASSERT_TRUE(script.ok());
  ParserOptions options{.format = OutputFormat::kK2,
                        .starts_in_reasoning = true,
                        .tool_names = {"bash"},
                        .first_tool_index = 3};
  const ScriptRule& rule = *script->Select(WithToolResults(0, "bash"));
  const ParsedOutput parsed = ParseBack(OutputScript::Render(rule, options), options);
  EXPECT_EQ(parsed.reasoning, "Run it.");
  EXPECT_EQ(parsed.content, "Running.");
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(parsed.tool_calls[0].id, "functions.bash:3");
  EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments), rule.tool_calls[0].arguments);
}

TEST(OutputScript, JsonlAndErrors) {
  auto jsonl = OutputScript::Parse("{\"text\": \"a\"}\n\n{\"text\": \"b\"}\n");
  ASSERT_TRUE(jsonl.ok());
  EXPECT_EQ(jsonl->size(), 2u);
  for (const char* bad :
       {"{\"txt\": 1}", "[{\"tool_results\": \"x\"}]", "[{\"tool_calls\": [{}]}]",
        "[{\"tool_calls\": [{\"name\": \"f\", \"arguments\": [1]}]}]", "{", "[1]"}) {
    EXPECT_FALSE(OutputScript::Parse(bad).ok()) << bad;
  }
  EXPECT_FALSE(OutputScript::FromFile("/nonexistent/script.json").ok());
}

}  // namespace
}  // namespace k3::serve
