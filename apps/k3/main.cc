// k3: the one k3serve binary. `k3 --help` lists the subcommands; `k3 SUBCOMMAND --help` explains
// one.
#include <CLI/CLI.hpp>
#include <map>

#include "apps/k3/commands.h"
#include "base/log.h"

int main(int argc, char** argv) {
  CLI::App app{"k3serve: a serving stack for Moonshot's Kimi models (K3, Kimi-Linear, K2/K2.5).",
               "k3"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug, info, warning or error")->capture_default_str();

  std::map<CLI::App*, k3::app::CommandFn> commands;
  auto add = [&](const char* name, const char* help, auto add_fn) {
    CLI::App* sub = app.add_subcommand(name, help);
    commands[sub] = add_fn(*sub);
  };
  add("serve",
      "OpenAI / Anthropic compatible HTTP server (no --model: the embedded trained demo model)",
      k3::app::AddServeCommand);
  add("tokenize", "Text on stdin -> token ids on stdout (Kimi tiktoken BPE)",
      k3::app::AddTokenizeCommand);
  add("detokenize", "Token ids on stdin -> text on stdout", k3::app::AddDetokenizeCommand);
  add("render", "Chat requests -> the token ids k3 serve would run (and a completion's ids)",
      k3::app::AddRenderCommand);
  add("train-vocab", "Learns a BPE vocabulary from a text corpus and writes a K3 tokenizer folder",
      k3::app::AddTrainVocabCommand);
  add("generate", "Greedy decoding on a checkpoint folder (debugging the model runtime)",
      k3::app::AddGenerateCommand);
  add("sample", "Samples JSON constrained by each schema of a file (checks structured outputs)",
      k3::app::AddSampleCommand);
  add("route", "KV-aware router in front of k3 serve replicas (`route simulate`: trace replay)",
      k3::app::AddRouteCommand);
  add("verify",
      "API conformance suite against an OpenAI/Anthropic-compatible endpoint (PASS/FAIL per "
      "check)",
      k3::app::AddVerifyCommand);
  add("sweep", "Runs k3 serve over a grid of settings and prints the throughput/latency frontier",
      k3::app::AddSweepCommand);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that print ratios against peers");
  bench->require_subcommand(1);
  CLI::App* bench_tokenizer = bench->add_subcommand(
      "tokenizer", "Tokenizer MB/s vs npm tiktoken (WASM), HF tokenizers and tiktoken-node");
  commands[bench_tokenizer] = k3::app::AddBenchTokenizerCommand(*bench_tokenizer);
  CLI::App* bench_model = bench->add_subcommand(
      "model", "Model decode/prefill speed vs measured memory bandwidth and peak FLOP rate");
  commands[bench_model] = k3::app::AddBenchModelCommand(*bench_model);
  CLI::App* bench_engine = bench->add_subcommand(
      "engine", "Engine throughput by concurrency, cached-prefix TTFT, KDA checkpoint memory");
  commands[bench_engine] = k3::app::AddBenchEngineCommand(*bench_engine);
  CLI::App* bench_frontend = bench->add_subcommand(
      "frontend", "Frontend cost per request and per streamed token vs the engine's own times");
  commands[bench_frontend] = k3::app::AddBenchFrontendCommand(*bench_frontend);
  CLI::App* bench_grammar = bench->add_subcommand(
      "grammar",
      "Structured-output mask time per token, schema compile time vs XGrammar/llguidance");
  commands[bench_grammar] = k3::app::AddBenchGrammarCommand(*bench_grammar);
  CLI::App* bench_serve = bench->add_subcommand(
      "serve", "Serving load on an OpenAI-compatible endpoint: throughput, TTFT/TPOT/ITL, goodput");
  commands[bench_serve] = k3::app::AddBenchServeCommand(*bench_serve);
  CLI::App* bench_soak = bench->add_subcommand(
      "soak", "Soak test of k3 serve: mixed traffic for --duration, then leak and error checks");
  commands[bench_soak] = k3::app::AddBenchSoakCommand(*bench_soak);

  CLI11_PARSE(app, argc, argv);
  k3::base::LogLevel level;
  if (!k3::base::ParseLogLevel(log_level, &level)) {
    std::fprintf(stderr, "k3: unknown --log-level '%s'\n", log_level.c_str());
    return 2;
  }
  k3::base::SetMinLogLevel(level);
  for (auto& [sub, run] : commands) {
    if (sub->parsed()) return run();
  }
  return 2;
}
