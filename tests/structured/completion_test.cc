// Ending within a token budget: from any state, ShortCompletion finds events that finish the
// output, and generations that use FillBudgetedMask end (complete, valid under the grammar)
// within their budget whatever tokens the model picks while it may.
#include <gtest/gtest.h>

#include <random>

#include "structured/corpus_util.h"
#include "structured/grammar.h"
#include "structured/matcher.h"
#include "structured/output_grammar.h"
#include "structured/schema.h"

namespace k3::structured {
namespace {

// A random allowed token (the end token only 1 time in 10 where other tokens are allowed): a
// model that would rather go on.
int32_t Draw(const TokenSet& mask, int32_t eos, size_t n, std::mt19937& rng) {
  std::vector<int32_t> allowed;
  for (size_t t = 0; t < n; ++t) {
    if (mask.Test(t) && static_cast<int32_t>(t) != eos) allowed.push_back(static_cast<int32_t>(t));
  }
  const bool may_end = mask.Test(static_cast<size_t>(eos));
  if (allowed.empty() || (may_end && rng() % 10 == 0)) return eos;
  return allowed[rng() % allowed.size()];
}

// Random generations that prefer to go on (the end token only 1 time in 10 where allowed) with
// at most `budget` tokens, in exact and generation mode.
TEST(Completion, EveryCorpusGenerationEndsWithinItsBudget) {
  int32_t eos = 0;
  auto vocab = testing::SmallVocabulary(&eos);
  std::mt19937 rng(5);
  int walks = 0, closed = 0;
  size_t longest_completion = 0;
  for (const auto& c : testing::LoadCorpus()) {
    const auto grammars = testing::ExactAndGeneration(vocab, c.schema, eos);
    for (int w = 0; w < 6; ++w, ++walks) {
      Matcher m(w % 2 ? grammars.generation : grammars.exact);
      const size_t first = m.Completion().size();
      ASSERT_GT(first, 0u) << c.name << ": no completion at the start";
      longest_completion = std::max(longest_completion, first);
      const size_t budget = first + 10 + static_cast<size_t>(rng() % 400);
      TokenSet mask;
      std::string text;
      bool restricted = false;
      for (size_t step = 0; step < budget && !m.Finished(); ++step) {
        bool closing = m.FillBudgetedMask(&mask, budget - step);
        int32_t t = Draw(mask, eos, 300, rng);
        if (!m.FitsBudget(t, budget - step)) {  // as the engine does: draw again, closing
          m.FillCompletionMask(&mask);
          t = Draw(mask, eos, 300, rng);
          closing = true;
        }
        restricted |= closing;
        const size_t to_finish = m.TokensToSpell(m.Completion());
        ASSERT_TRUE(m.Accept(t)) << c.name << " after '" << text << "'";
        // Following the completion gets one token closer to the end, every time.
        if (closing && !m.Finished()) {
          ASSERT_LT(m.TokensToSpell(m.Completion()), to_finish) << c.name << " after '" << text;
        }
        if (t != eos) text += vocab->Bytes(t);
      }
      closed += restricted;
      ASSERT_TRUE(m.Finished()) << c.name << ": not finished within " << budget << " tokens: '"
                                << text << "'";
      EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded())
          << c.name << ": " << text;
    }
  }
  EXPECT_GT(closed, walks / 10);  // the budget did bind in a good share of the walks
  std::printf(
      "%d walks ended within budget, %d of them closed by it; longest completion at the "
      "start %zu events\n",
      walks, closed, longest_completion);
}

// From states part-way through valid instances, the completion's events are accepted and end
// the output.
TEST(Completion, FinishesFromStatesInsideInstances) {
  int32_t eos = 0;
  auto vocab = testing::SmallVocabulary(&eos);
  std::mt19937 rng(9);
  int states = 0;
  for (const auto& c : testing::LoadCorpus()) {
    auto g = JsonGrammar(vocab, *CompileSchema(c.schema), {eos});
    for (const std::string& text : c.valid) {
      if (HasNonCanonicalKey(text)) continue;
      const size_t cut = rng() % (text.size() + 1);
      Matcher m(g);
      ASSERT_TRUE(m.AcceptBytes(text.substr(0, cut))) << c.name;
      const std::vector<int32_t> events = m.Completion();
      ASSERT_FALSE(events.empty()) << c.name << " after '" << text.substr(0, cut) << "'";
      ASSERT_EQ(events.back(), kEventEnd);
      std::string rest;
      for (size_t i = 0; i + 1 < events.size(); ++i) rest.push_back(static_cast<char>(events[i]));
      ASSERT_TRUE(m.AcceptBytes(rest)) << c.name;
      ASSERT_TRUE(m.Accept(eos)) << c.name << ": '" << text.substr(0, cut) << "' + '" << rest
                                 << "' cannot end";
      EXPECT_FALSE(
          nlohmann::json::parse(text.substr(0, cut) + rest, nullptr, false).is_discarded());
      ++states;
    }
  }
  EXPECT_GT(states, 2000);
}

// Whole replies in Kimi's chat syntaxes (reasoning, text or JSON content, tool calls in every
// tool_choice mode), over the real vocabulary: random tokens while the budget allows, and every
// reply ends within it.
TEST(Completion, ChatRepliesEndWithinTheirBudget) {
  constexpr int32_t kEos = 163586;
  const auto weather = nlohmann::json::parse(R"({"type":"object","properties":{
    "city":{"type":"string","minLength":1,"maxLength":12},"unit":{"enum":["celsius","fahrenheit"]},
    "days":{"type":"integer","minimum":1,"maximum":7},
    "stops":{"type":"array","items":{"type":"string","maxLength":6},"maxItems":3}},
    "required":["city","days"],"additionalProperties":false})");
  const auto flight = nlohmann::json::parse(R"({"type":"object","properties":{
    "from":{"type":"string","maxLength":4},"to":{"type":"string","maxLength":4},
    "direct":{"type":"boolean"}},"required":["from","to"],"additionalProperties":false})");
  std::mt19937 rng(3);
  int replies = 0, closed = 0;
  for (ChatSyntax syntax : {ChatSyntax::kK2, ChatSyntax::kK3}) {
    auto vocab = testing::KimiVocabulary(syntax == ChatSyntax::kK3 ? "k3" : "k25");
    for (ToolMode mode :
         {ToolMode::kAuto, ToolMode::kRequired, ToolMode::kNamed, ToolMode::kNone}) {
      for (int variant = 0; variant < 12; ++variant) {
        OutputGrammarSpec spec;
        spec.syntax = syntax;
        spec.tool_mode = mode;
        spec.tools = {{"get_weather", weather, true},
                      {"book_flight", flight, true},
                      {"search", nlohmann::json(), false}};
        spec.named_tool = "get_weather";
        spec.thinking = variant & 1;
        if (variant & 2) {
          spec.content = ContentMode::kJsonSchema;
          spec.schema = weather;
        }
        spec.end_tokens = {kEos};
        auto grammar = BuildOutputGrammar(vocab, spec);
        ASSERT_TRUE(grammar.ok()) << grammar.status().ToString();
        Matcher m(*grammar);
        const size_t budget = m.TokensToSpell(m.Completion()) + 10 + rng() % 600;
        TokenSet mask;
        bool restricted = false;
        for (size_t step = 0; step < budget && !m.Finished(); ++step) {
          restricted |= m.FillBudgetedMask(&mask, budget - step);
          int32_t t = Draw(mask, kEos, mask.size(), rng);
          if (!m.FitsBudget(t, budget - step)) {
            m.FillCompletionMask(&mask);
            t = Draw(mask, kEos, mask.size(), rng);
            restricted = true;
          }
          ASSERT_TRUE(m.Accept(t)) << "syntax " << int(syntax) << " mode " << int(mode);
        }
        EXPECT_TRUE(m.Finished()) << "syntax " << int(syntax) << " mode " << int(mode)
                                  << " variant " << variant << ": not ended in " << budget;
        ++replies;
        closed += restricted;
      }
    }
  }
  EXPECT_EQ(replies, 96);
  EXPECT_GT(closed, 8);
  std::printf("%d replies ended within budget, %d closed by it\n", replies, closed);
}

}  // namespace
}  // namespace k3::structured
