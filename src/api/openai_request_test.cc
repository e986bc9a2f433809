// POST /v1/chat/completions body validation: every 400 case of the OpenAI reference and the Kimi
// Vendor Verifier (tests/params, tests/k3_features), and the bodies that must be accepted.
#include "api/openai_request.h"

#include <gtest/gtest.h>

#include <string>

namespace k3::api::openai_request_test {
namespace {

const char* kMinimal = R"({"model": "k3", "messages": [{"role": "user", "content": "hi"}]})";
const char* kWeather =
    R"({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}})";

struct Outcome {
  bool ok = false;
  ApiError error;
  std::string exception;  // a parse that throws is a bug: it becomes a 500, not a 400
  OpenAiRequest request;
};

Outcome ParseChat(const Json& body, const ApiOptions& options = {}) {
  Outcome out;
  try {
    out.ok = ParseChatRequest(body, options, &out.request, &out.error);
  } catch (const std::exception& e) {
    out.exception = e.what();
  }
  return out;
}

// The minimal body with `patch` merged in (RFC 7396: a null value removes the key).
Json Patched(const std::string& patch) {
  Json body = Json::parse(kMinimal);
  body.merge_patch(Json::parse(patch));
  return body;
}

struct BadCase {
  const char* name;
  std::string patch;  // merged into the minimal body
  const char* param;  // the expected ApiError::param prefix ("" = any)
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.patch; }

class ChatRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(ChatRejects, With400NamingTheField) {
  const BadCase& c = GetParam();
  const Outcome out = ParseChat(Patched(c.patch));
  ASSERT_TRUE(out.exception.empty()) << c.patch << " threw: " << out.exception;
  ASSERT_FALSE(out.ok) << c.patch;
  EXPECT_EQ(out.error.http_status, 400) << c.patch;
  EXPECT_FALSE(out.error.message.empty()) << c.patch;
  EXPECT_TRUE(out.error.param.starts_with(c.param))
      << c.patch << ": param '" << out.error.param << "', want prefix '" << c.param << "'";
}

std::string Tools(const std::string& list) { return R"({"tools": )" + list + "}"; }
std::string WithTools(const std::string& rest) {
  return std::string(R"({"tools": [)") + kWeather + "], " + rest + "}";
}
std::string Format(const std::string& format) { return R"({"response_format": )" + format + "}"; }
std::string Messages(const std::string& list) { return R"({"messages": )" + list + "}"; }

const BadCase kSampling[] = {
    {"TemperatureNegative", R"({"temperature": -0.1})", "temperature"},
    {"TemperatureTooHigh", R"({"temperature": 2.5})", "temperature"},
    {"TemperatureString", R"({"temperature": "x"})", "temperature"},
    {"TopPZero", R"({"top_p": 0})", "top_p"},
    {"TopPAboveOne", R"({"top_p": 1.5})", "top_p"},
    {"PresencePenalty3", R"({"presence_penalty": 3})", "presence_penalty"},
    {"FrequencyPenaltyMinus3", R"({"frequency_penalty": -3})", "frequency_penalty"},
    {"NZero", R"({"n": 0})", "n"},
    {"N200", R"({"n": 200})", "n"},
    {"NFraction", R"({"n": 1.5})", "n"},
    {"TopLogprobs21", R"({"logprobs": true, "top_logprobs": 21})", "top_logprobs"},
    {"TopLogprobsWithoutLogprobs", R"({"top_logprobs": 2})", "top_logprobs"},
    {"TopLogprobsWithLogprobsFalse", R"({"logprobs": false, "top_logprobs": 2})", "top_logprobs"},
    {"LogprobsString", R"({"logprobs": "yes"})", "logprobs"},
    {"MaxTokensZero", R"({"max_tokens": 0})", "max_tokens"},
    {"MaxTokensNegative", R"({"max_tokens": -1})", "max_tokens"},
    {"MaxTokensFraction", R"({"max_tokens": 1.5})", "max_tokens"},
    {"MaxCompletionTokensZero", R"({"max_completion_tokens": 0})", "max_completion_tokens"},
    {"StopListOf5", R"({"stop": ["a", "b", "c", "d", "e"]})", "stop"},
    {"StopNotStrings", R"({"stop": [1]})", "stop"},
    {"StreamString", R"({"stream": "yes"})", "stream"},
    {"SeedString", R"({"seed": "x"})", "seed"},
    {"TopKFraction", R"({"top_k": 1.5})", "top_k"},
    {"ForcedOutputNotAllowed", R"({"k3_forced_output": "hello"})", "k3_forced_output"},
};

const BadCase kTools[] = {
    {"ToolChoiceBogus", R"({"tool_choice": "bogus"})", "tool_choice"},
    {"ToolChoiceNumber", R"({"tool_choice": 5})", "tool_choice"},
    {"RequiredWithoutTools", R"({"tool_choice": "required"})", "tool_choice"},
    {"RequiredWithEmptyTools", R"({"tools": [], "tool_choice": "required"})", "tool_choice"},
    {"NamedFunctionNotInTools",
     WithTools(R"("tool_choice": {"type": "function", "function": {"name": "other"}})"),
     "tool_choice"},
    {"ToolChoiceObjectWithoutFunction", WithTools(R"("tool_choice": {"type": "function"})"),
     "tool_choice"},
    {"ToolChoiceObjectWithoutName",
     WithTools(R"("tool_choice": {"type": "function", "function": {}})"), "tool_choice"},
    {"ToolChoiceObjectWrongType",
     WithTools(R"("tool_choice": {"type": "tool", "function": {"name": "get_weather"}})"),
     "tool_choice"},
    // BUG (throws nlohmann type_error -> 500): a non-string tool_choice.type.
    {"ToolChoiceTypeNumber", WithTools(R"("tool_choice": {"type": 5})"), "tool_choice"},
    {"DuplicateToolNames", Tools(std::string("[") + kWeather + ", " + kWeather + "]"), "tools"},
    {"ToolNameWithSpace", Tools(R"([{"type": "function", "function": {"name": "get weather"}}])"),
     "tools"},
    {"ToolNameTooLong",
     Tools(R"([{"type": "function", "function": {"name": ")" + std::string(65, 'a') + R"("}}])"),
     "tools"},
    {"ToolNameMissing", Tools(R"([{"type": "function", "function": {}}])"), "tools"},
    // BUG (throws nlohmann type_error -> 500): a non-string tool name.
    {"ToolNameNumber", Tools(R"([{"type": "function", "function": {"name": 123}}])"), "tools"},
    // BUG (throws nlohmann type_error -> 500): a non-string tool type.
    {"ToolTypeNumber", Tools(R"([{"type": 5, "function": {"name": "f"}}])"), "tools"},
    {"ToolsNotAList", Tools(kWeather), "tools"},
    {"ToolItemNotAnObject", Tools(R"(["get_weather"])"), "tools"},
    {"ToolTypeNotFunction", Tools(R"([{"type": "retrieval", "function": {"name": "f"}}])"),
     "tools"},
    {"ToolParametersNotAnObject",
     Tools(R"([{"type": "function", "function": {"name": "f", "parameters": "x"}}])"), "tools"},
    {"ToolStrictNotBool",
     Tools(R"([{"type": "function", "function": {"name": "f", "strict": "yes"}}])"), "tools"},
    {"ParallelToolCallsString", R"({"parallel_tool_calls": "no"})", "parallel_tool_calls"},
};

const BadCase kFormats[] = {
    {"FormatTypeBogus", Format(R"({"type": "bogus"})"), "response_format"},
    {"FormatJsonSchemaMissing", Format(R"({"type": "json_schema"})"), "response_format"},
    {"FormatSchemaWithoutName",
     Format(R"({"type": "json_schema", "json_schema": {"schema": {"type": "object"}}})"),
     "response_format"},
    {"FormatWithoutSchema", Format(R"({"type": "json_schema", "json_schema": {"name": "x"}})"),
     "response_format"},
    {"FormatSchemaNotAnObject",
     Format(R"({"type": "json_schema", "json_schema": {"name": "x", "schema": "s"}})"),
     "response_format"},
    {"FormatStrictNotBool", Format(R"({"type": "json_schema",
                "json_schema": {"name": "x", "schema": {}, "strict": "yes"}})"),
     "response_format"},
    {"FormatNotAnObject", Format(R"("json_object")"), "response_format"},
    {"FormatWithoutType", Format(R"({})"), "response_format"},
};

const BadCase kMessages[] = {
    {"MessagesMissing", R"({"messages": null})", "messages"},
    {"MessagesEmpty", Messages("[]"), "messages"},
    {"MessagesNotAList", Messages(R"({"role": "user", "content": "hi"})"), "messages"},
    {"MessageNotAnObject", Messages(R"(["hi"])"), "messages"},
    {"MessageWithoutRole", Messages(R"([{"content": "hi"}])"), "messages"},
    {"RoleWizard", Messages(R"([{"role": "wizard", "content": "hi"}])"), "messages[0].role"},
    {"ContentNumber", Messages(R"([{"role": "user", "content": 5}])"), "messages[0]"},
    {"ContentPartUnknown", Messages(R"([{"role": "user", "content": [{"type": "audio"}]}])"),
     "messages[0]"},
    {"ContentTextPartWithoutText", Messages(R"([{"role": "user", "content": [{"type": "text"}]}])"),
     "messages[0]"},
    // BUG (throws nlohmann type_error -> 500): a content part whose type is not a string.
    {"ContentPartTypeNumber", Messages(R"([{"role": "user", "content": [{"type": 1}]}])"),
     "messages[0]"},
    {"ToolMessageWithoutToolCallId",
     Messages(R"([{"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}])"),
     "messages[1]"},
    {"ToolCallsOnUserMessage", Messages(R"([{"role": "user", "content": "hi", "tool_calls": [
         {"id": "functions.f:0", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}])"),
     "messages[0]"},
    {"ToolCallsNotAList", Messages(R"([{"role": "user", "content": "hi"},
                  {"role": "assistant", "tool_calls": {"function": {"name": "f"}}}])"),
     "messages[1]"},
    {"ToolCallWithoutName", Messages(R"([{"role": "user", "content": "hi"},
                  {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}])"),
     "messages[1]"},
    {"ToolCallArgumentsNumber", Messages(R"([{"role": "user", "content": "hi"},
                  {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 1}}]}])"),
     "messages[1]"},
};

