// The engine's command-line flags, shared by `k3 serve` and `k3 bench engine`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "base/result.h"
#include "engine/engine_config.h"

namespace k3::app {

struct EngineFlags {
  engine::EngineConfig config;
  std::string cache_memory = "2GiB";
  bool no_prefix_caching = false;
  // Parses cache_memory and fills config; INVALID_ARGUMENT on a bad size.
  base::Status Finish();
};

void AddEngineFlags(CLI::App& app, EngineFlags* flags);

// "512MiB", "4GiB", "1.5G", "1048576" -> bytes.
base::Result<int64_t> ParseByteSize(const std::string& text);

}  // namespace k3::app
