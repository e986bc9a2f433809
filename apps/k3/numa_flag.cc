#include "apps/k3/numa_flag.h"

#include <string>

#include "base/log.h"
#include "base/numa.h"

namespace k3::app {

void AddNumaNodeFlag(CLI::App& app, int* node) {
  app.add_option("--numa-node", *node,
                 "Run on this NUMA node's cores with memory (weights included) preferred from it; "
                 "one replica per node behind `k3 route` on multi-socket machines (-1 = no "
                 "binding)")
      ->capture_default_str();
}

base::Status ApplyNumaNode(int node) {
  if (node < 0) return base::Status::Ok();
  K3_ASSIGN_OR_RETURN(const std::vector<base::NumaNode> nodes, base::ReadNumaNodes());
  K3_RETURN_IF_ERROR(base::BindToNumaNode(node, nodes));
  K3_LOG(kInfo) << "bound to NUMA node " << node << " of " << nodes.size() << ": "
                << base::AvailableCpus() << " CPUs, memory preferred from node " << node;
  return base::Status::Ok();
}

}  // namespace k3::app
