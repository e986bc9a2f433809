// Pieces of `k3 bench grammar`: the schema corpus, replaying tokenized instances through a
// structured::Matcher with every mask timed, and applying a mask to one logits row.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "structured/grammar.h"
#include "structured/token_set.h"

namespace k3::app::grammar_bench {

// One corpus line (tests/structured/schema_corpus.jsonl); only the valid instances are replayed.
struct CorpusSchema {
  std::string name;
  nlohmann::json schema;
  std::vector<std::string> valid;
};

// The first `limit` schemas (0: all). NOT_FOUND / INVALID_ARGUMENT on a missing or bad file.
base::Result<std::vector<CorpusSchema>> LoadCorpus(const std::string& path, size_t limit);

// Order statistics of a sample; all zero when it is empty.
struct Summary {
  size_t n = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  size_t over_1ms = 0;        // samples above 1,000 (for microseconds: 1 ms)
  double over_1ms_share = 0;  // their share of the sum of all samples
};
Summary Summarize(std::vector<double> samples);  // by value: sorts its copy

// Everything one pass over the corpus measured. Times in microseconds, one sample per mask.
struct ReplayStats {
  std::vector<double> mask_us;   // every FillMask, including the one after the last token
  std::vector<double> apply_us;  // ApplyMask on each of those masks (when timed)
  size_t tokens = 0;             // tokens accepted
  size_t violations = 0;         // token not in its mask, Accept refused, or end not allowed
  struct Slow {
    double us;
    std::string where;  // "schema after '<text accepted so far>'"
  };
  std::vector<Slow> slowest;  // the 5 slowest masks, slowest first
};

struct ReplayInput {
  std::shared_ptr<const structured::Grammar> grammar;
  std::span<const int32_t> tokens;  // the instance, tokenized without specials
  int32_t end_token = -1;           // must be allowed (and CanEnd true) after the last token
  std::string_view label;           // schema name, for violation messages
};

// Replays one instance: for each token, times FillMask, checks the token is in the mask and
// that Accept takes it; then times one more FillMask where the end token must be allowed.
// Violations are printed to stderr (the first 20 of the process) and counted. With `logits`
// (one row, vocabulary wide), also times ApplyMask on every mask.
void Replay(const ReplayInput& in, ReplayStats* stats, std::span<float> logits);

// logits[i] = -inf where mask bit i is 0. Walks 64-bit words: all-ones words are skipped, all-zero
// words are filled whole (vectorizes), mixed words clear their zero bits one by one.
// Cost: 2,560 word tests for 163,840 ids plus one store per disallowed id. (A branchless 64-lane
// select per mixed word measured 4-12x slower at -march=x86-64-v2: it does not vectorize.)
void ApplyMask(const structured::TokenSet& mask, std::span<float> logits);

// End-to-end decode throughput on the demo checkpoint with a JSON-schema grammar vs without
// (bench_grammar_e2e.cc, which describes the workload). Throughputs are decode-phase tokens/s.
struct E2eResult {
  int rounds = 0, sequences = 0;
  int64_t max_tokens = 0;
  size_t threads = 0;
  double unconstrained_tps = 0, constrained_tps = 0, cold_tps = 0;
  double ratio = 0;                  // constrained / unconstrained, over all rounds
  std::vector<double> round_ratios;  // the same per round
  double median_ratio = 0;           // of round_ratios: the verdict (robust to a noisy round)
  double unconstrained_step_ms = 0, constrained_step_ms = 0;
  double mean_length = 0;  // constrained output tokens per sequence (EOS included)
  int64_t max_length = 0, steps_per_run = 0;
  int eos_finished = 0, valid_json = 0;
  int violations = 0;           // an output token outside its mask on replay (a bug)
  int nondeterministic = 0;     // constrained runs whose outputs differed from the first run's
  std::vector<double> mask_us;  // FillMask per output token, replayed on the warm grammar
};

// Writes the demo checkpoint if needed, starts an engine on it and runs the first constrained
// batch, then `rounds` x (unconstrained, constrained).
base::Result<E2eResult> RunDecodeBench(int rounds);
void PrintE2e(const E2eResult& r);
nlohmann::ordered_json E2eJson(const E2eResult& r);

}  // namespace k3::app::grammar_bench
