// Merging an anyOf/oneOf alternative with the keywords beside it (not part of the library's
// interface): {"type": "object", "anyOf": [A, B]} means anyOf: [A ∧ siblings, B ∧ siblings].
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
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

// Resolves an in-document "$ref" (the compiler's), or INVALID_ARGUMENT at `pointer`.
using RefResolver = std::function<base::Result<const nlohmann::json*>(const std::string& ref,
                                                                      const std::string& pointer)>;
// allOf: the parts of `s` (refs resolved) merged with the keywords beside them into one schema;
// nullopt if a part is `false`. A part that limits additional properties must declare every
// property the other parts declare (merging would otherwise change what it allows).
base::Result<std::optional<nlohmann::json>> MergeAllOf(const nlohmann::json& s,
                                                       const std::string& pointer,
                                                       const RefResolver& resolve);

}  // namespace k3::structured
