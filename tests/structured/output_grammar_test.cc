// Whole-reply grammars in K2 and K3 chat syntax, fed real tokenizations of replies (control
// markers as their special ids, the rest with specials off).
#include "structured/output_grammar.h"

#include <gtest/gtest.h>

#include "structured/corpus_util.h"
#include "structured/matcher.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::structured::output_grammar_test {
namespace {

using nlohmann::json;
constexpr int32_t kEos = 163586;  // <|im_end|> (K2 family), <|end_of_msg|> (K3)

const json kWeather = json::parse(R"({"type":"object","properties":{
  "city":{"type":"string","minLength":1},"unit":{"enum":["c","f"]},"days":{"type":"integer","minimum":1,"maximum":7}},
  "required":["city"],"additionalProperties":false})");

OutputGrammarSpec Spec(ChatSyntax syntax, ToolMode mode) {
  OutputGrammarSpec spec;
  spec.syntax = syntax;
  spec.tool_mode = mode;
  spec.tools = {{"get_weather", kWeather, true}, {"search", json(), false}};
  spec.end_tokens = {kEos};
  return spec;
}

// Encodes `reply` with specials recognised (markup) and feeds it; true if every token is taken
// and the reply may end (then the end token too).
bool Takes(const std::string& model, const OutputGrammarSpec& spec, const std::string& reply) {
  auto grammar = BuildOutputGrammar(testing::KimiVocabulary(model), spec);
  EXPECT_TRUE(grammar.ok()) << grammar.status().ToString();
  if (!grammar.ok()) return false;
  const text::Tokenizer& tok = k3::testing::KimiTokenizer(model);
  auto ids = tok.Encode(reply, text::SpecialMode::kAll);
  EXPECT_TRUE(ids.ok());
  Matcher m(*grammar);
  TokenSet mask;
  for (text::TokenId id : *ids) {
    m.FillMask(&mask);
    const bool allowed = mask.Test(id);
    const bool accepted = m.Accept(static_cast<int32_t>(id));
    EXPECT_EQ(allowed, accepted) << "mask and Accept disagree at token " << id;
    if (!accepted) {
      std::fprintf(stderr, "rejected token %u %s\n", id,
                   std::string(tok.TokenBytes(id).ok() ? *tok.TokenBytes(id) : "?").c_str());
      return false;
    }
  }
  m.FillMask(&mask);
  if (!mask.Test(kEos)) return false;
  return m.Accept(kEos) && m.Finished();
}

const char kCall[] =
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    "<|tool_call_argument_begin|>{\"city\":\"Paris\",\"days\":3}<|tool_call_end|>";

TEST(K2Grammar, AutoAllowsTextThenCalls) {
  auto spec = Spec(ChatSyntax::kK2, ToolMode::kAuto);
  EXPECT_TRUE(Takes("k25", spec, "Sure."));
  EXPECT_TRUE(
      Takes("k25", spec, std::string("Let me check.") + kCall + "<|tool_calls_section_end|>"));
  EXPECT_TRUE(Takes("k25", spec,
                    std::string(kCall) +
                        "<|tool_call_begin|>functions.search:1<|tool_call_argument_begin|>"
                        "{\"q\":[1,{}]}<|tool_call_end|><|tool_calls_section_end|>"));
}

TEST(K2Grammar, RejectsBadCalls) {
  auto spec = Spec(ChatSyntax::kK2, ToolMode::kAuto);
  const std::string begin = "<|tool_calls_section_begin|><|tool_call_begin|>functions.";
  const std::string end = "<|tool_call_end|><|tool_calls_section_end|>";
  EXPECT_FALSE(Takes("k25", spec, begin + "img_gen:0<|tool_call_argument_begin|>{}" + end));
  EXPECT_FALSE(Takes("k25", spec, begin + "get_weather:0<|tool_call_argument_begin|>{}" + end));
  EXPECT_FALSE(
      Takes("k25", spec,
            begin + "get_weather:0<|tool_call_argument_begin|>{\"city\":\"x\",\"days\":8}" + end));
  EXPECT_FALSE(Takes("k25", spec,
                     begin + "get_weather:0<|tool_call_argument_begin|>{\"city\": \"x\"}" + end));
  EXPECT_FALSE(Takes("k25", spec, begin + "search:0<|tool_call_argument_begin|>[1]" + end));
  EXPECT_FALSE(Takes("k25", spec, std::string(kCall)));  // section never closed
}

