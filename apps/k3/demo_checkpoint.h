// Where `k3 serve` (and `k3 sample`, `k3 route serve`, `k3 bench grammar`) keep the embedded demo
// checkpoint; the checkpoint itself is written by model/testing/demo_checkpoint.h.
#pragma once

#include <filesystem>
#include <string>

#include "base/result.h"
#include "model/testing/demo_checkpoint.h"

namespace k3::app {

// model::testing::DemoCacheDir for this process's environment: $XDG_CACHE_HOME/k3serve/demo-v3,
// else ~/.cache/k3serve/demo-v3; the temp directory's k3serve/demo-v3 when neither is set or the
// cache folder cannot be created.
std::filesystem::path DefaultDemoDir();

// `folder` when it is given; else the embedded random-weight demo checkpoint, written to
// DefaultDemoDir() (the default of every command whose --model or --like may be left out).
base::Result<std::string> FolderOrDemo(const std::string& folder);

// This process's XDG_CACHE_HOME, HOME and temp directory.
model::testing::DemoDirEnvironment DemoEnvironment();

}  // namespace k3::app