const BadCase kThinking[] = {
    // BUG (param): the nested Enum reports param "type" / "keep" / "effort" and the message does
    // not mention "thinking"; the field is thinking.type etc.
    {"ThinkingTypeBogus", R"({"thinking": {"type": "bogus"}})", "thinking.type"},
    {"ThinkingKeepNone", R"({"thinking": {"type": "enabled", "keep": "none"}})", "thinking.keep"},
    {"ThinkingEffortUltra", R"({"thinking": {"effort": "ultra"}})", "thinking.effort"},
    {"ThinkingNotAnObject", R"({"thinking": "on"})", "thinking"},
    {"ReasoningEffortUltra", R"({"reasoning_effort": "ultra"})", "reasoning_effort"},
    {"ChatTemplateKwargsNotAnObject", R"({"chat_template_kwargs": "x"})", "chat_template_kwargs"},
    {"StreamOptionsNotAnObject", R"({"stream": true, "stream_options": "x"})", ""},
    {"IncludeUsageNotBool", R"({"stream": true, "stream_options": {"include_usage": "yes"}})", ""},
};

std::string CaseName(const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Sampling, ChatRejects, ::testing::ValuesIn(kSampling), CaseName);
INSTANTIATE_TEST_SUITE_P(Tools, ChatRejects, ::testing::ValuesIn(kTools), CaseName);
INSTANTIATE_TEST_SUITE_P(ResponseFormat, ChatRejects, ::testing::ValuesIn(kFormats), CaseName);
INSTANTIATE_TEST_SUITE_P(Messages, ChatRejects, ::testing::ValuesIn(kMessages), CaseName);
INSTANTIATE_TEST_SUITE_P(Thinking, ChatRejects, ::testing::ValuesIn(kThinking), CaseName);

