// Constrained decoding through the scheduler and the executor's masked draws (fake runner).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "engine/scheduler_test_util.h"
#include "structured/grammar.h"
#include "structured/schema.h"
#include "structured/vocabulary.h"

namespace k3::engine {
namespace {

using testing::Collected;
using testing::Harness;
using testing::kVocab;
using testing::RandomTokens;
using testing::SmallConfig;

// A vocabulary of single JSON characters (id i = alphabet[i], the last id EOS) and a JSON grammar
// of `schema` over it: grammar tests on the fake runner.
struct AlphabetGrammar {
  std::vector<std::string> bytes;
  std::shared_ptr<const structured::Grammar> grammar;
};
AlphabetGrammar MakeAlphabetGrammar(const char* schema) {
  const std::string alphabet = "{}[]\":,-0123456789abcdefghijklmnopqrstuvwxyz .eEtrunlsABCDXYZ";
  AlphabetGrammar out;
  out.bytes.resize(kVocab);
  for (size_t i = 0; i < alphabet.size() && i + 1 < kVocab; ++i) {
    out.bytes[i] = alphabet.substr(i, 1);
  }
  auto vocab = structured::Vocabulary::Build(kVocab, out.bytes, {{kVocab - 1, "<eos>"}});
  auto graph = structured::CompileSchema(nlohmann::json::parse(schema));
  K3_CHECK(graph.ok()) << graph.status().ToString();
  out.grammar = structured::JsonGrammar(vocab, std::move(*graph), {kVocab - 1});
  return out;
}

// Constrained decoding through the scheduler: a 64-token byte vocabulary (EOS = 63), seeded
// sampling at temperature 1 with preemption pressure; every completion is a valid instance of the
// schema and ends by EOS, and nothing is leaked.
TEST(Scheduler, GrammarConstrainsEverySampledToken) {
  const auto [bytes, grammar] = MakeAlphabetGrammar(
      R"({"type":"object","properties":{"a":{"type":"integer","minimum":-5,"maximum":50},
          "b":{"type":"array","items":{"type":"string","maxLength":3},"maxItems":3}},
          "required":["a"],"additionalProperties":false})");
  EngineConfig config = SmallConfig();
  config.max_running = 4;
  Harness h(config);
  std::mt19937_64 rng(3);
  for (uint64_t id = 0; id < 24; ++id) {
    SamplingParams p;
    p.temperature = 1.0;
    p.seed = id;
    p.max_tokens = 250;
    p.grammar = grammar;
    const base::Status added = h.Add(id, RandomTokens(rng, 1 + static_cast<int>(id % 7)), p);
    ASSERT_TRUE(added.ok()) << added.ToString();
  }
  h.Run();
  for (uint64_t id = 0; id < 24; ++id) {
    const Collected& c = h.Get(id, 0);
    ASSERT_EQ(c.reason, FinishReason::kStop) << id;
    ASSERT_EQ(c.tokens.back(), kVocab - 1);
    std::string text;
    for (size_t i = 0; i + 1 < c.tokens.size(); ++i) text += bytes[c.tokens[i]];
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << text;
    ASSERT_TRUE(j.contains("a") && j["a"].is_number_integer()) << text;
    EXPECT_GE(j["a"].get<int>(), -5) << text;
    EXPECT_LE(j["a"].get<int>(), 50) << text;
  }
  h.ExpectNothingHeld();
}

// An open-ended schema (any JSON value, nested at will) that a random model rarely closes: with
// a small max_tokens every output still ends as complete JSON within it — the outputs the budget
// shaped finish with kLength and grammar_complete — and with the option off they are cut.
TEST(Scheduler, GrammarOutputsEndWithinMaxTokens) {
  const auto [bytes, grammar] = MakeAlphabetGrammar(
      R"({"type":"object","properties":{"items":{"type":"array","items":{}}},
          "required":["items"]})");
  EngineConfig config = SmallConfig();
  config.max_running = 4;
  Harness h(config);
  std::mt19937_64 rng(5);
  constexpr uint64_t kRequests = 16;
  for (uint64_t id = 0; id < 2 * kRequests; ++id) {
    SamplingParams p;
    p.temperature = 1.0;
    p.seed = id;
    p.max_tokens = 60;
    p.grammar = grammar;
    p.grammar_ends_within_budget = id < kRequests;  // the second half: off
    ASSERT_TRUE(h.Add(id, RandomTokens(rng, 3), p).ok());
  }
  h.Run();
  int shaped = 0, cut = 0;
  for (uint64_t id = 0; id < 2 * kRequests; ++id) {
    const Collected& c = h.Get(id, 0);
    ASSERT_LE(c.tokens.size(), 60u) << id;
    const bool ended = c.tokens.back() == kVocab - 1;
    if (id >= kRequests) {
      cut += !ended;
      continue;
    }
    ASSERT_TRUE(ended) << id;
    ASSERT_TRUE(c.grammar_complete) << id;
    shaped += c.reason == FinishReason::kLength;
    std::string text;
    for (size_t i = 0; i + 1 < c.tokens.size(); ++i) text += bytes[c.tokens[i]];
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object() && j.contains("items") && j["items"].is_array()) << text;
  }
  EXPECT_GT(shaped, 0);  // the budget did bind
  EXPECT_GT(cut, 0);     // and without it, outputs are cut
  h.ExpectNothingHeld();
}

}  // namespace
}  // namespace k3::engine
