#include "text/tokenizer/pretokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/utf8.h"

namespace k3::text {
namespace {

std::vector<std::string> Split(PretokenizerKind kind, std::string_view text) {
  std::vector<std::string> pieces;
  ForEachPiece(kind, text, [&](size_t b, size_t e) { pieces.emplace_back(text.substr(b, e - b)); });
  return pieces;
}
using Pieces = std::vector<std::string>;

// Expected splits are tiktoken's, cross-checked with the Python `regex` module (V1) and npm
// tiktoken; they pin the behaviours that differ between the patterns.
TEST(PretokenizerTest, KimiSplitsCaseHanDigitsAndWhitespace) {
  auto k = PretokenizerKind::kKimi;
  EXPECT_EQ(Split(k, "getUserName iPhone helloWorld"),
            (Pieces{"get", "User", "Name", " i", "Phone", " hello", "World"}));
  EXPECT_EQ(Split(k, "12345678"), (Pieces{"123", "456", "78"}));
  EXPECT_EQ(Split(k, "你好world世界"), (Pieces{"你好", "world", "世界"}));
  EXPECT_EQ(Split(k, "I'm  here\n\n  ok "), (Pieces{"I'm", " ", " here", "\n\n", " ", " ok", " "}));
  EXPECT_EQ(Split(k, "x = a->b;\r\n"), (Pieces{"x", " =", " a", "->", "b", ";\r\n"}));
  EXPECT_EQ(Split(k, "DON'T don'ſ"), (Pieces{"DON'T", " don'ſ"}));
  EXPECT_EQ(Split(k, "\u0301abc"), (Pieces{"\u0301abc"}));
  EXPECT_EQ(Split(k, "a/b//\n/x"), (Pieces{"a", "/b", "//\n", "/x"}));
}

TEST(PretokenizerTest, O200kKeepsHanInWordsAndSlashInPunctTail) {
  auto k = PretokenizerKind::kO200k;
  EXPECT_EQ(Split(k, "你好world"), (Pieces{"你好world"}));
  EXPECT_EQ(Split(k, "a//\n/x"), (Pieces{"a", "//\n/", "x"}));
}

TEST(PretokenizerTest, Cl100kLeadingContractionsAndLetterRuns) {
  auto k = PretokenizerKind::kCl100k;
  EXPECT_EQ(Split(k, "getUserName's 1234"), (Pieces{"getUserName", "'s", " ", "123", "4"}));
  EXPECT_EQ(Split(k, "e\u0301t"), (Pieces{"e", "\u0301t"}));
}

// Every piece sequence must tile the text exactly, on any valid input.
TEST(PretokenizerTest, PiecesTileRandomUnicode) {
  std::mt19937 rng(7);
  const char32_t alphabet[] = {U'a',      U'Z',      U' ',      U'\n',     U'\r',     U'\t',
                               U'\'',     U's',      U'1',      U'\u00A0', U'\u4E2D', U'\u3005',
                               U'\u0301', U'!',      U'/',      U'\u017F', U'\u2028', U'\U0001F600',
                               U'\u0660', U'\u3000', U'\u02B0', U'\u01C5'};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    int length = rng() % 40;
    for (int i = 0; i < length; ++i) base::AppendUtf8(alphabet[rng() % std::size(alphabet)], &text);
    for (auto kind :
         {PretokenizerKind::kKimi, PretokenizerKind::kO200k, PretokenizerKind::kCl100k}) {
      std::string joined;
      for (const auto& piece : Split(kind, text)) {
        ASSERT_FALSE(piece.empty());
        ASSERT_TRUE(base::IsValidUtf8(piece));
        joined += piece;
      }
      ASSERT_EQ(joined, text);
    }
  }
}

// A safe split point must be a piece boundary of the whole text, so encoding the halves
// separately cannot change anything.
TEST(PretokenizerTest, SafeSplitPointsAreBoundaries) {
  std::mt19937 rng(11);
  const char* atoms[] = {"a", "Z", " ", "\n",     "\r",     "\t",     "'s",
                         "1", "/", "!", "\u4E2D", "\u0301", "\u00A0", "x\n/"};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    int length = rng() % 30;
    for (int i = 0; i < length; ++i) text += atoms[rng() % std::size(atoms)];
    for (auto kind :
         {PretokenizerKind::kKimi, PretokenizerKind::kO200k, PretokenizerKind::kCl100k}) {
      std::vector<bool> boundary(text.size() + 1, false);
      boundary[0] = true;
      ForEachPiece(kind, text, [&](size_t, size_t e) { boundary[e] = true; });
      for (size_t pos = 0; pos <= text.size(); ++pos) {
        if (IsSafeSplitPoint(kind, text, pos)) {
          ASSERT_TRUE(boundary[pos]) << text << " @" << pos;
        }
      }
    }
  }
}

// The ASCII fast path must agree with the general matchers everywhere, in particular where ASCII
// meets letters, marks, digits, symbols and spaces beyond ASCII.
TEST(PretokenizerTest, AsciiFastPathMatchesGeneralMatchers) {
  std::mt19937 rng(31);
  const char* atoms[] = {"a",      "Z",      "q",      "'",      "s",         "T",
                         "1",      "7",      " ",      "\t",     "\n",        "\r",
                         "!",      "/",      "_",      "\x1f",   "\x7f",      "-",
                         "<",      "\u00e9", "\u0301", "\u00a0", "\u0663",    "\u2192",
                         "\u4e2d", "\u3000", "\u017f", "\u02b0", "\U0001F600"};
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    int length = 1 + rng() % 16;
    for (int i = 0; i < length; ++i) text += atoms[rng() % std::size(atoms)];
    for (auto kind : {PretokenizerKind::kKimi, PretokenizerKind::kO200k}) {
      for (size_t pos = 0; pos < text.size(); pos = NextPieceEnd(kind, text, pos)) {
        ASSERT_EQ(NextPieceEnd(kind, text, pos), NextPieceEndWithoutFastPath(kind, text, pos))
            << "text '" << text << "' at " << pos << " kind " << static_cast<int>(kind);
      }
    }
  }
}

TEST(PretokenizerTest, KindFromNameOrPattern) {
  PretokenizerKind kind;
  ASSERT_TRUE(PretokenizerKindFromName("cl100k_base", &kind));
  EXPECT_EQ(kind, PretokenizerKind::kCl100k);
  ASSERT_TRUE(PretokenizerKindFromName(PatternOf(PretokenizerKind::kKimi), &kind));
  EXPECT_EQ(kind, PretokenizerKind::kKimi);
  EXPECT_FALSE(PretokenizerKindFromName("\\w+", &kind));
}

}  // namespace
}  // namespace k3::text
