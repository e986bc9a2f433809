// The embedded demo checkpoint `k3 serve` starts on when no --model is given: a tiny Kimi K3-shaped
// model (random, seeded, deterministic weights with real tensor names; bench_checkpoint.h's shape
// family) and a small byte-level BPE vocabulary in the tiktoken format with K3's 256 reserved
// special ids after the ranks (text/tokenizer/vocab_writer.h). It needs no external files and is
// written in well under a second. Its outputs are noise; it exists so the tokenizer, chat
// template, engine and HTTP server run end to end without downloading weights.
#pragma once

#include <filesystem>
#include <string>

#include "base/status.h"

namespace k3::model::testing {

// Bumped whenever the demo's files change; it names the default folder and the completeness marker.
inline constexpr int kDemoCheckpointVersion = 3;

// Writes a complete HF-style Kimi K3 checkpoint folder into `dir` (created): config.json
// (model_type kimi_k3, tiny shapes, max_position_embeddings 4096), safetensors shards and their
// index, tiktoken.model, tokenizer_config.json and generation_config.json. Every file is written to
// a private staging folder and renamed into `dir`, the marker file last, so a concurrent reader
// never sees a partly written file. Idempotent: if `dir` already holds a complete demo of this
// version, nothing is written.
base::Status WriteDemoCheckpoint(const std::filesystem::path& dir);

// Whether `dir` holds a complete demo checkpoint of kDemoCheckpointVersion (marker plus its files).
bool HasDemoCheckpoint(const std::filesystem::path& dir);

// The environment a demo folder is chosen from; the caller (apps/) reads it. Empty: unset.
struct DemoDirEnvironment {
  std::string xdg_cache_home;  // $XDG_CACHE_HOME
  std::string home;            // $HOME
  std::filesystem::path temp;  // the temp directory (std::filesystem::temp_directory_path)
};

// Where the demo is kept: XDG_CACHE_HOME/k3serve/demo-v3 when XDG_CACHE_HOME is absolute (the XDG
// spec ignores a relative one), else HOME/.cache/k3serve/demo-v3; temp/k3serve/demo-v3 when
// neither is set or the k3serve cache folder cannot be created or written. Creates that folder.
std::filesystem::path DemoCacheDir(const DemoDirEnvironment& env);

// The same choice of root for another cached folder: ROOT/k3serve/leaf (the trained demo's).
std::filesystem::path CacheDirFor(const DemoDirEnvironment& env, const std::string& leaf);

}  // namespace k3::model::testing
