#include "base/numa.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace k3::base {
namespace {

Status BadCpuList(std::string_view text) {
  return InvalidArgument("malformed cpu list '" + std::string(text) + "'");
}

// One non-negative decimal number filling `text` exactly.
bool ParseInt(std::string_view text, int* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && *out >= 0;
}

std::vector<int> AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// MPOL_PREFERRED from <linux/mempolicy.h>, spelled here so no libnuma is needed for one syscall.
constexpr int kMpolPreferred = 1;

Status PreferMemoryFrom(int node) {
  constexpr int kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(node / kBits + 1, 0);
  mask[node / kBits] = 1ul << (node % kBits);
  if (syscall(SYS_set_mempolicy, kMpolPreferred, mask.data(), mask.size() * kBits + 1) != 0) {
    return Internal(std::string("set_mempolicy: ") + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    if (!ParseInt(item.substr(0, dash), &first)) return BadCpuList(text);
    last = first;
    if (dash != std::string_view::npos && !ParseInt(item.substr(dash + 1), &last)) {
      return BadCpuList(text);
    }
    if (last < first || last >= CPU_SETSIZE) return BadCpuList(text);
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return BadCpuList(",");
  }
  return cpus;
}

Result<std::vector<NumaNode>> ReadNumaNodes(const std::filesystem::path& sysfs) {
  std::vector<NumaNode> nodes;
  std::error_code ec;
  if (!std::filesystem::is_directory(sysfs, ec)) {
    nodes.push_back({0, AffinityCpus()});
    return nodes;
  }
  for (const auto& entry : std::filesystem::directory_iterator(sysfs, ec)) {
    const std::string name = entry.path().filename().string();
    int id = 0;
    if (name.rfind("node", 0) != 0 || !ParseInt(std::string_view(name).substr(4), &id)) continue;
    std::ifstream in(entry.path() / "cpulist");
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Internal("cannot read " + (entry.path() / "cpulist").string());
    K3_ASSIGN_OR_RETURN(std::vector<int> cpus, ParseCpuList(text.str()));
    if (!cpus.empty()) nodes.push_back({id, std::move(cpus)});
  }
  if (ec) return Internal("cannot list " + sysfs.string() + ": " + ec.message());
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

Status BindToNumaNode(int id, const std::vector<NumaNode>& nodes) {
  auto node =
      std::find_if(nodes.begin(), nodes.end(), [&](const NumaNode& n) { return n.id == id; });
  if (node == nodes.end()) {
    std::string ids;
    for (const NumaNode& n : nodes) ids += (ids.empty() ? "" : ", ") + std::to_string(n.id);
    return InvalidArgument("no NUMA node " + std::to_string(id) + " with CPUs (this machine has " +
                           ids + ")");
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : node->cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return Internal(std::string("sched_setaffinity: ") + std::strerror(errno));
  }
  return PreferMemoryFrom(id);
}

size_t AvailableCpus() { return std::max<size_t>(1, AffinityCpus().size()); }

}  // namespace k3::base
