// k3 bench tokenizer: our tokenizer's speed as ratios to peers measured in the same run on the
// same inputs: npm tiktoken (the WASM build of OpenAI's Rust core), HF tokenizers (native, via
// npm @anush008/tokenizers, on a tokenizer.json converted from the same ranks) and, for
// cl100k_base only, tiktoken-node (the native Rust core). Peers run in one node process.
// This file: flags, inputs, peers and the mixed-text tables; bench_tokenizer_report.cc the rest.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "apps/k3/bench_tokenizer.h"
#include "apps/k3/commands.h"
#include "base/log.h"
#include "base/utf8.h"
#include "kernels/roofline.h"
#include "text/tokenizer/char_class.h"

namespace k3::app::bench {

namespace fs = std::filesystem;
using text::TokenId;
using text::Tokenizer;

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t IdsHash(const std::vector<TokenId>& ids) {  // same as idsHash in kimi_reference.mjs
  uint32_t h = 2166136261u;
  for (TokenId id : ids) h = (h ^ id) * 16777619u;
  return h;
}

// Encodes once and returns {ms, ids}.
std::pair<double, std::vector<TokenId>> TimeEncode(const Tokenizer& tokenizer,
                                                   const std::string& text,
                                                   base::ThreadPool* pool) {
  std::vector<TokenId> ids;
  // Kimi encodes with specials recognised (Moonshot's default); cl100k as encode_ordinary.
  auto mode = tokenizer.options().pretokenizer == text::PretokenizerKind::kKimi
                  ? text::SpecialMode::kAll
                  : text::SpecialMode::kNone;
  double start = NowMs();
  base::Status status = tokenizer.Encode(text, text::EncodeOptions{mode, pool}, &ids);
  double ms = NowMs() - start;
  K3_CHECK(status.ok()) << status.ToString();
  return {ms, std::move(ids)};
}

Measurement MeasureOurs(const Tokenizer& tokenizer, const std::string& text, base::ThreadPool* pool,
                        int repeats, int min_warm_ms) {
  auto [cold_ms, ids] = TimeEncode(tokenizer, text, pool);
  double warm_ms = 1e300, spent_ms = 0;
  for (int r = 0; r < repeats || (repeats > 0 && spent_ms < min_warm_ms); ++r) {
    const double ms = TimeEncode(tokenizer, text, pool).first;
    warm_ms = std::min(warm_ms, ms);
    spent_ms += ms;
  }
  return {text.size(), ids.size(), IdsHash(ids), cold_ms, warm_ms};
}

std::string ReadText(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string Match(const Measurement& ours, const Measurement& peer) {
  if (!peer.valid()) return "-";
  return ours.hash == peer.hash && ours.tokens == peer.tokens ? "yes" : "NO";
}

namespace {

std::string WriteInput(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// Runs the node peers on the manifest; returns results keyed by (peer/encoding, file).
std::map<std::string, Measurement> RunPeers(const BenchFlags& flags, const nlohmann::json& manifest,
                                            const fs::path& dir) {
  std::map<std::string, Measurement> results;
  fs::path manifest_path = dir / "manifest.json";
  std::ofstream(manifest_path) << manifest.dump();
  std::string command = flags.node + " " +
                        (fs::path(flags.peers_dir) / "bench_peers.mjs").string() + " " +
                        manifest_path.string();
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return results;
  char line[4096];
  while (std::fgets(line, sizeof(line), pipe)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("error")) {
      K3_LOG(kWarning) << "peer " << j.value("peer", "?") << " failed: " << j["error"];
      continue;
    }
    K3_LOG(kInfo) << "  " << j["peer"].get<std::string>() << " done "
                  << fs::path(j["file"].get<std::string>()).filename().string();
    results[j["peer"].get<std::string>() + "/" + j["encoding"].get<std::string>() + "|" +
            j["file"].get<std::string>()] = {j["bytes"], j["tokens"], j["hash"], j["cold_ms"],
                                             j["warm_ms"]};
  }
  if (int rc = pclose(pipe); rc != 0) K3_LOG(kWarning) << "peer process exited with " << rc;
  return results;
}

int RunBench(const BenchFlags& flags);

Inputs BuildInputs(const BenchFlags& flags, const Tokenizer& kimi, const fs::path& dir) {
  Inputs in;
  std::string shared = fs::path(DefaultModelDir()).parent_path().parent_path().string();
  MixedTextSource source(shared, 42);
  auto count = [&](const std::string& t) { return kimi.Encode(t).value().size(); };
  std::vector<std::pair<size_t, std::string>> sizes = {{10'000, "10K"}, {200'000, "200K"}};
  if (!flags.quick) sizes.push_back({1'000'000, "1M"});
  for (const auto& [tokens, label] : sizes) {
    in.mixed_a.push_back(BuildDocument("mixed " + label + " tokens", tokens, source, count));
    in.mixed_b.push_back(BuildDocument("mixed " + label + " tokens", tokens, source, count));
    in.mixed_a_files.push_back(
        WriteInput(dir, "mixed_" + label + "_a.txt", in.mixed_a.back().text));
    in.mixed_b_files.push_back(
        WriteInput(dir, "mixed_" + label + "_b.txt", in.mixed_b.back().text));
  }
  in.patho = PathologicalDocuments(kPathoBytes, 7);
  for (size_t i = 0; i < in.patho.size(); ++i) {
    std::string text = in.patho[i].text.substr(0, kPathoPeerBytes);
    text.resize(base::CompleteUtf8PrefixLength(text));
    in.patho_small_files.push_back(WriteInput(dir, "patho_" + std::to_string(i) + ".txt", text));
  }
  return in;
}

int RunBench(const BenchFlags& flags);

}  // namespace
}  // namespace k3::app::bench

namespace k3::app {

CommandFn AddBenchTokenizerCommand(CLI::App& app) {
  auto flags = std::make_shared<bench::BenchFlags>();
  AddTokenizerFlags(app, &flags->tokenizer);
  app.add_option("--peers", flags->peers_dir, "Folder with bench_peers.mjs and its node_modules")
      ->capture_default_str();
  app.add_option("--node", flags->node, "The node binary")->capture_default_str();
  app.add_option("--repeats", flags->repeats, "Warm repetitions (best is reported)")
      ->capture_default_str();
  app.add_option("--settle-seconds", flags->settle_seconds,
                 "Pause after the node peers before measuring k3 (this VM runs ~13% slower for "
                 "about 20 s after node frees its heap)")
      ->capture_default_str();
  app.add_option("--min-warm-ms", flags->min_warm_ms,
                 "Warm runs go on until --repeats runs and this many ms are spent (k3 and peers)")
      ->capture_default_str();
  app.add_option("--json", flags->json_out, "Also write all figures to this JSON file");
  app.add_flag("--quick", flags->quick, "Smaller documents (10K and 200K tokens only)");
  app.add_flag("--no-peers", flags->no_peers, "Measure only k3 (no ratios)");
  app.add_flag("--keep-inputs", flags->keep_inputs,
               "Keep the generated documents (path is logged)");
  return [flags] { return bench::RunBench(*flags); };
}

}  // namespace k3::app

namespace k3::app::bench {
namespace {

// Runs every peer on the inputs (one node process); empty when the peers are not installed.
std::map<std::string, Measurement> MeasurePeers(const BenchFlags& flags, const Inputs& in,
                                                const std::string& cl100k_ranks,
                                                const fs::path& dir) {
  if (flags.no_peers || !fs::exists(fs::path(flags.peers_dir) / "node_modules")) {
    K3_LOG(kWarning) << "peers not measured (no " << flags.peers_dir
                     << "/node_modules; run: npm ci --prefix tools/peers)";
    return {};
  }
  K3_LOG(kInfo) << "running peers (node " << flags.peers_dir << "); this takes a minute";
  std::vector<std::string> kimi_files = in.mixed_a_files;
  kimi_files.insert(kimi_files.end(), in.mixed_b_files.begin(), in.mixed_b_files.end());
  kimi_files.insert(kimi_files.end(), in.patho_small_files.begin(), in.patho_small_files.end());
  std::vector<std::string> cl_files(in.mixed_a_files.begin() + 1, in.mixed_a_files.end());
  nlohmann::json manifest = {
      {"kimi_dir", flags.tokenizer.model.empty() ? DefaultModelDir() : flags.tokenizer.model},
      {"cl100k_ranks", cl100k_ranks},
      {"cache_dir", dir.string()},
      {"repeats", flags.repeats},
      {"min_warm_ms", flags.min_warm_ms},
      {"jobs",
       {{{"peer", "tiktoken-wasm"}, {"encoding", "kimi"}, {"files", kimi_files}},
        {{"peer", "hf-tokenizers"}, {"encoding", "kimi"}, {"files", kimi_files}},
        {{"peer", "tiktoken-wasm"}, {"encoding", "cl100k_base"}, {"files", cl_files}},
        {{"peer", "tiktoken-node"}, {"encoding", "cl100k_base"}, {"files", cl_files}},
        {{"peer", "hf-tokenizers"}, {"encoding", "cl100k_base"}, {"files", cl_files}}}}};
  return RunPeers(flags, manifest, dir);
}

// The two mixed-text tables: documents A on one thread, documents B on all threads.
void ReportMixed(const BenchFlags& flags, const Tokenizer& kimi, const Inputs& in,
                 const PeerLookup& peer, base::ThreadPool* one, base::ThreadPool* all,
                 nlohmann::json* report) {
  double ratio_1t_min = 1e300, ratio_1m_all = -1;
  for (int threads_all = 0; threads_all < 2; ++threads_all) {
    const auto& docs = threads_all ? in.mixed_b : in.mixed_a;
    const auto& files = threads_all ? in.mixed_b_files : in.mixed_a_files;
    std::printf("Mixed text, %s:\n", threads_all ? "all threads" : "one thread");
    Table table({"document", "MB", "tokens", "k3 cold", "k3 warm", "wasm cold", "wasm warm",
                 "HF warm", "x wasm cold", "x wasm warm", "x HF warm", "same ids"});
    for (size_t i = 0; i < docs.size(); ++i) {
      Measurement ours = MeasureOurs(kimi, docs[i].text, threads_all ? all : one, flags.repeats,
                                     flags.min_warm_ms);
      Measurement wasm = peer("tiktoken-wasm/kimi", files[i]);
      Measurement hf = peer("hf-tokenizers/kimi", files[i]);
      auto cold = [](const Measurement& m) { return m.valid() ? m.ColdMBps() : -1; };
      auto warm = [](const Measurement& m) { return m.valid() ? m.WarmMBps() : -1; };
      table.Row({docs[i].name, Fixed(ours.bytes / 1e6, 2), std::to_string(ours.tokens),
                 Fixed(ours.ColdMBps()), Fixed(ours.WarmMBps()), Fixed(cold(wasm), 2),
                 Fixed(warm(wasm), 2), Fixed(warm(hf), 2), Ratio(ours.ColdMBps(), cold(wasm)),
                 Ratio(ours.WarmMBps(), warm(wasm)), Ratio(ours.WarmMBps(), warm(hf)),
                 Match(ours, wasm) + "/" + Match(ours, hf)});
      if (wasm.valid()) {
        double r = ours.WarmMBps() / wasm.WarmMBps();
        if (!threads_all) ratio_1t_min = std::min(ratio_1t_min, r);
        if (threads_all && i + 1 == docs.size() && !flags.quick) ratio_1m_all = r;
      }
      (*report)["mixed"].push_back({{"doc", docs[i].name},
                                    {"all_threads", bool(threads_all)},
                                    {"bytes", ours.bytes},
                                    {"tokens", ours.tokens},
                                    {"k3_cold_mbps", ours.ColdMBps()},
                                    {"k3_warm_mbps", ours.WarmMBps()},
                                    {"wasm_warm_mbps", warm(wasm)},
                                    {"hf_warm_mbps", warm(hf)}});
    }
    table.Print();
  }
  (*report)["ratio_single_thread_min"] = ratio_1t_min;
  (*report)["ratio_1m_all_threads"] = ratio_1m_all;
}

int RunBench(const BenchFlags& flags) {
  double load_start = NowMs();
  auto loaded = LoadTokenizer(flags.tokenizer);
  double first_load_ms = NowMs() - load_start;
  if (!loaded.ok()) {
    K3_LOG(kError) << loaded.status().ToString();
    return 1;
  }
  const Tokenizer& kimi = **loaded;
  double best_load_ms = first_load_ms;
  for (int i = 0; i < 3; ++i) {
    double t = NowMs();
    (void)LoadTokenizer(flags.tokenizer);
    best_load_ms = std::min(best_load_ms, NowMs() - t);
  }
  fs::path dir = fs::temp_directory_path() / ("k3-bench-tokenizer-" + std::to_string(getpid()));
  fs::create_directories(dir);
  K3_LOG(kInfo) << "building distinct benchmark documents in " << dir.string();
  Inputs in = BuildInputs(flags, kimi, dir);
  std::string cl100k_ranks =
      (fs::path(flags.peers_dir) / "node_modules/gpt-tokenizer/data/cl100k_base.tiktoken").string();
  std::map<std::string, Measurement> peers = MeasurePeers(flags, in, cl100k_ranks, dir);
  auto peer = [&](const std::string& name, const std::string& file) {
    auto it = peers.find(name + "|" + file);
    return it == peers.end() ? Measurement{} : it->second;
  };

  // Measured on the development VM: right after the node process that ran the peers exits, the
  // same encode runs about 13% slower, and it is back to normal 20 s later (likely the kernel
  // reclaiming node's freed heap). The peers start on a settled machine; so does k3.
  if (!peers.empty() && flags.settle_seconds > 0) {
    K3_LOG(kInfo) << "letting the machine settle for " << flags.settle_seconds
                  << " s after the peers (--settle-seconds)";
    std::this_thread::sleep_for(std::chrono::seconds(flags.settle_seconds));
  }
  base::ThreadPool one(1), all(0);
  K3_LOG(kInfo) << "measuring k3 (" << all.parallelism() << " threads)";
  nlohmann::json report = {{"threads", all.parallelism()},
                           {"vocab_load_ms", {{"first", first_load_ms}, {"best", best_load_ms}}}};
  std::printf(
      "\nk3 bench tokenizer: Kimi vocabulary (%zu ids), Unicode %s tables, %zu threads\n"
      "MB/s of UTF-8 input; cold = first encode of that text, warm = best of %d or more runs "
      "over at least %d ms (peers alike).\n%s\n\n",
      kimi.vocab_size(), text::kUnicodeVersion, all.parallelism(), flags.repeats, flags.min_warm_ms,
      kernels::MachineLine(all.parallelism()).c_str());
  report["machine"] = kernels::MachineLine(all.parallelism());
  ReportMixed(flags, kimi, in, peer, &one, &all, &report);
  return FinishReport(flags, kimi, in, peer, cl100k_ranks, &one, &all, &report);
}

}  // namespace
}  // namespace k3::app::bench
