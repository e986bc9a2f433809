// NUMA placement for one process: which CPUs each memory node has (from Linux sysfs) and binding
// the process to one node. k3serve scales across sockets the way llama.cpp's `--numa isolate` and
// SGLang's per-socket workers do: one replica per node (`k3 serve --numa-node N`), each with its
// threads on that node's cores and its memory -- the mapped weights' page-cache pages included,
// which the kernel places where the first touch comes from -- preferred from that node, and the
// router (`k3 route`) in front of them. Splitting one model's rows across nodes would make every
// product's activations cross the interconnect, which is what bandwidth-bound decode cannot afford.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/status.h"

namespace k3::base {

// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11} (the kernel's cpulist format; empty -> {}).
// INVALID_ARGUMENT for anything else (reversed ranges, junk, negative numbers).
Result<std::vector<int>> ParseCpuList(std::string_view text);

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
};

// The nodes under `sysfs` (nodeN/cpulist), ordered by id, nodes without CPUs (memory-only, CXL)
// left out. A machine without the folder (a kernel built without NUMA) is one node 0 holding the
// CPUs this process may run on.
Result<std::vector<NumaNode>> ReadNumaNodes(
    const std::filesystem::path& sysfs = "/sys/devices/system/node");

// Binds the calling thread -- and every thread it starts afterwards, so call it before any pool
// exists -- to node `id`'s CPUs and sets its memory policy to prefer that node (allocations fall
// back to other nodes when it is full rather than failing). INVALID_ARGUMENT naming the nodes
// there are for an unknown id.
Status BindToNumaNode(int id, const std::vector<NumaNode>& nodes);

// The CPUs this process may run on (its affinity mask), at least 1: what a pool of "all cores"
// should use, unlike std::thread::hardware_concurrency, which ignores affinity and cpusets.
size_t AvailableCpus();

}  // namespace k3::base