TEST(ChatRequest, BodyNotAnObjectIs400) {
  for (const char* body : {"[]", "\"hi\"", "5", "null"}) {
    const Outcome out = ParseChat(Json::parse(body));
    ASSERT_TRUE(out.exception.empty()) << body;
    EXPECT_FALSE(out.ok) << body;
    EXPECT_EQ(out.error.http_status, 400) << body;
    EXPECT_FALSE(out.error.message.empty()) << body;
  }
}

TEST(ChatRequest, MinimalBodyKeepsDefaults) {
  const Outcome out = ParseChat(Json::parse(kMinimal));
  ASSERT_TRUE(out.ok) << out.error.message << out.exception;
  const serve::GenerateRequest& g = out.request.generate;
  ASSERT_TRUE(g.chat.has_value());
  serve::ChatRequest minimal;  // the one user message, every chat option at its default
  minimal.conversation.messages = {
      {.role = text::chat::Role::kUser, .content = text::chat::Content::Of("hi")}};
  EXPECT_EQ(*g.chat, minimal);
  EXPECT_FALSE(out.request.stream);
  EXPECT_FALSE(out.request.include_usage);
  EXPECT_FALSE(g.max_tokens_given);
  EXPECT_FALSE(g.want_logprobs);
  EXPECT_EQ(g.sampling.logprobs, -1);
  EXPECT_EQ(g.sampling.n, 1);
  EXPECT_EQ(g.sampling.temperature, engine::SamplingParams().temperature);
  EXPECT_FALSE(g.sampling.seed.has_value());
  EXPECT_TRUE(g.stop.empty());
  EXPECT_TRUE(g.forced_output.empty());
}

