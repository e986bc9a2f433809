// Running this binary as a `k3 serve` child process (k3 sweep once per grid point, k3 bench soak
// when it is given no --url).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/subprocess.h"

namespace k3::app {

// Starts this binary as `k3 serve ARGS` with its output in LOG_PREFIX.out / .log, and waits up to
// 180 s for its "listening on http://..." line. Returns the process and the URL.
base::Result<std::pair<base::Subprocess, std::string>> StartServe(std::vector<std::string> args,
                                                                  const std::string& log_prefix);

}  // namespace k3::app
