// The end-to-end section of `k3 bench grammar`: decode throughput of the serving engine on the
// embedded demo checkpoint with a JSON-schema grammar vs without one.
//
// Workload: kSequences requests (distinct short prompts, fixed seeds, temperature 1.0, at most
// kMaxTokens tokens) decoded together in one engine, driven on this thread (RunUntilIdle).
// - constrained: params.grammar = JsonGrammar(kSchema) over the demo tokenizer's vocabulary, end
//   token = the model's EOS; each sequence stops when its JSON is complete (EOS) or at kMaxTokens.
// - unconstrained: no grammar, ignore_eos, and max_tokens per sequence = the length the same
//   sequence (same seed) had constrained. Seeded sampling does not depend on the batch, so those
//   lengths are the same every run and both arms run the same batch shapes step by step: same
//   sequences alive, same number of tokens; only the masks differ.
// A first constrained run (grammar masks cold) gives the lengths and is reported on its own; then
// `rounds` of unconstrained, constrained (warm grammar) alternate, to spread drift over both arms.
// Throughput = generated tokens after every sequence's first (prefill) token, per second from
// that moment to the last output: the decode phase.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/k3/bench_grammar.h"
#include "apps/k3/bench_report.h"
#include "apps/k3/demo_checkpoint.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "model/model.h"
#include "serve/constraints.h"
#include "structured/matcher.h"
#include "structured/schema.h"
#include "structured/vocabulary.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app::grammar_bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSequences = 16;
constexpr int64_t kMaxTokens = 256;
constexpr double kTargetRatio = 0.95;

// A moderately rich reply: strings (bounded and not), a bounded integer and number, an enum, an
// array of strings and a nested object, most of them required. (An unbounded number admits up to 3
// exponent digits, so random outputs like 485E404 overflow a double and strict parsers refuse
// them; bounds rule the exponent out.)
constexpr char kSchema[] = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 24},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "email": {"type": "string", "maxLength": 40},
    "status": {"enum": ["active", "inactive", "pending"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 4},
    "score": {"type": "number", "minimum": 0, "maximum": 1000},
    "address": {
      "type": "object",
      "properties": {"city": {"type": "string", "maxLength": 20},
                     "zip": {"type": "string", "maxLength": 10}},
      "required": ["city"],
      "additionalProperties": false
    }
  },
  "required": ["name", "age", "status", "tags", "address"],
  "additionalProperties": false
})";

// One batch run.
struct E2eRun {
  int64_t decode_tokens = 0;  // after each sequence's first token
  double decode_seconds = 0;
  int64_t steps = 0;
  double busy_seconds = 0;  // the engine's step time (schedule + forward + update)
  int eos_finished = 0;
  std::vector<std::vector<int32_t>> outputs;  // per sequence
  double tps() const { return decode_seconds > 0 ? decode_tokens / decode_seconds : 0; }
};

struct Setup {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::shared_ptr<const structured::Vocabulary> vocab;
  std::shared_ptr<const structured::Grammar> grammar;
  std::vector<std::vector<int32_t>> prompts;
};

base::Result<Setup> MakeSetup(base::ThreadPool* pool) {
  const auto dir = DefaultDemoDir();
  K3_RETURN_IF_ERROR(model::testing::WriteDemoCheckpoint(dir));
  Setup s;
  K3_ASSIGN_OR_RETURN(s.tokenizer, text::Tokenizer::FromKimiDirectory(dir));
  K3_ASSIGN_OR_RETURN(std::unique_ptr<model::Model> loaded, model::Model::Load(dir, pool));
  std::shared_ptr<const model::Model> model = std::move(loaded);
  engine::EngineConfig config;
  config.cache_memory_bytes = int64_t{256} << 20;
  config.max_running = kSequences;
  K3_ASSIGN_OR_RETURN(
      s.engine, engine::Engine::Create(std::make_unique<engine::K3ModelRunner>(model), config));
  const auto& info = s.engine->info();
  s.vocab = serve::StructuredVocabulary(*s.tokenizer, info.vocab_size);
  K3_ASSIGN_OR_RETURN(structured::SchemaGraph graph,
                      structured::CompileSchema(nlohmann::json::parse(kSchema)));
  s.grammar = structured::JsonGrammar(s.vocab, std::move(graph), {info.eos_token_id});
  for (int i = 0; i < kSequences; ++i) {
    const std::string text = "Request " + std::to_string(i) + ": describe user #" +
                             std::to_string(i * 7 + 3) + " as a JSON object.";
    auto ids = s.tokenizer->Encode(text, text::SpecialMode::kNone);
    K3_RETURN_IF_ERROR(ids.status());
    s.prompts.emplace_back(ids->begin(), ids->end());
  }
  return s;
}