TEST(ChatRequest, AcceptsTemperaturesAcrossTheOpenRange) {
  for (double t : {0.0, 0.6, 1.0, 2.0}) {
    Json body = Json::parse(kMinimal);
    body["temperature"] = t;
    const Outcome out = ParseChat(body);
    ASSERT_TRUE(out.ok) << t << ": " << out.error.message;
    EXPECT_EQ(out.request.generate.sampling.temperature, t);
  }
}

TEST(ChatRequest, AcceptsTopPAndN) {
  Outcome out = ParseChat(Patched(R"({"top_p": 0.95, "n": 2})"));
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.sampling.top_p, 0.95);
  EXPECT_EQ(out.request.generate.sampling.n, 2);
  out = ParseChat(Patched(R"({"n": 1})"));
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.sampling.n, 1);
}

// tests/params: the verifier's defaults must pass under both policies.
TEST(ChatRequest, AcceptsVerifierDefaultsUnderBothPolicies) {
  const Json body = Patched(R"({"temperature": 0.6, "top_p": 0.95, "presence_penalty": 0,
      "frequency_penalty": 0, "n": 1, "max_tokens": 1024, "stream": false})");
  for (SamplingPolicy policy : {SamplingPolicy::kOpen, SamplingPolicy::kKimi}) {
    const Outcome out = ParseChat(body, {.policy = policy});
    ASSERT_TRUE(out.ok) << out.error.message;
    const engine::SamplingParams& s = out.request.generate.sampling;
    EXPECT_EQ(s.temperature, 0.6);
    EXPECT_EQ(s.top_p, 0.95);
    EXPECT_EQ(s.presence_penalty, 0.0);
    EXPECT_EQ(s.frequency_penalty, 0.0);
    EXPECT_EQ(s.n, 1);
    EXPECT_EQ(s.max_tokens, 1024);
    EXPECT_TRUE(out.request.generate.max_tokens_given);
  }
}

TEST(ChatRequest, DeveloperRoleBecomesSystemInTheInternalChat) {
  const Outcome out = ParseChat(Patched(Messages(R"([{"role": "developer", "content": "be brief"},
                                                    {"role": "user", "content": "hi"}])")));
  ASSERT_TRUE(out.ok) << out.error.message;
  const auto& messages = out.request.generate.chat->conversation.messages;
  EXPECT_EQ(messages[0].role, text::chat::Role::kSystem);
  EXPECT_EQ(messages[0].content, text::chat::Content::Of("be brief"));
  EXPECT_EQ(messages[1].role, text::chat::Role::kUser);
}

TEST(ChatRequest, UnknownFieldsAreIgnored) {
  const Outcome out = ParseChat(
      Patched(R"({"user": "u1", "metadata": {"a": 1}, "store": false, "x_vendor": [1, 2]})"));
  ASSERT_TRUE(out.ok) << out.error.message;
}

TEST(ChatRequest, MaxCompletionTokensWinsOverMaxTokens) {
  const Outcome out = ParseChat(Patched(R"({"max_completion_tokens": 100, "max_tokens": 50})"));
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.sampling.max_tokens, 100);
  EXPECT_TRUE(out.request.generate.max_tokens_given);
}

