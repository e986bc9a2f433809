// `k3 sample`: constrained sampling over a file of JSON Schemas. For every schema, n completions
// of a short prompt are sampled from a model (default: the embedded demo checkpoint, random
// weights) with the schema as a bare JSON grammar, and written as JSON lines
// {"name", "schema", "outputs": [text...], "finished": [bool...], "closed_by_budget": [bool...]}
// (finished = a complete output, ended by EOS; closed_by_budget = it ended because max_tokens was
// near and only the shortest way to finish was allowed, see
// SamplingParams::grammar_ends_within_budget; --no-budget-close turns that off), the input of
// tests/structured/validate.py. A schema that does not compile gets {"name", "error"} instead.
//
// Requests run concurrently in one engine (a window of --window schemas in flight).
#include <CLI/CLI.hpp>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "apps/k3/commands.h"
#include "apps/k3/demo_checkpoint.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "model/model.h"
#include "serve/constraints.h"
#include "structured/grammar.h"
#include "structured/schema.h"
#include "structured/vocabulary.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {
namespace {

struct SampleFlags {
  std::string model, schemas, out;
  int n = 20;
  double temperature = 1.0;
  int64_t max_tokens = 1000;
  int every = 1;
  int limit = 0;
  int window = 8;
  bool no_budget_close = false;
  int threads = 0;
};

struct SampleCase {
  nlohmann::json line;  // name + schema
  std::vector<std::vector<int32_t>> tokens;
  std::vector<bool> finished;
  std::vector<bool> closed_by_budget;
  int unfinished = 0;
  std::string error;
};

base::Result<std::vector<SampleCase>> ReadCases(const SampleFlags& f) {
  std::ifstream in(f.schemas);
  if (!in) return base::NotFound("cannot read " + f.schemas);
  std::vector<SampleCase> cases;
  std::string line;
  for (int index = 0; std::getline(in, line);) {
    if (line.empty()) continue;
    if (index++ % f.every != 0) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("schema")) {
      return base::InvalidArgument(f.schemas + ": each line needs a \"schema\"");
    }
    cases.push_back(SampleCase{
        {{"name", j.value("name", "#" + std::to_string(index))}, {"schema", j["schema"]}}});
    if (f.limit > 0 && static_cast<int>(cases.size()) >= f.limit) break;
  }
  return cases;
}

// The checkpoint (the demo one unless --model), its tokenizer and an engine running it.
struct Loaded {
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::unique_ptr<engine::Engine> engine;
};

base::Result<Loaded> LoadEngine(const SampleFlags& f, base::ThreadPool* pool) {
  K3_ASSIGN_OR_RETURN(const std::string dir, FolderOrDemo(f.model));
  Loaded out;
  K3_ASSIGN_OR_RETURN(out.tokenizer, text::Tokenizer::FromKimiDirectory(dir));
  K3_ASSIGN_OR_RETURN(auto loaded, model::Model::Load(dir, pool));
  std::shared_ptr<const model::Model> model = std::move(loaded);
  engine::EngineConfig config;
  config.cache_memory_bytes = int64_t{512} << 20;
  config.max_running = 64;
  config.max_waiting = 1 << 16;
  K3_ASSIGN_OR_RETURN(
      out.engine, engine::Engine::Create(std::make_unique<engine::K3ModelRunner>(model), config));
  return out;
}

// Submits the cases to the engine, at most --window schemas in flight, and gathers each
// completion's tokens and how it finished into its SampleCase.
class SampleRun {
 public:
  SampleRun(const SampleFlags& f, const Loaded& loaded, std::vector<SampleCase>* cases)
      : f_(f),
        tokenizer_(*loaded.tokenizer),
        engine_(*loaded.engine),
        info_(loaded.engine->info()),
        vocab_(serve::StructuredVocabulary(tokenizer_, info_.vocab_size)),
        cases_(*cases) {}

