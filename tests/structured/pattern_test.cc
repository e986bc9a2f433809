// pattern / format compilation: what is refused names itself (the API's 400), and patterns in
// K3 raw-text arguments. Acceptance of instances is checked against Python's jsonschema by the
// corpus (structured_corpus_test); these cases cover what the corpus cannot (errors, K3 syntax).
#include <gtest/gtest.h>

#include "structured/corpus_util.h"
#include "structured/matcher.h"
#include "structured/output_grammar.h"
#include "structured/schema.h"
#include "structured/string_dfa.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::structured {
namespace {

using nlohmann::json;

TEST(Pattern, UnsupportedConstructsAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"(a)\\1", "backreference"},
      {"a(?=b)", "lookahead"},
      {"(?<!a)b", "lookbehind"},
      {"\\bword", "word boundary"},
      {"(?<n>a)", "named group"},
      {"(?i)a", "'(?' group"},
      {"a{,3}", "{,n}"},
      {"a{1001}", "repeat count"},
      {"\\p{L}", "Unicode property"},
      {"[[:alpha:]]", "POSIX class"},
      {"a**", "multiple repeat"},
      {"(ab", "missing ')'"},
      {"ab)", "unbalanced"},
      {"[b-a]", "out of order"},
      {"*a", "nothing to repeat"},
      {"[]", "empty class"},
  };
  for (const auto& [pattern, what] : cases) {
    auto graph = CompileSchema(json{{"type", "string"}, {"pattern", pattern}});
    ASSERT_FALSE(graph.ok()) << pattern;
    EXPECT_NE(graph.status().message().find("pattern"), std::string::npos)
        << graph.status().message();
    EXPECT_NE(graph.status().message().find(what), std::string::npos)
        << pattern << ": " << graph.status().message();
  }
}

TEST(Pattern, UnsatisfiableStringsAreRefusedAndUnknownFormatsIgnored) {
  EXPECT_FALSE(
      CompileSchema(json::parse(R"({"type":"string","pattern":"^a$","minLength":2})")).ok());
  EXPECT_FALSE(CompileSchema(json::parse(R"({"type":"string","pattern":"^[^\\s\\S]"})")).ok());
  EXPECT_TRUE(CompileSchema(json::parse(R"({"type":"string","format":"int64"})")).ok());
  EXPECT_TRUE(
      CompileSchema(json::parse(R"({"type":"string","format":"ipv6","maxLength":5})")).ok());
}

TEST(Pattern, AutomataMatchDecodedCharacters) {
  auto dfa = CompilePattern("^[a-c]+\\d$");
  ASSERT_TRUE(dfa.ok());
  EXPECT_TRUE(dfa->Matches(U"abc1"));
  EXPECT_FALSE(dfa->Matches(U"abc"));
  EXPECT_FALSE(dfa->Matches(U"abd1"));
  auto search = CompilePattern("x|^y");
  ASSERT_TRUE(search.ok());
  EXPECT_TRUE(search->Matches(U"aax"));
  EXPECT_TRUE(search->Matches(U"yaa"));
  EXPECT_FALSE(search->Matches(U"ay"));
  // An escaped character in the JSON text is the character: \u0041 is "A".
  auto g = JsonGrammar(testing::KimiVocabulary(),
                       *CompileSchema(json::parse(R"({"type":"string","pattern":"^A\\n$"})")), {});
  Matcher m(g);
  EXPECT_TRUE(m.AcceptBytes("\"\\u0041\\n\"") && m.CanEnd());
  Matcher bad(g);
  EXPECT_FALSE(bad.AcceptBytes("\"An\""));
}

// K3 writes string arguments as raw text: the pattern applies to it as it stands.
TEST(Pattern, K3RawTextArgumentsFollowThePattern) {
  OutputGrammarSpec spec;
  spec.syntax = ChatSyntax::kK3;
  spec.tool_mode = ToolMode::kRequired;
  spec.tools = {{"lookup", json::parse(R"({"type":"object","properties":{"code":{"type":"string",
                   "pattern":"^[A-Z]{3}$"}},"required":["code"],"additionalProperties":false})"),
                 false}};
  spec.end_tokens = {163586};
  auto grammar = BuildOutputGrammar(testing::KimiVocabulary("k3"), spec);
  ASSERT_TRUE(grammar.ok()) << grammar.status().ToString();
  const text::Tokenizer& tok = k3::testing::KimiTokenizer("k3");
  auto run = [&](const std::string& value) {
    const std::string reply =
        "<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"lookup\" "
        "index=\"1\"<|sep|><|open|>argument key=\"code\" type=\"string\"<|sep|>" +
        value +
        "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"
        "<|close|>message<|sep|>";
    auto ids = tok.Encode(reply, text::SpecialMode::kAll);
    Matcher m(*grammar);
    for (text::TokenId id : *ids) {
      if (!m.Accept(static_cast<int32_t>(id))) return false;
    }
    return m.Accept(163586) && m.Finished();
  };
  EXPECT_TRUE(run("OSL"));
  EXPECT_FALSE(run("osl"));
  EXPECT_FALSE(run("OSLO"));
}

}  // namespace
}  // namespace k3::structured
