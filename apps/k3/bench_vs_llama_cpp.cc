#include "apps/k3/bench_vs_llama_cpp.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/k3/bench_report.h"
#include "base/log.h"
#include "base/result.h"
#include "base/subprocess.h"

namespace k3::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string JoinInts(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

base::Result<std::string> FindLlamaBinary(const std::string& dir, const std::string& name) {
  for (const char* sub : {"build/bin/", "bin/", ""}) {
    const fs::path path = fs::path(dir) / (std::string(sub) + name);
    if (fs::is_regular_file(path)) return path.string();
  }
  return base::NotFound("no " + name + " under " + dir +
                        " (build llama.cpp there: cmake -B build && cmake --build build "
                        "--target llama-batched-bench)");
}

// Runs a child to completion (bounded by `limit`), its output in `log`; OK when it exits 0.
base::Status RunToCompletion(std::vector<std::string> argv, const std::string& log,
                             std::chrono::minutes limit) {
  K3_ASSIGN_OR_RETURN(auto child, base::Subprocess::Start({argv[0], argv, log, log + ".stderr"}));
  if (!child.Wait(limit)) {
    child.Stop();
    return base::Internal(argv[0] + " did not finish in time; see " + log);
  }
  if (child.exit_code() != 0) {
    return base::Internal(argv[0] + " exited with " +
                          std::to_string(child.exit_code().value_or(-1)) + "; see " + log +
                          "(.stderr)");
  }
  return base::Status::Ok();
}

// The GGUF beside the checkpoint, converted once by llama.cpp's converter through convert.py.
base::Result<std::string> EnsureGguf(const LlamaCppFlags& flags, const std::string& model_dir) {
  std::string base = fs::path(model_dir).lexically_normal().string();
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string gguf = base + ".llama-cpp-" + flags.outtype + ".gguf";
  if (fs::exists(gguf)) return gguf;
  const std::string script = std::string(K3_SOURCE_DIR) + "/tools/peers/llama_cpp/convert.py";
  K3_LOG(kInfo) << "converting " << model_dir << " for llama.cpp with its convert_hf_to_gguf.py "
                << "(once; a few minutes), log in " << gguf << ".convert.log";
  K3_RETURN_IF_ERROR(RunToCompletion(
      {flags.python, script, "--llama-cpp", flags.dir, "--model", model_dir, "--out", gguf,
       "--outtype", flags.outtype, "--k3", fs::read_symlink("/proc/self/exe").string()},
      gguf + ".convert.log", std::chrono::minutes(60)));
  return gguf;
}

// How llama.cpp runs: its binary, the GGUF, and whether it may repack weights at load (its CPU
// "extra buffer types": interleaved Q4_0/Q8_0 rows, AMX tiles), which it does by default.
struct LlamaRun {
  std::string bin, gguf;
  bool repack = true;
};

// llama-batched-bench's JSON lines: one per (prompt, generated, parallel sequences) point.
base::Result<std::vector<json>> BatchedBench(const LlamaRun& run, size_t threads,
                                             const std::string& npp, int ntg,
                                             const std::string& npl, int context, int batch) {
  const std::string out = run.gguf + ".bench.jsonl";
  const std::string t = std::to_string(threads);
  std::vector<std::string> argv = {run.bin, "-m", run.gguf, "-t", t, "-tb", t};
  for (const std::string& arg :
       {std::string("-c"), std::to_string(context), std::string("-b"), std::to_string(batch)})
    argv.push_back(arg);
  for (const std::string& arg : {std::string("-npp"), npp, std::string("-ntg"), std::to_string(ntg),
                                 std::string("-npl"), npl})
    argv.push_back(arg);
  argv.insert(argv.end(), {"--output-format", "jsonl"});
  if (!run.repack) argv.push_back("--no-repack");
  K3_RETURN_IF_ERROR(RunToCompletion(argv, out, std::chrono::minutes(30)));
  std::ifstream in(out);
  std::vector<json> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '{') continue;
    json row = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_object()) rows.push_back(std::move(row));
  }
  if (rows.empty()) return base::Internal("no results from " + run.bin + "; see " + out);
  return rows;
}

struct PeerSamples {
  std::vector<double> values;
  double Min() const {
    return values.empty() ? -1 : *std::min_element(values.begin(), values.end());
  }
  double Median() const { return k3::app::Median(values); }
  std::string MinMedian() const { return Fixed(Min()) + " / " + Fixed(Median()); }
};

struct PeerFigures {
  std::map<int, PeerSamples> decode, prefill;  // batch or prompt length -> tokens/s per round
};

