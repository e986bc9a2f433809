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

struct Case {
  nlohmann::json line;  // name + schema
  std::vector<std::vector<int32_t>> tokens;
  std::vector<bool> finished;
  std::vector<bool> closed_by_budget;
  int unfinished = 0;
  std::string error;
};

base::Result<std::vector<Case>> ReadCases(const SampleFlags& f) {
  std::ifstream in(f.schemas);
  if (!in) return base::NotFound("cannot read " + f.schemas);
  std::vector<Case> cases;
  std::string line;
  for (int index = 0; std::getline(in, line);) {
    if (line.empty()) continue;
    if (index++ % f.every != 0) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("schema")) {
      return base::InvalidArgument(f.schemas + ": each line needs a \"schema\"");
    }
    cases.push_back(
        Case{{{"name", j.value("name", "#" + std::to_string(index))}, {"schema", j["schema"]}}});
    if (f.limit > 0 && static_cast<int>(cases.size()) >= f.limit) break;
  }
  return cases;
}

int RunSample(const SampleFlags& f) {
  auto fail = [](const base::Status& s) {
    K3_LOG(kError) << s.ToString();
    return 1;
  };
  auto cases = ReadCases(f);
  if (!cases.ok()) return fail(cases.status());
  std::string dir = f.model;
  if (dir.empty()) {
    dir = DefaultDemoDir().string();
    if (auto s = model::testing::WriteDemoCheckpoint(dir); !s.ok()) return fail(s);
  }
  base::ThreadPool pool(static_cast<size_t>(f.threads));
  auto tokenizer = text::Tokenizer::FromKimiDirectory(dir);
  if (!tokenizer.ok()) return fail(tokenizer.status());
  auto loaded = model::Model::Load(dir, &pool);
  if (!loaded.ok()) return fail(loaded.status());
  std::shared_ptr<const model::Model> model = std::move(*loaded);
  engine::EngineConfig config;
  config.cache_memory_bytes = int64_t{512} << 20;
  config.max_running = 64;
  config.max_waiting = 1 << 16;
  auto engine = engine::Engine::Create(std::make_unique<engine::K3ModelRunner>(model), config);
  if (!engine.ok()) return fail(engine.status());
  const engine::RunnerInfo info = (*engine)->info();
  auto vocab = serve::StructuredVocabulary(**tokenizer, info.vocab_size);
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  (*engine)->Start();
  size_t next = 0, done = 0;
  auto submit = [&](size_t i) -> base::Status {
    Case& c = (*cases)[i];
    auto graph = structured::CompileSchema(c.line["schema"], {.closed_objects = true});
    if (!graph.ok()) {
      c.error = graph.status().message();
      return base::Status::Ok();
    }
    c.tokens.assign(static_cast<size_t>(f.n), {});
    c.finished.assign(static_cast<size_t>(f.n), false);
    c.closed_by_budget.assign(static_cast<size_t>(f.n), false);
    c.unfinished = f.n;
    engine::SamplingParams p;
    p.temperature = f.temperature;
    p.n = f.n;
    p.seed = 1000 + i;
    p.max_tokens = f.max_tokens;
    p.grammar_ends_within_budget = !f.no_budget_close;
    auto grammar = structured::JsonGrammar(vocab, std::move(*graph), {info.eos_token_id});
    grammar->set_unique_additional_keys(true);  // generation mode, as the server's grammars
    p.grammar = grammar;
    const std::string prompt = "Reply with JSON for " + c.line["name"].get<std::string>() + ".";
    K3_ASSIGN_OR_RETURN(auto ids, (*tokenizer)->Encode(prompt, text::SpecialMode::kNone));
    auto on_output = [&, i](const engine::RequestOutput& o) {
      std::lock_guard<std::mutex> lock(mu);
      Case& cc = (*cases)[i];
      auto& tokens = cc.tokens[static_cast<size_t>(o.index)];
      tokens.insert(tokens.end(), o.tokens.begin(), o.tokens.end());
      if (o.finish_reason == engine::FinishReason::kNone) return;
      const bool complete = o.finish_reason == engine::FinishReason::kStop || o.grammar_complete;
      cc.finished[static_cast<size_t>(o.index)] = complete;
      cc.closed_by_budget[static_cast<size_t>(o.index)] =
          complete && o.finish_reason == engine::FinishReason::kLength;
      if (--cc.unfinished == 0) {
        --in_flight;
        cv.notify_all();
      }
    };
    {
      std::lock_guard<std::mutex> lock(mu);
      ++in_flight;
    }
    return (*engine)->Submit({std::vector<int32_t>(ids.begin(), ids.end()), p, on_output}).status();
  };
  for (;;) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return in_flight < f.window || next == cases->size(); });
    if (next == cases->size()) {
      cv.wait(lock, [&] { return in_flight == 0; });
      break;
    }
    lock.unlock();
    if (auto s = submit(next++); !s.ok()) return fail(s);
    if (++done % 25 == 0) std::fprintf(stderr, "k3 sample: %zu/%zu schemas\n", done, cases->size());
  }
  (*engine)->Stop();
  std::ofstream out(f.out);
  if (!out) return fail(base::NotFound("cannot write " + f.out));
  for (Case& c : *cases) {
    nlohmann::json line = c.line;
    if (!c.error.empty()) {
      line["error"] = c.error;
    } else {
      line["outputs"] = nlohmann::json::array();
      for (auto& tokens : c.tokens) {
        if (!tokens.empty() && tokens.back() == info.eos_token_id) tokens.pop_back();
        std::vector<text::TokenId> ids(tokens.begin(), tokens.end());
        auto bytes = (*tokenizer)->DecodeBytes(ids);
        line["outputs"].push_back(bytes.ok() ? *bytes : std::string());
      }
      line["finished"] = c.finished;
      line["closed_by_budget"] = c.closed_by_budget;
    }
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  std::fprintf(stderr, "k3 sample: %zu schemas x %d written to %s\n", cases->size(), f.n,
               f.out.c_str());
  return 0;
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
  return [f] { return RunSample(*f); };
}

}  // namespace k3::app
