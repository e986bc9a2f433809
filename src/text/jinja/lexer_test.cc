// Lexer tests: token kinds, literals and the whitespace control applied to data tokens.
#include "text/jinja/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace k3::text::jinja {
namespace {

std::vector<Token> LexOk(std::string_view source) {
  auto tokens = Lex(source, LexOptions{});
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  return tokens.ok() ? *tokens : std::vector<Token>{};
}

TEST(JinjaLexer, TokensOfATag) {
  auto t = LexOk("a{{ x.y[0] | f(1_000, 2.5e1, 'q\\'s', 0x1f) ~ \"z\" }}");
  std::vector<TokenKind> kinds;
  for (const Token& token : t) kinds.push_back(token.kind);
  using K = TokenKind;
  EXPECT_EQ(kinds, (std::vector<K>{K::kData,     K::kVariableBegin, K::kName,     K::kOperator,
                                   K::kName,     K::kOperator,      K::kInteger,  K::kOperator,
                                   K::kOperator, K::kName,          K::kOperator, K::kInteger,
                                   K::kOperator, K::kFloat,         K::kOperator, K::kString,
                                   K::kOperator, K::kInteger,       K::kOperator, K::kOperator,
                                   K::kString,   K::kVariableEnd,   K::kEof}));
  EXPECT_EQ(t[11].int_value, 1000);
  EXPECT_EQ(t[13].float_value, 25.0);
  EXPECT_EQ(t[15].text, "q's");
  EXPECT_EQ(t[17].int_value, 31);
}

TEST(JinjaLexer, LineNumbersCountNewlines) {
  auto t = LexOk("a\nb\n{% if\nx %}");
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t[0].line, 1);  // data "a\nb\n"
  EXPECT_EQ(t[1].line, 3);  // {%
  EXPECT_EQ(t[3].line, 4);  // x
}

TEST(JinjaLexer, ClosersInsideBracketsAreOperators) {
  auto t = LexOk("{{ {'a': {'b': 1}} }}");
  EXPECT_EQ(t.back().kind, TokenKind::kEof);
  EXPECT_EQ(t[t.size() - 2].kind, TokenKind::kVariableEnd);
}

TEST(JinjaLexer, OptionsOff) {
  auto tokens = Lex("  {% if x %}\nA", LexOptions{false, false});
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ((*tokens)[0].text, "  ");
  EXPECT_EQ((*tokens)[5].text, "\nA");
}

TEST(JinjaLexer, Errors) {
  EXPECT_FALSE(Lex("{{ x", {}).ok());
  EXPECT_FALSE(Lex("{{ 'x }}", {}).ok());
  EXPECT_FALSE(Lex("{{ ) }}", {}).ok());
  EXPECT_FALSE(Lex("{{ 99999999999999999999 }}", {}).ok());
  EXPECT_FALSE(Lex("{{ '\\x4' }}", {}).ok());
  EXPECT_FALSE(Lex("{% raw %}never closed", {}).ok());
  EXPECT_FALSE(Lex("{{ $ }}", {}).ok());
}

}  // namespace
}  // namespace k3::text::jinja