base::Status LlamaRound(const LlamaRun& run, const PeerComparison& p, PeerFigures* llama) {
  if (!p.batches.empty()) {
    const int max_batch = *std::max_element(p.batches.begin(), p.batches.end());
    K3_ASSIGN_OR_RETURN(
        auto rows, BatchedBench(run, p.threads, std::to_string(p.decode_context), p.decode_steps,
                                JoinInts(p.batches),
                                max_batch * (p.decode_context + p.decode_steps) + 64, 2048));
    for (const json& r : rows)
      llama->decode[r.value("pl", 0)].values.push_back(r.value("speed_tg", -1.0));
  }
  if (!p.prefill.empty()) {
    const int longest = *std::max_element(p.prefill.begin(), p.prefill.end());
    K3_ASSIGN_OR_RETURN(auto rows, BatchedBench(run, p.threads, JoinInts(p.prefill), 1, "1",
                                                longest + 16, longest));
    for (const json& r : rows)
      llama->prefill[r.value("pp", 0)].values.push_back(r.value("speed_pp", -1.0));
  }
  return base::Status::Ok();
}

void PrintPeerTable(const PeerComparison& p, const PeerFigures& ours, const PeerFigures& llama,
                    int rounds) {
  std::printf(
      "\nk3 vs llama.cpp on the same weights, %d interleaved rounds, %zu threads each "
      "(tokens/s min / median; ratio of medians):\n",
      rounds, p.threads);
  Table table({"figure", "k3", "llama.cpp", "k3 / llama.cpp", "k3 of limit", "llama.cpp of limit"});
  auto row = [&](const std::string& name, const PeerSamples& a, const PeerSamples& b,
                 double limit) {
    table.Row({name, a.MinMedian(), b.MinMedian(), Ratio(a.Median(), b.Median()),
               Fixed(a.Median() / limit, 2), Fixed(b.Median() / limit, 2)});
  };
  for (int b : p.batches) {
    const auto it = llama.decode.find(b);
    row("decode batch " + std::to_string(b), ours.decode.at(b),
        it == llama.decode.end() ? PeerSamples{} : it->second, p.decode_roofline(b));
  }
  for (int n : p.prefill) {
    const auto it = llama.prefill.find(n);
    row("prefill " + std::to_string(n), ours.prefill.at(n),
        it == llama.prefill.end() ? PeerSamples{} : it->second, p.prefill_peak(n));
  }
  table.Print();
  std::printf(
      "limits: decode against k3's bytes per step / measured read bandwidth (llama.cpp's "
      "GGUF reads about the same bytes; Q8_0 is 1.0625 bytes per weight to FP8's 1), "
      "prefill against the measured peak of the instruction set k3's GEMMs ran on\n");
}

}  // namespace

int PrintVsLlamaCpp(const LlamaCppFlags& flags, const std::string& model_dir,
                    const PeerComparison& plan) {
  auto bin = FindLlamaBinary(flags.dir, "llama-batched-bench");
  if (!bin.ok()) {
    K3_LOG(kError) << bin.status().ToString();
    return 1;
  }
  auto gguf = EnsureGguf(flags, model_dir);
  if (!gguf.ok()) {
    K3_LOG(kError) << gguf.status().ToString();
    return 1;
  }
  // Untimed: pages the GGUF in and lets llama.cpp repack, as k3's loader touched its weights.
  // Where its repacked buffers abort (seen: K2's Q8_0 GGUF on an AMX Xeon, GGML_ASSERT in its
  // backend scheduler), every run goes without repacking, and the table says so.
  LlamaRun run{*bin, *gguf};
  K3_LOG(kInfo) << "llama.cpp warm-up run on " << *gguf;
  if (auto warm = BatchedBench(run, plan.threads, "16", 2, "1", 64, 64); !warm.ok()) {
    K3_LOG(kWarning) << warm.status().ToString()
                     << "; retrying llama.cpp without weight repacking (--no-repack)";
    run.repack = false;
    if (auto again = BatchedBench(run, plan.threads, "16", 2, "1", 64, 64); !again.ok()) {
      K3_LOG(kError) << again.status().ToString();
      return 1;
    }
  }
  PeerFigures ours, llama;
  for (int round = 0; round < flags.rounds; ++round) {
    K3_LOG(kInfo) << "k3 vs llama.cpp, round " << round + 1 << " of " << flags.rounds;
    if (plan.before_round) plan.before_round();
    for (int b : plan.batches) ours.decode[b].values.push_back(plan.ours_decode(b));
    for (int n : plan.prefill) ours.prefill[n].values.push_back(plan.ours_prefill(n));
    if (base::Status s = LlamaRound(run, plan, &llama); !s.ok()) {
      K3_LOG(kError) << s.ToString();
      return 1;
    }
  }
  PrintPeerTable(plan, ours, llama, flags.rounds);
  if (!run.repack) std::printf("llama.cpp ran with --no-repack (it aborted with repacking)\n");
  return 0;
}

}  // namespace k3::app
