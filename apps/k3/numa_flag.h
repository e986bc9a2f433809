// --numa-node N: runs the command on one NUMA node's cores with memory preferred from that node
// (base/numa.h), so a multi-socket machine serves one replica per socket behind `k3 route`.
#pragma once

#include <CLI/CLI.hpp>

#include "base/status.h"

namespace k3::app {

void AddNumaNodeFlag(CLI::App& app, int* node);

// Binds the process to `node` (no-op for -1) and logs which CPUs it now runs on. Call before any
// thread pool or server thread starts: threads started earlier keep their placement.
base::Status ApplyNumaNode(int node);

}  // namespace k3::app