TEST(K2Grammar, RequiredNamedNoneAndSingleCall) {
  const std::string reply = std::string(kCall) + "<|tool_calls_section_end|>";
  EXPECT_TRUE(Takes("k25", Spec(ChatSyntax::kK2, ToolMode::kRequired), reply));
  EXPECT_FALSE(Takes("k25", Spec(ChatSyntax::kK2, ToolMode::kRequired), "No call."));
  auto named = Spec(ChatSyntax::kK2, ToolMode::kNamed);
  named.named_tool = "search";
  EXPECT_FALSE(Takes("k25", named, reply));
  named.named_tool = "get_weather";
  EXPECT_TRUE(Takes("k25", named, reply));
  EXPECT_FALSE(Takes("k25", Spec(ChatSyntax::kK2, ToolMode::kNone), reply));
  EXPECT_TRUE(Takes("k25", Spec(ChatSyntax::kK2, ToolMode::kNone), "text only"));
  auto single = Spec(ChatSyntax::kK2, ToolMode::kAuto);
  single.parallel_tool_calls = false;
  EXPECT_TRUE(Takes("k25", single, reply));
  EXPECT_FALSE(Takes("k25", single, std::string(kCall) + kCall + "<|tool_calls_section_end|>"));
}

// A forced call (required / named) follows the tool's schema even when the tool is not strict;
// in auto mode a non-strict tool's arguments stay any object.
TEST(K2Grammar, ForcedCallsFollowNonStrictSchemas) {
  const std::string begin =
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
      "<|tool_call_argument_begin|>";
  const std::string end = "<|tool_call_end|><|tool_calls_section_end|>";
  for (ToolMode mode : {ToolMode::kRequired, ToolMode::kNamed, ToolMode::kAuto}) {
    auto spec = Spec(ChatSyntax::kK2, mode);
    spec.tools[0].strict = false;
    spec.named_tool = "get_weather";
    const bool forced = mode != ToolMode::kAuto;
    EXPECT_EQ(Takes("k25", spec, begin + "{}" + end), !forced);
    EXPECT_TRUE(Takes("k25", spec, begin + "{\"city\":\"Paris\"}" + end));
  }
  // A non-strict schema the compiler cannot enforce falls back to any object when forced.
  auto spec = Spec(ChatSyntax::kK2, ToolMode::kRequired);
  spec.tools[0] = {"get_weather", json::parse(R"({"type":"object","not":{}})"), false};
  EXPECT_TRUE(Takes("k25", spec, begin + "{}" + end));
}

TEST(K2Grammar, ReasoningIsFreeAndJsonComesAfterIt) {
  auto spec = Spec(ChatSyntax::kK2, ToolMode::kNone);
  spec.thinking = true;
  spec.starts_in_reasoning = true;
  spec.content = ContentMode::kJsonSchema;
  spec.schema = kWeather;
  EXPECT_TRUE(Takes("k25", spec, "free { reasoning\n</think>{\"city\":\"Oslo\"}"));
  EXPECT_FALSE(Takes("k25", spec, "r</think>{\"city\": \"Oslo\"}"));
  EXPECT_FALSE(Takes("k25", spec, "r</think>{\"city\":\"Oslo\"}\n"));
  spec.starts_in_reasoning = false;
  EXPECT_TRUE(Takes("k25", spec, "<think>hm</think>{\"city\":\"Oslo\",\"unit\":\"c\"}"));
  EXPECT_TRUE(Takes("k25", spec, "{\"city\":\"Oslo\"}"));
  spec.content = ContentMode::kJsonObject;
  EXPECT_TRUE(Takes("k25", spec, "{\"any\":[1,2,{\"x\":null}]}"));
  EXPECT_FALSE(Takes("k25", spec, "[1]"));
}

