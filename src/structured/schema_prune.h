// Pruning what cannot be finished from a compiled schema graph (not part of the library's
// interface).
#pragma once

#include "base/status.h"
#include "structured/schema.h"

namespace k3::structured {

// Least fixpoint of "has a finite instance" over every node, then every edge to a node without
// one is cut: alternatives, optional properties, additionalProperties (-> none) and items
// (-> max_items 0). INVALID_ARGUMENT when graph->root has no finite instance. Cost: O(nodes *
// rounds), rounds <= nodes.
base::Status PruneUnproductive(SchemaGraph* graph);

}  // namespace k3::structured