// Runs the kSequences requests to completion. `max_tokens` empty: kMaxTokens and stop at EOS
// (constrained); else per sequence, ignoring EOS.
base::Result<E2eRun> RunBatch(Setup& s, bool constrained, const std::vector<int64_t>& max_tokens) {
  E2eRun run;
  run.outputs.resize(kSequences);
  int started = 0;
  Clock::time_point decode_start, last;
  const engine::EngineMetrics before = s.engine->metrics();
  for (int i = 0; i < kSequences; ++i) {
    engine::SamplingParams p;
    p.temperature = 1.0;
    p.seed = 1000 + static_cast<uint64_t>(i);
    p.max_tokens = max_tokens.empty() ? kMaxTokens : max_tokens[static_cast<size_t>(i)];
    p.ignore_eos = !max_tokens.empty();
    if (constrained) p.grammar = s.grammar;
    auto on_output = [&, i](const engine::RequestOutput& o) {
      auto& out = run.outputs[static_cast<size_t>(i)];
      const bool first = out.empty() && !o.tokens.empty();
      const int64_t decoded = static_cast<int64_t>(o.tokens.size()) - (first ? 1 : 0);
      out.insert(out.end(), o.tokens.begin(), o.tokens.end());
      last = Clock::now();
      if (first && ++started == kSequences) decode_start = last;
      if (started == kSequences) run.decode_tokens += decoded;
      // Ended by EOS: on its own (kStop) or as the max_tokens budget closed it (kLength with a
      // complete grammar output).
      if (o.finish_reason == engine::FinishReason::kStop || (o.finished() && o.grammar_complete)) {
        ++run.eos_finished;
      }
    };
    K3_RETURN_IF_ERROR(
        s.engine->Submit({s.prompts[static_cast<size_t>(i)], p, on_output}).status());
  }
  K3_RETURN_IF_ERROR(s.engine->RunUntilIdle());
  if (started == kSequences) {
    run.decode_seconds = std::chrono::duration<double>(last - decode_start).count();
  }
  const engine::EngineMetrics after = s.engine->metrics();
  run.steps = after.counters.steps - before.counters.steps;
  run.busy_seconds = after.busy_seconds - before.busy_seconds;
  return run;
}

// Replays the constrained outputs through fresh matchers on the (warm) grammar, timing every
// FillMask; counts tokens outside their mask and outputs that are JSON objects.
void ReplayOutputs(const Setup& s, const E2eRun& run, E2eResult* r) {
  structured::TokenSet mask(s.vocab->size());
  const int32_t eos = s.engine->info().eos_token_id;
  for (const auto& tokens : run.outputs) {
    structured::Matcher m(s.grammar);
    std::string text;
    for (int32_t t : tokens) {
      const auto start = Clock::now();
      m.FillMask(&mask);
      r->mask_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (!mask.Test(static_cast<size_t>(t)) || !m.Accept(t)) {
        ++r->violations;
        break;
      }
      if (t != eos) text += s.vocab->Bytes(t);
    }
    r->valid_json += nlohmann::json::parse(text, nullptr, false).is_object();
  }
}

}  // namespace

