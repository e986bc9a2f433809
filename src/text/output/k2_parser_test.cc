// K2-family output parsing: hand-written cases, one per behaviour or known engine bug
// (frontend.md §3.6), each checked one-shot and streamed byte by byte.
#include <gtest/gtest.h>

#include "text/output/parse_test_util.h"

namespace k3::text::output::testing {
namespace {

constexpr char kSB[] = "<|tool_calls_section_begin|>";
constexpr char kSE[] = "<|tool_calls_section_end|>";
constexpr char kCB[] = "<|tool_call_begin|>";
constexpr char kAB[] = "<|tool_call_argument_begin|>";
constexpr char kCE[] = "<|tool_call_end|>";

std::string ToolCall(const std::string& id, const std::string& args) {
  return std::string(kCB) + id + kAB + args + kCE;
}

std::string Section(const std::string& calls) { return kSB + calls + kSE; }

ParserOptions InReasoning() {
  ParserOptions o = K2Options();
  o.starts_in_reasoning = true;
  return o;
}

ParserOptions Identity() {
  ParserOptions o = K2Options();
  o.thinking_enabled = false;
  return o;
}

ParserOptions WithFirstIndex(int first) {
  ParserOptions o = K2Options();
  o.first_tool_index = first;
  return o;
}

// Reasoning and content: <think> placement, identity mode, truncation inside reasoning.
std::vector<OutputCase> ReasoningCases() {
  ParserOptions k2 = K2Options();
  return {
      {"plain_content", k2, "Hello world", false, Out("", "Hello world")},
      {"think_then_content", k2, "<think>Let me think.</think>The answer is 4.", false,
       Out("Let me think.", "The answer is 4.")},
      {"space_before_think", k2, "\n <think>r</think>\n\nc", false, Out("r", "\n\nc")},
      {"no_think_in_thinking_mode", k2, "  Just content", false, Out("", "  Just content")},
      {"late_think_is_text", k2, "a<think>b</think>", false, Out("", "a<think>b</think>")},
      {"starts_in_reasoning", InReasoning(), "reasoning here</think>answer", false,
       Out("reasoning here", "answer")},
      {"starts_in_reasoning_redundant_think", InReasoning(), "<think>r</think>a", false,
       Out("r", "a")},
      {"reasoning_truncated", InReasoning(), "still thinking", true, Out("still thinking", "")},
      {"identity_mode_all_content", Identity(), "<think>x</think>y", false,
       Out("", "<think>x</think>y")},
  };
}

// Tool-call sections and ids: global indices, section marker spellings, id recovery.
std::vector<OutputCase> CallIdCases() {
  const std::string w = R"({"city": "Beijing"})";
  const std::string s = R"({"q": "kimi"})";
  ParserOptions k2 = K2Options();
  return {
      {"single_call", k2,
       "<think>r</think>Let me check." + Section(ToolCall("functions.get_weather:0", w)) +
           "<|im_end|>",
       false, Out("r", "Let me check.", {Call("get_weather", 0, w)})},
      {"ids_reissued_global_index", WithFirstIndex(5),
       Section(ToolCall("functions.get_weather:0", w) + ToolCall("functions.search:1", s)), false,
       Out("", "", {Call("get_weather", 5, w), Call("search", 6, s)})},
      {"singular_section_marker", k2,
       "<|tool_call_section_begin|>" + ToolCall("functions.search:0", s) +
           "<|tool_call_section_end|>",
       false, Out("", "", {Call("search", 0, s)})},
      {"noncanonical_ids", k2,
       Section(ToolCall("search:0", s) + ToolCall("functions_search_1", s) + ToolCall("search", s) +
               ToolCall("functions.search", s) + ToolCall(" \n functions.search:3 \n", s) +
               ToolCall("functionssearch5", s) + ToolCall("tools.v2.search:0", s)),
       false,
       Out("", "",
           {Call("search", 0, s), Call("search", 1, s), Call("search", 2, s), Call("search", 3, s),
            Call("search", 4, s), Call("search", 5, s), Call("search", 6, s)})},
      {"unrecoverable_ids_dropped", k2,
       Section(ToolCall("call00003", s) + ToolCall("0", s) + ToolCall("search:1", s)), false,
       Out("", "", {Call("search", 0, s)}, 2)},
      {"two_calls_not_merged", k2,
       Section(ToolCall("functions.get_weather:0", R"({"city": "A"})") +
               ToolCall("functions.get_weather:1", R"({"city": "B"})")),
       false,
       Out("", "",
           {Call("get_weather", 0, R"({"city": "A"})"),
            Call("get_weather", 1, R"({"city": "B"})")})},
      {"section_inside_reasoning_without_end_think", InReasoning(),
       "I will call the tool." + Section(ToolCall("functions.search:0", s)), false,
       Out("I will call the tool.", "", {Call("search", 0, s)})},
      {"section_inside_explicit_think", k2,
       "<think>need data" + Section(ToolCall("functions.search:0", s)) + "<|im_end|>", false,
       Out("need data", "", {Call("search", 0, s)})},
  };
}

// Truncated output, and which tool names are kept or dropped.
std::vector<OutputCase> TruncationAndNameCases() {
  const std::string w = R"({"city": "Beijing"})";
  const std::string s = R"({"q": "kimi"})";
  ParserOptions k2 = K2Options();
  ParserOptions no_tools = K2Options({});
  ParserOptions any = K2Options({});
  any.accept_undeclared_tools = true;
  return {
      {"truncated_inside_second_call", k2,
       "ok" + std::string(kSB) + ToolCall("functions.get_weather:0", w) + kCB +
           "functions.get_weather:1" + kAB + R"({"city": "Pa)",
       true,
       Out("", "ok",
           {Call("get_weather", 0, w), Call("get_weather", 1, R"({"city": "Pa)", false)})},
      {"truncated_inside_id", k2,
       std::string(kSB) + ToolCall("functions.search:0", s) + kCB + "functions.get_wea", true,
       Out("", "", {Call("search", 0, s)})},
      {"truncated_before_section_end", k2, std::string(kSB) + ToolCall("functions.search:0", s),
       true, Out("", "", {Call("search", 0, s)})},
      {"content_before_section_kept", k2,
       "Sure, checking both.\n\n" + Section(ToolCall("functions.search:0", s)), false,
       Out("", "Sure, checking both.\n\n", {Call("search", 0, s)})},
      {"undeclared_name_dropped", k2,
       Section(ToolCall("functions.img_gen:0", s) + ToolCall("functions.search:1", s)), false,
       Out("", "", {Call("search", 0, s)}, 1)},
      {"no_tools_declared_swallows_calls", no_tools,
       "Text." + Section(ToolCall("functions.search:0", s)), false, Out("", "Text.", {}, 1)},
      {"accept_undeclared", any, Section(ToolCall("functions.img-gen.v2:0", s)), false,
       Out("", "", {Call("img-gen.v2", 0, s)})},
      {"im_end_stripped", k2, "Hello<|im_end|>trailing junk", false, Out("", "Hello")},
      {"empty_im_end_after_think", k2, "<think>plan</think><|im_end|>", false, Out("plan", "")},
  };
}

// Malformed or unusual markup: missing markers, marker-like text, bytes.
std::vector<OutputCase> MalformedMarkupCases() {
  const std::string s = R"({"q": "kimi"})";
  ParserOptions k2 = K2Options();
  return {
      {"args_whitespace_trimmed", k2,
       Section(std::string(kCB) + " functions.search:0 " + kAB + " \n " + s + " \n " + kCE), false,
       Out("", "", {Call("search", 0, s)})},
      {"missing_call_end_before_next_call", k2,
       std::string(kSB) + kCB + "functions.get_weather:0" + kAB + R"({"city":"A"})" + kCB +
           "functions.get_weather:1" + kAB + R"({"city":"B"})" + kCE + kSE,
       false,
       Out("", "",
           {Call("get_weather", 0, R"({"city":"A"})"), Call("get_weather", 1, R"({"city":"B"})")})},
      {"missing_call_end_invalid_json", k2,
       std::string(kSB) + kCB + "functions.search:0" + kAB + R"({"q": )" + kSE + "after", false,
       Out("", "after", {Call("search", 0, R"({"q":)", false)})},
      {"call_without_section_begin", k2, "c" + ToolCall("functions.search:0", s), false,
       Out("", "c", {Call("search", 0, s)})},
      {"text_after_section_is_content", k2, Section(ToolCall("functions.search:0", s)) + "done",
       false, Out("", "done", {Call("search", 0, s)})},
      {"marker_like_text_in_args", k2,
       Section(ToolCall("functions.search:0", R"({"q": "a<b <|tool_ x <|im_start|>"})")), false,
       Out("", "", {Call("search", 0, R"({"q": "a<b <|tool_ x <|im_start|>"})")})},
      {"names_with_dash_and_dot", K2Options({"get-weather", "a.b", "b"}),
       Section(ToolCall("functions.get-weather:0", "{}") + ToolCall("functions.a.b:1", "{}")),
       false, Out("", "", {Call("get-weather", 0, "{}"), Call("a.b", 1, "{}")})},
      {"unicode", k2,
       "<think>思考😀</think>你好 é" + Section(ToolCall("functions.search:0", R"({"q":"北京"})")),
       false, Out("思考😀", "你好 é", {Call("search", 0, R"({"q":"北京"})")})},
      {"stop_mid_args_valid_json", k2, std::string(kSB) + kCB + "functions.search:0" + kAB + s,
       false, Out("", "", {Call("search", 0, s)})},
      {"call_without_arguments_dropped", k2, Section(std::string(kCB) + "functions.search:0" + kCE),
       false, Out("", "", {}, 1)},
      {"invalid_utf8_replaced", k2,
       "a\xff"
       "b\xe4\xb8",
       false,
       Out("",
           "a\xef\xbf\xbd"
           "b\xef\xbf\xbd")},
      {"partial_marker_at_end_is_text", k2, "Hello <|tool_calls_sec", false,
       Out("", "Hello <|tool_calls_sec")},
      {"non_marker_special_text", k2, "a <|im_start|> b <| c", false,
       Out("", "a <|im_start|> b <| c")},
      {"bundled_markers", k2,
       std::string("<think>r</think>") + kSB + kCB + "functions.search:0" + kAB + "{}" + kCE + kCB +
           "functions.get_weather:1" + kAB + "{}" + kCE + kSE + "<|im_end|>",
       false, Out("r", "", {Call("search", 0, "{}"), Call("get_weather", 1, "{}")})},
  };
}

}  // namespace

// In this order (the chunking property test walks them all).
std::vector<OutputCase> K2Cases() {
  std::vector<OutputCase> cases;
  for (auto* group : {ReasoningCases, CallIdCases, TruncationAndNameCases, MalformedMarkupCases}) {
    for (OutputCase& c : group()) cases.push_back(std::move(c));
  }
  return cases;
}

namespace {

class K2CaseTest : public ::testing::TestWithParam<OutputCase> {};

TEST_P(K2CaseTest, OneShotAndByteByByte) {
  const OutputCase& c = GetParam();
  EXPECT_EQ(ParseAll(c.text, c.options, c.truncated), c.expected);
  StreamRun run = ParseChunked(c.text, c.options, EveryByte(c.text.size()), c.truncated);
  EXPECT_EQ(run.from_events, c.expected);
  EXPECT_EQ(run.result, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, K2CaseTest, ::testing::ValuesIn(K2Cases()),
                         [](const auto& info) { return info.param.name; });

// Partial markers are never emitted: while a marker arrives byte by byte nothing is streamed.
TEST(K2Stream, HoldsBackPartialMarkers) {
  OutputParser parser(K2Options());
  std::vector<OutputEvent> events;
  parser.Feed("Hi", &events);
  std::string marker = "<|tool_calls_section_begin|>";
  for (size_t i = 0; i + 1 < marker.size(); ++i) parser.Feed(marker.substr(i, 1), &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, "Hi");
  parser.Feed(marker.substr(marker.size() - 1), &events);
  EXPECT_EQ(events.size(), 1u);
  EXPECT_EQ(parser.result().content, "Hi");
}

// ToolCallBegin comes once the name is known, then argument deltas, then the end.
TEST(K2Stream, EventOrder) {
  OutputParser parser(K2Options());
  std::vector<OutputEvent> events;
  parser.Feed("<|tool_calls_section_begin|><|tool_call_begin|>functions.get_", &events);
  EXPECT_TRUE(events.empty());
  parser.Feed("weather:0<|tool_call_argument_begin|>{\"city\"", &events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, OutputEvent::kToolCallBegin);
  EXPECT_EQ(events[0].id, "functions.get_weather:0");
  EXPECT_EQ(events[0].name, "get_weather");
  EXPECT_EQ(events[1].kind, OutputEvent::kToolCallArguments);
  EXPECT_EQ(events[1].text, "{\"city\"");
  std::vector<OutputEvent> more;
  parser.Feed(": \"X\"}  ", &more);  // trailing spaces held back
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].text, ": \"X\"}");
  more.clear();
  parser.Feed("<|tool_call_end|>", &more);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].kind, OutputEvent::kToolCallEnd);
  EXPECT_TRUE(more[0].complete);
  EXPECT_TRUE(parser.result().has_tool_calls());
}

// A character split across chunks is held until complete.
TEST(K2Stream, HoldsBackPartialUtf8) {
  OutputParser parser(K2Options());
  std::string text = "é😀";
  std::string streamed;
  for (char c : text) {
    std::vector<OutputEvent> events;
    parser.Feed(std::string(1, c), &events);
    for (const OutputEvent& e : events) {
      EXPECT_TRUE(e.text == "é" || e.text == "😀") << e.text;
      streamed += e.text;
    }
  }
  EXPECT_EQ(streamed, text);
}

}  // namespace
}  // namespace k3::text::output::testing
