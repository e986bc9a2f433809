// The second half of `k3 bench tokenizer`: pathological inputs, cl100k_base, memory, targets.
#include <cstdio>
#include <cstring>
#include <fstream>

#include "apps/k3/bench_tokenizer.h"
#include "base/log.h"

namespace k3::app::bench {
namespace {

namespace fs = std::filesystem;
using text::Tokenizer;

// Resident memory the 1M-token encode adds on all threads, measured in a fresh `k3 tokenize`
// process (so memory this benchmark already holds does not hide it). -1 when it cannot run.
double EncodeMemoryGrowthMB(const BenchFlags& flags, const std::string& file) {
  std::string model = flags.tokenizer.model.empty() ? DefaultModelDir() : flags.tokenizer.model;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);  // popen's shell would be /proc/self
  if (ec) return -1;
  std::string command = "'" + self.string() + "' tokenize --count --report-memory --model '" +
                        model + "' < '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  char line[512];
  double added = -1;
  while (std::fgets(line, sizeof(line), pipe)) {
    if (const char* at = std::strstr(line, "encode added ")) added = std::atof(at + 13);
  }
  pclose(pipe);
  return added;
}

// Prints one line per target of the issue: the figure, the target and whether it is met.
void PrintTokenizerTargets(const nlohmann::json& r) {
  std::printf("Targets:\n");
  Table table({"target", "measured", "goal", "met"});
  auto row = [&](const char* what, double value, const std::string& unit, const char* goal,
                 bool met) {
    table.Row({what, value < 0 ? "-" : Fixed(value) + unit, goal,
               value < 0 ? "-"
               : met     ? "yes"
                         : "NO"});
  };
  double r1 = r["ratio_single_thread_min"], rall = r["ratio_1m_all_threads"];
  row("one thread vs WASM tiktoken, mixed (worst doc)", r1 > 1e299 ? -1 : r1, "x", ">= 20x",
      r1 >= 20);
  row("1M-token doc, all threads vs WASM tiktoken", rall, "x", ">= 35x", rall >= 35);
  double nows = r["nows_1mb_ms"], nows_all = r["nows_1mb_all_threads_ms"];
  row("1 MB without whitespace (Kimi chunking), one thread", nows, " ms", "< 50 ms", nows < 50);
  row("1 MB without whitespace (Kimi chunking), all threads", nows_all, " ms", "< 50 ms",
      nows_all < 50);
  double raw = r["nows_1mb_raw_ms"];
  row("1 MB without whitespace, one 1 MB piece (raw)", raw, " ms", "(no quadratic case)",
      raw < 500);
  double mem = r["peak_mb_1m_tokens"];
  row("memory added by the largest encode, all threads", mem, " MB", "< 64 MB (1M tokens)",
      mem < 64);
  double load = r["vocab_load_ms"]["first"];
  row("vocabulary load (first)", load, " ms", "< 150 ms", load < 150);
  table.Print();
}

}  // namespace

int FinishReport(const BenchFlags& flags, const Tokenizer& kimi, const Inputs& in,
                 const PeerLookup& peer, const std::string& cl100k_ranks, base::ThreadPool* one,
                 base::ThreadPool* all, nlohmann::json* report) {
  std::printf(
      "Pathological inputs, one thread (peers and ratios on the first 100 KB; "
      "k3 ms on the whole 1 MB):\n");
  Table patho(
      {"input", "k3 MB/s", "wasm MB/s", "HF MB/s", "x wasm", "x HF", "same ids", "k3 1 MB ms"});
  for (size_t i = 0; i < in.patho.size(); ++i) {
    std::string small = ReadText(in.patho_small_files[i]);
    Measurement ours = MeasureOurs(kimi, small, one, flags.repeats, flags.min_warm_ms);
    Measurement whole = MeasureOurs(kimi, in.patho[i].text, one, 1, flags.min_warm_ms);
    Measurement wasm = peer("tiktoken-wasm/kimi", in.patho_small_files[i]);
    Measurement hf = peer("hf-tokenizers/kimi", in.patho_small_files[i]);
    patho.Row({in.patho[i].name, Fixed(ours.WarmMBps()),
               wasm.valid() ? Fixed(wasm.WarmMBps(), 2) : "-",
               hf.valid() ? Fixed(hf.WarmMBps(), 2) : "-",
               Ratio(ours.WarmMBps(), wasm.valid() ? wasm.WarmMBps() : -1),
               Ratio(ours.WarmMBps(), hf.valid() ? hf.WarmMBps() : -1),
               Match(ours, wasm) + "/" + Match(ours, hf), Fixed(whole.WarmMs())});
    if (i == 0) {
      (*report)["nows_1mb_ms"] = whole.WarmMs();
      (*report)["nows_1mb_all_threads_ms"] =
          MeasureOurs(kimi, in.patho[i].text, all, 2, flags.min_warm_ms).WarmMs();
    }
  }
  patho.Print();
  TokenizerFlags raw_flags = flags.tokenizer;
  raw_flags.no_moonshot_chunking = true;
  auto raw = LoadTokenizer(raw_flags);
  (*report)["nows_1mb_raw_ms"] =
      raw.ok() ? MeasureOurs(**raw, in.patho[0].text, one, 0).cold_ms : -1;

  (*report)["peak_mb_1m_tokens"] = EncodeMemoryGrowthMB(flags, in.mixed_b_files.back());

  TokenizerFlags cl_flags;
  cl_flags.ranks = cl100k_ranks;
  cl_flags.pattern = "cl100k_base";
  if (auto cl = LoadTokenizer(cl_flags); cl.ok()) {
    std::printf("cl100k_base (OpenAI), mixed text:\n");
    Table table({"document", "k3 1T", "k3 all", "wasm", "tiktoken-node", "HF", "x wasm 1T",
                 "x tiktoken-node 1T", "x HF 1T", "same ids"});
    for (size_t i = 1; i < in.mixed_a.size(); ++i) {
      const std::string& file = in.mixed_a_files[i];
      Measurement ours1 =
          MeasureOurs(**cl, in.mixed_a[i].text, one, flags.repeats, flags.min_warm_ms);
      Measurement ours_all =
          MeasureOurs(**cl, in.mixed_a[i].text, all, flags.repeats, flags.min_warm_ms);
      Measurement wasm = peer("tiktoken-wasm/cl100k_base", file);
      Measurement native = peer("tiktoken-node/cl100k_base", file);
      Measurement hf = peer("hf-tokenizers/cl100k_base", file);
      auto mbps = [](const Measurement& m) { return m.valid() ? m.WarmMBps() : -1; };
      table.Row({in.mixed_a[i].name, Fixed(ours1.WarmMBps()), Fixed(ours_all.WarmMBps()),
                 Fixed(mbps(wasm), 2), Fixed(mbps(native), 2), Fixed(mbps(hf), 2),
                 Ratio(ours1.WarmMBps(), mbps(wasm)), Ratio(ours1.WarmMBps(), mbps(native)),
                 Ratio(ours1.WarmMBps(), mbps(hf)),
                 Match(ours1, wasm) + "/" + Match(ours1, native) + "/" + Match(ours1, hf)});
    }
    table.Print();
  } else {
    K3_LOG(kWarning) << "cl100k section skipped: " << cl.status().ToString();
  }
  PrintTokenizerTargets(*report);
  if (!flags.json_out.empty()) std::ofstream(flags.json_out) << report->dump(2) << "\n";
  if (!flags.keep_inputs) {
    std::error_code ec;
    fs::remove_all(fs::path(in.mixed_a_files.front()).parent_path(), ec);
  }
  return 0;
}

}  // namespace k3::app::bench
