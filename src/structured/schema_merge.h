// Merging an anyOf/oneOf alternative with the keywords beside it (not part of the library's
// interface): {"type": "object", "anyOf": [A, B]} means anyOf: [A ∧ siblings, B ∧ siblings].
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"

namespace k3::structured {

// One object schema whose instances are those of both `a` and `b`, for the keywords this
// library supports: type lists intersect ("integer" within "number"), required and properties
// unite (shared properties merge recursively), lower bounds take the max and upper bounds the
// min, enums intersect, annotations keep a's value. Any other keyword present in both with
// different values is INVALID_ARGUMENT at `pointer`.
base::Result<nlohmann::json> MergeSchemas(const nlohmann::json& a, const nlohmann::json& b,
                                          const std::string& pointer);

}  // namespace k3::structured