  // Returns once every submitted case has finished (or the first failed submission).
  base::Status Run() {
    size_t next = 0;
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return in_flight_ < f_.window || next == cases_.size(); });
      if (next == cases_.size()) {
        cv_.wait(lock, [&] { return in_flight_ == 0; });
        return base::Status::Ok();
      }
      lock.unlock();
      K3_RETURN_IF_ERROR(Submit(next++));
      if (next % 25 == 0) std::fprintf(stderr, "k3 sample: %zu/%zu schemas\n", next, cases_.size());
    }
  }

 private:
  // Compiles case i's schema (a failure is recorded in the case, not returned) and submits its
  // n completions with their own seed.
  base::Status Submit(size_t i) {
    SampleCase& c = cases_[i];
    auto graph = structured::CompileSchema(c.line["schema"], {.closed_objects = true});
    if (!graph.ok()) {
      c.error = graph.status().message();
      return base::Status::Ok();
    }
    c.tokens.assign(static_cast<size_t>(f_.n), {});
    c.finished.assign(static_cast<size_t>(f_.n), false);
    c.closed_by_budget.assign(static_cast<size_t>(f_.n), false);
    c.unfinished = f_.n;
    engine::SamplingParams p;
    p.temperature = f_.temperature;
    p.n = f_.n;
    p.seed = 1000 + i;
    p.max_tokens = f_.max_tokens;
    p.grammar_ends_within_budget = !f_.no_budget_close;
    auto grammar = structured::JsonGrammar(vocab_, std::move(*graph), {info_.eos_token_id});
    grammar->set_unique_additional_keys(true);  // generation mode, as the server's grammars
    p.grammar = grammar;
    const std::string prompt = "Reply with JSON for " + c.line["name"].get<std::string>() + ".";
    K3_ASSIGN_OR_RETURN(auto ids, tokenizer_.Encode(prompt, text::SpecialMode::kNone));
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++in_flight_;
    }
    auto on_output = [this, i](const engine::RequestOutput& o) { OnOutput(i, o); };
    return engine_.Submit({std::vector<int32_t>(ids.begin(), ids.end()), p, on_output}).status();
  }

  // Engine thread: appends the tokens; a finished completion records whether it is complete.
  void OnOutput(size_t i, const engine::RequestOutput& o) {
    std::lock_guard<std::mutex> lock(mu_);
    SampleCase& c = cases_[i];
    const auto index = static_cast<size_t>(o.index);
    c.tokens[index].insert(c.tokens[index].end(), o.tokens.begin(), o.tokens.end());
    if (o.finish_reason == engine::FinishReason::kNone) return;
    const bool complete = o.finish_reason == engine::FinishReason::kStop || o.grammar_complete;
    c.finished[index] = complete;
    c.closed_by_budget[index] = complete && o.finish_reason == engine::FinishReason::kLength;
    if (--c.unfinished == 0) {
      --in_flight_;
      cv_.notify_all();
    }
  }

  const SampleFlags& f_;
  const text::Tokenizer& tokenizer_;
  engine::Engine& engine_;
  const engine::RunnerInfo info_;
  const std::shared_ptr<const structured::Vocabulary> vocab_;
  std::vector<SampleCase>& cases_;
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;  // cases submitted and not finished; guarded by mu_
};

// One JSON line per case: outputs (decoded bytes without the EOS), finished, closed_by_budget;
// or the schema's compile error.
base::Status WriteOutputs(const std::string& path, std::vector<SampleCase>& cases,
                          const text::Tokenizer& tokenizer, int32_t eos_token_id) {
  std::ofstream out(path);
  if (!out) return base::NotFound("cannot write " + path);
  for (SampleCase& c : cases) {
    nlohmann::json line = c.line;
    if (!c.error.empty()) {
      line["error"] = c.error;
    } else {
      line["outputs"] = nlohmann::json::array();
      for (auto& tokens : c.tokens) {
        if (!tokens.empty() && tokens.back() == eos_token_id) tokens.pop_back();
        std::vector<text::TokenId> ids(tokens.begin(), tokens.end());
        auto bytes = tokenizer.DecodeBytes(ids);
        line["outputs"].push_back(bytes.ok() ? *bytes : std::string());
      }
      line["finished"] = c.finished;
      line["closed_by_budget"] = c.closed_by_budget;
    }
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return base::Status::Ok();
}

base::Status RunSample(const SampleFlags& f) {
  K3_ASSIGN_OR_RETURN(std::vector<SampleCase> cases, ReadCases(f));
  base::ThreadPool pool(static_cast<size_t>(f.threads));
  K3_ASSIGN_OR_RETURN(Loaded loaded, LoadEngine(f, &pool));
  loaded.engine->Start();
  const base::Status run = SampleRun(f, loaded, &cases).Run();
  loaded.engine->Stop();
  K3_RETURN_IF_ERROR(run);
  K3_RETURN_IF_ERROR(
      WriteOutputs(f.out, cases, *loaded.tokenizer, loaded.engine->info().eos_token_id));
  std::fprintf(stderr, "k3 sample: %zu schemas x %d written to %s\n", cases.size(), f.n,
               f.out.c_str());
  return base::Status::Ok();
}

}  // namespace

CommandFn AddSampleCommand(CLI::App& app) {
  auto f = std::make_shared<SampleFlags>();
  app.add_option("--schemas", f->schemas, "JSON lines, one {\"name\", \"schema\"} object each")
      ->required();
  app.add_option("--out", f->out, "Where to write the generations (JSON lines)")->required();
  app.add_option("--model", f->model, "Checkpoint folder (default: the embedded demo checkpoint)");
  app.add_option("--n", f->n, "Completions per schema")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  app.add_option("--temperature", f->temperature)->capture_default_str();
  app.add_option("--max-tokens", f->max_tokens, "Per completion")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--every", f->every, "Only every K-th schema")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--limit", f->limit, "At most this many schemas (0: all)")->capture_default_str();
  app.add_flag("--no-budget-close", f->no_budget_close,
               "Let outputs run into max_tokens (cut) instead of ending them in time");
  app.add_option("--window", f->window, "Schemas in flight at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--threads", f->threads, "Model threads (0: one per core)")->capture_default_str();
  app.footer(
      "Each schema becomes a bare JSON grammar (compact JSON, no chat markup); outputs are\n"
      "decoded bytes without the EOS. Check them with\n"
      "  python3 tests/structured/validate.py generations OUT");
  return [f] {
    const base::Status s = RunSample(*f);
    if (s.ok()) return 0;
    K3_LOG(kError) << s.ToString();
    return 1;
  };
}

}  // namespace k3::app
