// Internal to `k3 bench tokenizer`: the pieces shared by its command file (inputs, peers, the
// mixed-text tables) and its report file (pathological inputs, cl100k, targets).
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/k3/bench_corpus.h"
#include "apps/k3/bench_report.h"
#include "apps/k3/tokenizer_flags.h"
#include "base/thread_pool.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app::bench {

struct BenchFlags {
  TokenizerFlags tokenizer;
  std::string peers_dir = K3_DEFAULT_PEERS_DIR;
  std::string node = "node";
  std::string json_out;
  int repeats = 3;
  // Pause between the node peers and k3's own measurements (see RunBench).
  int settle_seconds = 20;
  // Warm runs continue until both `repeats` runs and this much time are spent (k3 and peers
  // alike), so a short encode is not judged on a few milliseconds of a noisy machine.
  int min_warm_ms = 500;
  bool quick = false;
  bool no_peers = false;
  bool keep_inputs = false;
};

// The documents, in memory and as the files the peers read.
struct Inputs {
  std::vector<Document> mixed_a;  // measured single-threaded
  std::vector<Document> mixed_b;  // distinct documents of the same sizes, measured on all threads
  std::vector<Document> patho;    // 1 MB each
  std::vector<std::string> mixed_a_files, mixed_b_files, patho_small_files;
};

inline constexpr size_t kPathoBytes = 1 << 20;
inline constexpr size_t kPathoPeerBytes = 100 * 1000;  // the WASM merge loop is quadratic per piece

// (peer/encoding, file) -> that peer's measurement; an invalid Measurement when missing.
using PeerLookup = std::function<Measurement(const std::string&, const std::string&)>;

double NowMs();
// Encodes once (Kimi with specials recognised, others as encode_ordinary); returns {ms, ids}.
std::pair<double, std::vector<text::TokenId>> TimeEncode(const text::Tokenizer& tokenizer,
                                                         const std::string& text,
                                                         base::ThreadPool* pool);
// One cold encode, then the best of the warm ones: `repeats` of them, and more until
// `min_warm_ms` is spent (only when repeats > 0).
Measurement MeasureOurs(const text::Tokenizer& tokenizer, const std::string& text,
                        base::ThreadPool* pool, int repeats, int min_warm_ms = 0);
std::string ReadText(const std::string& path);
// "yes" when both produced the same ids, "NO" when not, "-" when the peer is missing.
std::string Match(const Measurement& ours, const Measurement& peer);
// Prints the pathological and cl100k tables and the targets; fills `report`. Returns the exit
// status of the command.
int FinishReport(const BenchFlags& flags, const text::Tokenizer& kimi, const Inputs& in,
                 const PeerLookup& peer, const std::string& cl100k_ranks, base::ThreadPool* one,
                 base::ThreadPool* all, nlohmann::json* report);

}  // namespace k3::app::bench
