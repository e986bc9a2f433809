// The trained demo model `k3 serve` runs when no --model is given: models/k3-demo/ in the source
// tree (a tiny Kimi K3 trained by tools/train/, issue 21), embedded in the binary at build time so
// that `k3` needs no source tree, and written once to the user's cache folder on first use. The
// random-weight demo (model/testing/demo_checkpoint.h) stays for tests and benchmarks.
#pragma once

#include <filesystem>
#include <string_view>

#include "base/status.h"

namespace k3::app {

// The embedded files: config.json, generation_config.json, model.safetensors, tiktoken.model,
// tokenizer_config.json, each exactly as in models/k3-demo/.
struct EmbeddedFile {
  std::string_view name;
  std::string_view bytes;
};
const EmbeddedFile* TrainedDemoFiles(int* count);

// First 16 hex digits of the SHA-256 of the embedded model.safetensors (computed at configure
// time): names the cache folder, so a binary with other weights never reads a stale copy.
std::string_view TrainedDemoFingerprint();

// Whether `dir` holds every embedded file at its size, and the completeness marker.
bool HasTrainedDemo(const std::filesystem::path& dir);

// Writes the embedded files into `dir` through a staging folder (base/staged_folder.h);
// nothing is written when HasTrainedDemo(dir).
base::Status WriteTrainedDemo(const std::filesystem::path& dir);

// $XDG_CACHE_HOME/k3serve/k3-demo-FINGERPRINT (else ~/.cache/..., else the temp directory's).
std::filesystem::path DefaultTrainedDemoDir();

}  // namespace k3::app