const char kK3Call[] =
    "<|open|>call tool=\"get_weather\" index=\"1\"<|sep|>"
    "<|open|>argument key=\"city\" type=\"string\"<|sep|>北京 city<|close|>argument<|sep|>"
    "<|open|>argument key=\"days\" type=\"number\"<|sep|>2<|close|>argument<|sep|>"
    "<|close|>call<|sep|>";
const char kK3Tail[] = "<|close|>tools<|sep|><|close|>message<|sep|>";

TEST(K3Grammar, ResponseThenCallsAndTheEnd) {
  auto spec = Spec(ChatSyntax::kK3, ToolMode::kAuto);
  EXPECT_TRUE(Takes("k3", spec, "Hello<|close|>response<|sep|><|close|>message<|sep|>"));
  const std::string calls = std::string("<|close|>response<|sep|><|open|>tools<|sep|>") + kK3Call;
  EXPECT_TRUE(Takes("k3", spec, "Checking." + calls + kK3Tail));
  EXPECT_TRUE(Takes("k3", Spec(ChatSyntax::kK3, ToolMode::kRequired), calls + kK3Tail));
  EXPECT_FALSE(Takes("k3", Spec(ChatSyntax::kK3, ToolMode::kRequired), "x" + calls + kK3Tail));
  EXPECT_FALSE(Takes("k3", Spec(ChatSyntax::kK3, ToolMode::kNone), calls + kK3Tail));
  // Enum strings are raw text; the city is required; types must fit the schema.
  const std::string head =
      "<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" "
      "index=\"1\"<|sep|>";
  const std::string tail = std::string("<|close|>call<|sep|>") + kK3Tail;
  auto arg = [](const std::string& key, const std::string& type, const std::string& value) {
    return "<|open|>argument key=\"" + key + "\" type=\"" + type + "\"<|sep|>" + value +
           "<|close|>argument<|sep|>";
  };
  EXPECT_TRUE(
      Takes("k3", spec, head + arg("unit", "string", "f") + arg("city", "string", "x") + tail));
  EXPECT_FALSE(
      Takes("k3", spec, head + arg("unit", "string", "k") + arg("city", "string", "x") + tail));
  EXPECT_FALSE(Takes("k3", spec, head + arg("unit", "string", "c") + tail));
  EXPECT_FALSE(Takes("k3", spec, head + arg("city", "number", "1") + tail));
  EXPECT_FALSE(Takes("k3", spec, head + arg("city", "string", "") + tail));
}

TEST(K3Grammar, ThinkingThenJsonResponse) {
  auto spec = Spec(ChatSyntax::kK3, ToolMode::kNone);
  spec.thinking = spec.starts_in_reasoning = true;
  spec.content = ContentMode::kJsonSchema;
  spec.schema = kWeather;
  EXPECT_TRUE(Takes("k3", spec,
                    "plan<|close|>think<|sep|><|open|>response<|sep|>{\"city\":\"a\"}"
                    "<|close|>response<|sep|><|close|>message<|sep|>"));
  EXPECT_FALSE(Takes("k3", spec,
                     "plan<|close|>think<|sep|><|open|>response<|sep|>text"
                     "<|close|>response<|sep|><|close|>message<|sep|>"));
}

TEST(OutputGrammar, SchemaErrorsNameTheirPlace) {
  auto spec = Spec(ChatSyntax::kK2, ToolMode::kAuto);
  spec.tools[0].parameters =
      json::parse(R"({"type":"object","properties":{"a":{"type":"string","pattern":"(x)\\1"}}})");
  auto g = BuildOutputGrammar(testing::KimiVocabulary("k25"), spec);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("tools[0].function.parameters"), std::string::npos);
  EXPECT_NE(g.status().message().find("pattern"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("backreference"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace k3::structured::output_grammar_test