base::Result<E2eResult> RunDecodeBench(int rounds) {
  base::ThreadPool pool(0);
  K3_ASSIGN_OR_RETURN(Setup s, MakeSetup(&pool));
  E2eResult r;
  r.rounds = rounds;
  r.sequences = kSequences;
  r.max_tokens = kMaxTokens;
  r.threads = pool.parallelism();
  K3_LOG(kInfo) << "e2e: first constrained run (cold grammar), " << kSequences << " sequences";
  K3_ASSIGN_OR_RETURN(E2eRun cold, RunBatch(s, true, {}));
  r.cold_tps = cold.tps();
  std::vector<int64_t> lengths;
  for (const auto& out : cold.outputs) lengths.push_back(static_cast<int64_t>(out.size()));
  E2eRun a_total, b_total;
  for (int round = 0; round < rounds; ++round) {
    K3_LOG(kInfo) << "e2e: round " << round + 1 << "/" << rounds;
    K3_ASSIGN_OR_RETURN(E2eRun a, RunBatch(s, false, lengths));
    K3_ASSIGN_OR_RETURN(E2eRun b, RunBatch(s, true, {}));
    if (b.outputs != cold.outputs) ++r.nondeterministic;
    r.round_ratios.push_back(a.tps() > 0 ? b.tps() / a.tps() : 0);
    for (auto [total, run] : {std::pair{&a_total, &a}, std::pair{&b_total, &b}}) {
      total->decode_tokens += run->decode_tokens;
      total->decode_seconds += run->decode_seconds;
      total->steps += run->steps;
      total->busy_seconds += run->busy_seconds;
    }
  }
  r.unconstrained_tps = a_total.tps();
  r.constrained_tps = b_total.tps();
  r.ratio = r.unconstrained_tps > 0 ? r.constrained_tps / r.unconstrained_tps : 0;
  std::vector<double> sorted = r.round_ratios;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    const size_t n = sorted.size();
    r.median_ratio = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
  r.unconstrained_step_ms = a_total.steps ? 1e3 * a_total.busy_seconds / a_total.steps : 0;
  r.constrained_step_ms = b_total.steps ? 1e3 * b_total.busy_seconds / b_total.steps : 0;
  r.eos_finished = cold.eos_finished;
  for (int64_t n : lengths) r.mean_length += static_cast<double>(n) / kSequences;
  r.max_length = *std::max_element(lengths.begin(), lengths.end());
  r.steps_per_run = cold.steps;
  ReplayOutputs(s, cold, &r);
  return r;
}

void PrintE2e(const E2eResult& r) {
  std::printf(
      "\nend-to-end decode, demo checkpoint: %d sequences, temperature 1.0, fixed seeds, at most "
      "%lld tokens, %zu threads;\nunconstrained runs ignore EOS and match each sequence's "
      "constrained length; %d rounds interleaved\n",
      r.sequences, static_cast<long long>(r.max_tokens), r.threads, r.rounds);
  auto vs = [&](double ours, double base) { return Fixed(base > 0 ? ours / base : -1, 3); };
  Table t({"decode", "tok/s", "vs unconstrained", "mean step ms"});
  t.Row({"unconstrained", Fixed(r.unconstrained_tps), "1.000", Fixed(r.unconstrained_step_ms, 2)});
  t.Row({"schema (warm grammar)", Fixed(r.constrained_tps), Fixed(r.ratio, 3),
         Fixed(r.constrained_step_ms, 2)});
  t.Row({"schema (first run, cold)", Fixed(r.cold_tps), vs(r.cold_tps, r.unconstrained_tps), "-"});
  t.Print();
  std::printf("per-round tok/s ratio:");
  for (double x : r.round_ratios) std::printf(" %.3f", x);
  std::printf("  (median %.3f)\n", r.median_ratio);
  const Summary mask = Summarize(r.mask_us);
  std::printf(
      "mask per sequence step (outputs replayed, warm): mean %.1f us  p50 %.1f  p99 %.1f  max %.0f"
      " (%zu masks); x%d sequences = %.2f ms per engine step, on the mask thread\n",
      mask.mean, mask.p50, mask.p99, mask.max, mask.n, r.sequences, mask.mean * r.sequences / 1e3);
  std::printf(
      "outputs: %d/%d ended by EOS, %d JSON objects, length mean %.1f max %lld tokens, %lld steps "
      "per run; token not in mask: %d; runs that differed from the first: %d\n",
      r.eos_finished, r.sequences, r.valid_json, r.mean_length,
      static_cast<long long>(r.max_length), static_cast<long long>(r.steps_per_run), r.violations,
      r.nondeterministic);
  std::printf(
      "decode with a schema >= %.0f %% of unconstrained (median round): %.1f %%  %s   (wall time: "
      "other processes on the machine add noise; see the per-round spread)\n",
      100 * kTargetRatio, 100 * r.median_ratio, r.median_ratio >= kTargetRatio ? "MET" : "NOT MET");
}

nlohmann::ordered_json E2eJson(const E2eResult& r) {
  const Summary mask = Summarize(r.mask_us);
  return {{"rounds", r.rounds},
          {"sequences", r.sequences},
          {"unconstrained_tok_s", r.unconstrained_tps},
          {"constrained_tok_s", r.constrained_tps},
          {"cold_constrained_tok_s", r.cold_tps},
          {"ratio", r.ratio},
          {"median_ratio", r.median_ratio},
          {"round_ratios", r.round_ratios},
          {"mask_mean_us", mask.mean},
          {"mask_p99_us", mask.p99},
          {"mean_length", r.mean_length},
          {"eos_finished", r.eos_finished},
          {"valid_json", r.valid_json},
          {"violations", r.violations}};
}

}  // namespace k3::app::grammar_bench
