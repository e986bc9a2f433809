// The matcher against the schema corpus: every instance is accepted or rejected exactly as the
// corpus label says (the labels are Draft 2020-12 validator verdicts, re-checked in the same
// CI run by `structured_corpus_labels`), and masks agree with token-by-token acceptance.
#include <gtest/gtest.h>

#include <random>

#include "structured/corpus_util.h"
#include "structured/grammar.h"
#include "structured/matcher.h"
#include "structured/schema.h"

namespace k3::structured {
namespace {

using testing::KimiVocabulary;
using testing::LoadCorpus;

constexpr int32_t kEos = 163586;

bool Matches(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  Matcher m(g);
  return m.AcceptBytes(text) && m.CanEnd();
}

TEST(StructuredCorpus, HasAtLeast200Schemas) { EXPECT_GE(LoadCorpus().size(), 200u); }

TEST(StructuredCorpus, InstancesAcceptedExactlyAsTheValidatorSays) {
  int checked = 0, skipped = 0;
  for (const auto& c : LoadCorpus()) {
    auto graph = CompileSchema(c.schema);
    ASSERT_TRUE(graph.ok()) << c.name << ": " << graph.status().ToString();
    auto g = JsonGrammar(KimiVocabulary(), std::move(*graph), {kEos});
    for (const std::string& v : c.valid) {
      if (HasNonCanonicalKey(v)) {
        ++skipped;
        continue;
      }
      EXPECT_TRUE(Matches(g, v)) << c.name << " rejects valid " << v;
      ++checked;
    }
    for (const std::string& v : c.invalid) {
      EXPECT_FALSE(Matches(g, v)) << c.name << " accepts invalid " << v;
      ++checked;
    }
  }
  EXPECT_GT(checked, 4000);
  EXPECT_LT(skipped * 20, checked);  // under 5%
  std::printf("checked %d instances; skipped %d valid ones with \\u-escaped keys\n", checked,
              skipped);
}

// For prefixes of valid instances (token boundaries of the real tokenization are not needed:
// any byte split is a reachable state), the mask is exactly the set of tokens Accept takes.
TEST(StructuredCorpus, MaskEqualsTokenByTokenAcceptance) {
  auto vocab = KimiVocabulary();
  std::mt19937 rng(7);
  int states = 0;
  auto corpus = LoadCorpus();
  for (size_t i = 0; i < corpus.size(); i += 5) {
    const auto& c = corpus[i];
    auto g = JsonGrammar(vocab, *CompileSchema(c.schema), {kEos});
    const std::string& text = c.valid[rng() % c.valid.size()];
    const size_t cut = rng() % (text.size() + 1);
    Matcher m(g);
    ASSERT_TRUE(m.AcceptBytes(text.substr(0, cut))) << c.name;
    TokenSet mask;
    m.FillMask(&mask);
    for (size_t t = 0; t < vocab->size(); ++t) {
      Matcher copy = m;
      const bool takes = copy.Accept(static_cast<int32_t>(t));
      ASSERT_EQ(mask.Test(t), takes) << c.name << " after '" << text.substr(0, cut) << "' token "
                                     << t << " '" << vocab->Bytes(static_cast<int32_t>(t)) << "'";
    }
    ++states;
  }
  EXPECT_GE(states, 55);
}

// The string automata and the newer keywords (pattern, format, prefixItems, min/maxProperties,
// allOf: every corpus schema using one): the mask equals token-by-token acceptance at three cut
// points of each valid instance's prefix, over the whole vocabulary.
TEST(StructuredCorpus, MaskEqualsAcceptanceForPatternsFormatsAndTuples) {
  auto vocab = KimiVocabulary();
  std::mt19937 rng(11);
  int states = 0;
  for (const auto& c : LoadCorpus()) {
    const std::string text = c.schema.dump();
    bool newer = false;
    for (const char* k : {"\"pattern\"", "\"format\"", "\"prefixItems\"", "\"minProperties\"",
                          "\"maxProperties\"", "\"allOf\""}) {
      newer |= text.find(k) != std::string::npos;
    }
    if (!newer) continue;
    auto g = JsonGrammar(vocab, *CompileSchema(c.schema), {kEos});
    for (int k = 0; k < 3; ++k) {
      const std::string& v = c.valid[rng() % c.valid.size()];
      const size_t cut = rng() % (v.size() + 1);
      Matcher m(g);
      ASSERT_TRUE(m.AcceptBytes(v.substr(0, cut))) << c.name;
      TokenSet mask;
      m.FillMask(&mask);
      for (size_t t = 0; t < vocab->size(); ++t) {
        Matcher copy = m;
        const bool takes = copy.Accept(static_cast<int32_t>(t));
        ASSERT_EQ(mask.Test(t), takes) << c.name << " after '" << v.substr(0, cut) << "' token "
                                       << t << " '" << vocab->Bytes(static_cast<int32_t>(t)) << "'";
      }
      ++states;
    }
  }
  EXPECT_GE(states, 90);
  std::printf("compared masks at %d states\n", states);
}

}  // namespace
}  // namespace k3::structured

namespace k3::structured {
namespace {

// No dead ends: random walks over a small byte vocabulary (plus a few JSON multi-byte tokens),
// choosing uniformly among the tokens the mask allows, never meet an empty mask before the end,
// and every walk that reaches the end is JSON.
TEST(StructuredCorpus, RandomWalksNeverMeetAnEmptyMask) {
  int32_t eos = 0;
  auto vocab = testing::SmallVocabulary(&eos);
  std::mt19937 rng(11);
  int walks = 0, ended = 0;
  for (const auto& c : testing::LoadCorpus()) {
    // Odd walks in generation mode (closed objects, unique additional keys).
    const auto grammars = testing::ExactAndGeneration(vocab, c.schema, eos);
    for (int w = 0; w < 6; ++w, ++walks) {
      Matcher m(w % 2 ? grammars.generation : grammars.exact);
      TokenSet mask;
      std::string text;
      for (int step = 0; step < 400 && !m.Finished(); ++step) {
        m.FillMask(&mask);
        std::vector<int32_t> allowed;
        for (int32_t t = 0; t < 300; ++t) {
          if (mask.Test(static_cast<size_t>(t))) allowed.push_back(t);
        }
        ASSERT_FALSE(allowed.empty()) << c.name << ": dead end after '" << text << "'";
        int32_t t = allowed[rng() % allowed.size()];
        if (mask.Test(eos) && rng() % 3 == 0) t = eos;
        ASSERT_TRUE(m.Accept(t)) << c.name;
        if (t != eos) text += vocab->Bytes(t);
      }
      if (m.Finished()) {
        ++ended;
        EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded())
            << c.name << ": " << text;
      }
    }
  }
  EXPECT_GT(ended, walks / 3);
}

}  // namespace
}  // namespace k3::structured