TEST(ChatRequest, StreamOptionsIncludeUsage) {
  const Outcome out =
      ParseChat(Patched(R"({"stream": true, "stream_options": {"include_usage": true}})"));
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_TRUE(out.request.stream);
  EXPECT_TRUE(out.request.include_usage);
}

TEST(ChatRequest, LogprobsAndStop) {
  const Outcome out =
      ParseChat(Patched(R"({"logprobs": true, "top_logprobs": 3, "stop": ["a", "b", "c", "d"]})"));
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_TRUE(out.request.generate.want_logprobs);
  EXPECT_EQ(out.request.top_logprobs, 3);
  EXPECT_EQ(out.request.generate.sampling.logprobs, 3);
  EXPECT_EQ(out.request.generate.stop, (std::vector<std::string>{"a", "b", "c", "d"}));
  const Outcome single = ParseChat(Patched(R"({"stop": "END", "seed": 7})"));
  ASSERT_TRUE(single.ok) << single.error.message;
  EXPECT_EQ(single.request.generate.stop, std::vector<std::string>{"END"});
  ASSERT_TRUE(single.request.generate.sampling.seed.has_value());
  EXPECT_EQ(*single.request.generate.sampling.seed, 7u);
}

// tests/k3_features: none and auto without tools are 200; named and required with tools are fine.
TEST(ChatRequest, AcceptsToolChoices) {
  for (const char* patch :
       {R"({"tool_choice": "none"})", R"({"tool_choice": "auto"})", R"({"tools": null})"}) {
    const Outcome out = ParseChat(Patched(patch));
    EXPECT_TRUE(out.ok) << patch << ": " << out.error.message;
  }
  for (const std::string& rest :
       {std::string(R"("tool_choice": "required")"),
        std::string(R"("tool_choice": {"type": "function", "function": {"name": "get_weather"}})"),
        std::string(R"("parallel_tool_calls": false)")}) {
    const Outcome out = ParseChat(Patched(WithTools(rest)));
    EXPECT_TRUE(out.ok) << rest << ": " << out.error.message;
  }
}

TEST(ChatRequest, AcceptsResponseFormatsAndThinking) {
  for (const char* patch : {
           R"({"response_format": {"type": "text"}})",
           R"({"response_format": {"type": "json_object"}})",
           R"({"response_format": {"type": "json_schema", "json_schema":
               {"name": "answer", "schema": {"type": "object"}, "strict": true}}})",
           R"({"thinking": {"type": "enabled", "keep": "all", "effort": "max"}})",
           R"({"thinking": {"type": "disabled"}, "reasoning_effort": "high"})",
           R"({"chat_template_kwargs": {"thinking": false}})",
           // The shared effort vocabulary (serve/effort.h), as pi and the OpenAI SDK send it.
           R"({"reasoning_effort": "none"})",
           R"({"reasoning_effort": "minimal"})",
           R"({"reasoning_effort": "medium"})",
           R"({"reasoning_effort": "xhigh"})",
           R"({"thinking": {"effort": "medium"}})",
       }) {
    const Outcome out = ParseChat(Patched(patch));
    EXPECT_TRUE(out.ok) << patch << ": " << out.error.message;
  }
}

TEST(ChatRequest, AcceptsAToolConversation) {
  const Outcome out = ParseChat(Patched(WithTools(R"("messages": [
      {"role": "system", "content": null},
      {"role": "user", "content": [{"type": "text", "text": "weather?"},
                                   {"type": "image_url", "image_url": {"url": "data:"}}]},
      {"role": "assistant", "content": "", "reasoning_content": "look it up",
       "tool_calls": [{"id": "functions.get_weather:0", "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
      {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "rain"},
      {"role": "tool", "tool_call_id": "functions.get_weather:1", "content": "sun"}])")));
  ASSERT_TRUE(out.ok) << out.error.message << out.exception;
  EXPECT_EQ(out.request.generate.chat->conversation.messages.size(), 5u);
}

}  // namespace
}  // namespace k3::api::openai_request_test
