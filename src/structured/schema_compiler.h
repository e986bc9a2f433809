// JSON Schema document -> nodes of a SchemaGraph, before pruning (not part of the library's
// interface; CompileSchema and AddSchema in schema.h are).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "base/result.h"
#include "structured/schema.h"

namespace k3::structured {

// Appends the nodes of `schema` to *graph (refs resolve within `schema`; each ref target is
// compiled once, so recursion becomes a cycle) and returns the node of the document root.
// INVALID_ARGUMENT naming the JSON pointer of the first unsupported or malformed keyword, or of a
// oneOf whose alternatives share a JSON type. Unproductive nodes are left for PruneUnproductive.
base::Result<int32_t> CompileInto(const nlohmann::json& schema, SchemaGraph* graph,
                                  const SchemaOptions& options);

}  // namespace k3::structured
