// K3 XTML output parsing: hand-written cases, plus every assistant message of the K3 render
// goldens parsed back and compared with the request message it was rendered from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/paths.h"
#include "text/output/parse_test_util.h"

namespace k3::text::output::testing {
namespace {

std::string Open(const std::string& tag) { return "<|open|>" + tag + "<|sep|>"; }
std::string Close(const std::string& tag) { return "<|close|>" + tag + "<|sep|>"; }
std::string Arg(const std::string& key, const std::string& type, const std::string& value) {
  return Open("argument key=\"" + key + "\" type=\"" + type + "\"") + value + Close("argument");
}
std::string ToolCallK3(const std::string& name, int index, const std::string& args) {
  return Open("call tool=\"" + name + "\" index=\"" + std::to_string(index) + "\"") + args +
         Close("call");
}
std::string Tools(const std::string& calls) { return Open("tools") + calls + Close("tools"); }
const std::string kEnd = Close("message") + "<|end_of_msg|>";
const std::string kThinkToResponse = Close("think") + Open("response");

// Message blocks and argument encoding: think/response, typed arguments, escaping.
std::vector<OutputCase> BlockAndArgumentCases() {
  ParserOptions think = K3Options(true);
  ParserOptions response = K3Options(false);
  ParserOptions no_thinking = K3Options(true);
  no_thinking.thinking_enabled = false;
  ParserOptions config = K3Options(false, {"set_config", "calculator"});
  return {
      {"think_then_response", think,
       "Reasoning.\n" + kThinkToResponse + "Answer.\n" + Close("response") + kEnd, false,
       Out("Reasoning.\n", "Answer.\n")},
      {"response_only", response, "Hi!" + Close("response") + kEnd, false, Out("", "Hi!")},
      {"thinking_disabled_starts_in_response", no_thinking, "Hi!" + Close("response"), false,
       Out("", "Hi!")},
      {"string_args", think,
       kThinkToResponse + Close("response") +
           Tools(ToolCallK3("get_weather", 1,
                            Arg("city", "string", "北京") + Arg("unit", "string", "celsius"))) +
           kEnd,
       false, Out("", "", {Call("get_weather", 0, R"({"city":"北京","unit":"celsius"})")})},
      {"nonstring_args", config,
       Close("response") +
           Tools(ToolCallK3("set_config", 1,
                            Arg("mode", "string", "fast") + Arg("level", "number", "2") +
                                Arg("ratio", "number", " 0.5\n") + Arg("label", "null", "null") +
                                Arg("flags", "array", R"(["a", "b"])") +
                                Arg("extra", "object", R"({"k": [1, {"z": true}]})") +
                                Arg("on", "boolean", "false"))),
       false,
       Out("", "",
           {Call("set_config", 0,
                 R"({"mode":"fast","level":2,"ratio":0.5,"label":null,"flags":["a", "b"],)"
                 R"("extra":{"k": [1, {"z": true}]},"on":false})")})},
      {"invalid_nonstring_becomes_string", config,
       Tools(ToolCallK3("set_config", 1, Arg("level", "number", "two \"2\""))), false,
       Out("", "", {Call("set_config", 0, R"({"level":"two \"2\""})")})},
      {"json_block_raw_arguments", config,
       Tools(ToolCallK3("calculator", 1,
                        Open("json type=\"object\"") + "{expression: 2+2" + Close("json"))),
       false, Out("", "", {Call("calculator", 0, "{expression: 2+2")})},
      {"empty_args", response, Tools(ToolCallK3("web_search", 1, "")), false,
       Out("", "", {Call("web_search", 0, "{}")})},
      {"attribute_unescaping", K3Options(false, {"a&b"}),
       Tools(ToolCallK3("a&amp;b", 1, Arg("k&quot;1&amp;", "string", "v"))), false,
       Out("", "", {Call("a&b", 0, R"({"k\"1&":"v"})")})},
      {"string_value_escaped", response,
       Tools(ToolCallK3("web_search", 1, Arg("query", "string", "a \"q\"\\\n\t\x01 <b>"))), false,
       Out("", "", {Call("web_search", 0, R"({"query":"a \"q\"\\\n\t\u0001 <b>"})")})},
  };
}

// Calls in and out of place, dropped tools, truncation and malformed markup.
std::vector<OutputCase> CallAndRecoveryCases() {
  ParserOptions think = K3Options(true);
  ParserOptions response = K3Options(false);
  ParserOptions first7 = K3Options(false);
  first7.first_tool_index = 7;
  const std::string paris = Arg("city", "string", "Paris");
  return {
      {"tools_inside_think_without_close", think,
       "I should search." + Tools(ToolCallK3("web_search", 1, Arg("query", "string", "x"))) + kEnd,
       false, Out("I should search.", "", {Call("web_search", 0, R"({"query":"x"})")})},
      {"undeclared_tool_dropped", first7,
       Tools(ToolCallK3("img_gen", 1, paris) + ToolCallK3("get_weather", 2, paris)), false,
       Out("", "", {Call("get_weather", 7, R"({"city":"Paris"})")}, 1)},
      {"parallel_calls", first7,
       "Let me check." + Close("response") +
           Tools(ToolCallK3("get_weather", 1, paris) +
                 ToolCallK3("get_weather", 2, Arg("city", "string", "Tokyo")) +
                 ToolCallK3("web_search", 3, Arg("query", "string", "news"))) +
           kEnd,
       false,
       Out("", "Let me check.",
           {Call("get_weather", 7, R"({"city":"Paris"})"),
            Call("get_weather", 8, R"({"city":"Tokyo"})"),
            Call("web_search", 9, R"({"query":"news"})")})},
      {"truncated_mid_string_arg", response,
       Open("tools") + ToolCallK3("get_weather", 1, paris) +
           Open("call tool=\"get_weather\" index=\"2\"") +
           Open("argument key=\"city\" type=\"string\"") + "Tok",
       true,
       Out("", "",
           {Call("get_weather", 0, R"({"city":"Paris"})"),
            Call("get_weather", 1, R"({"city":"Tok)", false)})},
      {"truncated_in_call_header", response,
       Open("tools") + ToolCallK3("get_weather", 1, paris) + "<|open|>call tool=\"web_se", true,
       Out("", "", {Call("get_weather", 0, R"({"city":"Paris"})")})},
      {"spaces_around_special_tokens", think,
       "r<|close|> think <|sep|><|open|> response <|sep|>c<|close|> response <|sep|>"
       "<|open|> call  tool = \"web_search\" index=\"1\" <|sep|>" +
           Arg("query", "string", "q") + "<|close|> call <|sep|>",
       false, Out("r", "c", {Call("web_search", 0, R"({"query":"q"})")})},
      {"end_of_msg_discards_rest", response, "a<|end_of_msg|>b" + Open("response") + "c", false,
       Out("", "a")},
      {"body_whitespace_dropped_text_kept", think,
       "r" + Close("think") + "\n " + Open("response") + "c" + Close("response") + "stray" +
           Close("message"),
       false, Out("r", "cstray")},
      {"im_end_is_plain_text_in_k3", response, "x<|im_end|>y", false, Out("", "x<|im_end|>y")},
      {"call_without_tools_block", response,
       Close("response") + ToolCallK3("web_search", 1, "") + kEnd, false,
       Out("", "", {Call("web_search", 0, "{}")})},
      {"unknown_block_transparent", response, "A" + Open("foo x=\"1\"") + "B" + Close("foo") + "C",
       false, Out("", "ABC")},
      {"stop_mid_call_closes_it", response,
       Open("tools") + Open("call tool=\"get_weather\" index=\"1\"") +
           Open("argument key=\"city\" type=\"string\"") + "Ro",
       false, Out("", "", {Call("get_weather", 0, R"({"city":"Ro"})")})},
      {"malformed_header_ignored", response,
       "a" + Open("call tool=web_search") + "b" + Close("call") + "c", false, Out("", "abc")},
      {"missing_key_argument_ignored", response,
       Tools(ToolCallK3("web_search", 1,
                        Open("argument type=\"string\"") + "lost" + Close("argument") +
                            Arg("query", "string", "kept"))),
       false, Out("", "", {Call("web_search", 0, R"({"query":"kept"})")})},
  };
}

}  // namespace

// In this order (the chunking property test walks them all).
std::vector<OutputCase> K3Cases() {
  std::vector<OutputCase> cases;
  for (auto* group : {BlockAndArgumentCases, CallAndRecoveryCases}) {
    for (OutputCase& c : group()) cases.push_back(std::move(c));
  }
  return cases;
}

// One assistant message from the K3 render goldens: the text after its generation opener.
std::vector<GoldenMessage> K3GoldenMessages() {
  std::vector<GoldenMessage> out;
  for (const nlohmann::json& g :
       k3::testing::ReadJsonLines(k3::testing::SharedDir() + "/goldens/chat/k3_render.jsonl")) {
    std::vector<std::string> tools;  // request tools plus "dynamic" tools of system messages
    auto add_tools = [&](const nlohmann::json& list) {
      for (const auto& t : list) tools.push_back(t["function"]["name"]);
    };
    add_tools(g["request"].value("tools", nlohmann::json::array()));
    for (const auto& m : g["request"]["messages"]) {
      add_tools(m.value("tools", nlohmann::json::array()));
    }
    std::vector<nlohmann::json> assistants;
    for (const auto& m : g["request"]["messages"]) {
      if (m["role"] == "assistant") assistants.push_back(m);
    }
    const std::string text = g["text"];
    const std::string head = "<|open|>message role=\"assistant\"";
    size_t n = 0;
    for (size_t pos = text.find(head); pos != std::string::npos; pos = text.find(head, pos + 1)) {
      size_t body = text.find("<|sep|>", pos) + 7;
      size_t end = text.find("<|end_of_msg|>", body);
      if (end == std::string::npos) continue;  // the generation prompt
      std::string msg = text.substr(body, end - body + 14);
      bool in_think = msg.starts_with(Open("think"));
      if (!in_think && !msg.starts_with(Open("response"))) continue;
      GoldenMessage gm;
      gm.name = g["id"].get<std::string>() + "#" + std::to_string(n);
      gm.options = K3Options(in_think, tools);
      gm.text = msg.substr(Open(in_think ? "think" : "response").size());
      if (n < assistants.size()) gm.request = assistants[n];
      out.push_back(gm);
      ++n;
    }
  }
  return out;
}

namespace {

// Arguments as the request gave them: an object, or a string holding JSON (or not). An empty
// string renders as no argument blocks, which parses back as {}.
nlohmann::json ExpectedArguments(const nlohmann::json& args) {
  if (args == "") return nlohmann::json::object();
  if (!args.is_string()) return args;
  auto parsed = nlohmann::json::parse(args.get<std::string>(), nullptr, false);
  return parsed.is_discarded() ? args : parsed;
}

// Parsing a rendered assistant message gives back the message: content, calls and arguments.
TEST(K3Golden, RenderedAssistantMessagesParseBack) {
  std::vector<GoldenMessage> messages = K3GoldenMessages();
  ASSERT_GE(messages.size(), 20u);
  int calls = 0;
  for (const GoldenMessage& gm : messages) {
    SCOPED_TRACE(gm.name);
    ParsedOutput out = ParseAll(gm.text, gm.options);
    const nlohmann::json& m = gm.request;
    ASSERT_TRUE(m.is_object());
    EXPECT_EQ(out.content, m["content"].is_string() ? m["content"].get<std::string>() : "");
    if (!out.reasoning.empty()) {
      EXPECT_EQ(out.reasoning, m.value("reasoning_content", m.value("reasoning", "")));
    }
    auto expected_calls = m.value("tool_calls", nlohmann::json::array());
    ASSERT_EQ(out.tool_calls.size(), expected_calls.size());
    EXPECT_EQ(out.dropped_calls, 0);
    for (size_t i = 0; i < expected_calls.size(); ++i, ++calls) {
      const auto& f = expected_calls[i]["function"];
      const ParsedToolCall& got = out.tool_calls[i];
      EXPECT_TRUE(got.complete);
      EXPECT_EQ(got.name, f["name"]);
      EXPECT_EQ(got.id, "functions." + got.name + ":" + std::to_string(i));
      auto parsed = nlohmann::json::parse(got.arguments, nullptr, false);
      EXPECT_EQ(parsed.is_discarded() ? nlohmann::json(got.arguments) : parsed,
                ExpectedArguments(f["arguments"]))
          << got.arguments;
    }
  }
  EXPECT_GE(calls, 15);
}

class K3CaseTest : public ::testing::TestWithParam<OutputCase> {};

TEST_P(K3CaseTest, OneShotAndByteByByte) {
  const OutputCase& c = GetParam();
  EXPECT_EQ(ParseAll(c.text, c.options, c.truncated), c.expected);
  StreamRun run = ParseChunked(c.text, c.options, EveryByte(c.text.size()), c.truncated);
  EXPECT_EQ(run.from_events, c.expected);
  EXPECT_EQ(run.result, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, K3CaseTest, ::testing::ValuesIn(K3Cases()),
                         [](const auto& info) { return info.param.name; });

// String arguments stream as they arrive: `{"key":"` first, then escaped text.
TEST(K3Stream, StringArgumentsStreamIncrementally) {
  OutputParser parser(K3Options(false));
  std::vector<OutputEvent> events;
  parser.Feed(Open("tools") + Open("call tool=\"web_search\" index=\"1\""), &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, OutputEvent::kToolCallBegin);
  EXPECT_EQ(events[0].id, "functions.web_search:0");
  events.clear();
  parser.Feed(Open("argument key=\"query\" type=\"string\"") + "a\"b", &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, R"({"query":"a\"b)");
  events.clear();
  parser.Feed("c<|clo", &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, "c");
}

}  // namespace
}  // namespace k3::text::output::testing
