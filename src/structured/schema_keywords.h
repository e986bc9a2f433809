// JSON Schema keywords for the schema compiler's files (not part of the library's interface):
// which keywords exist and are supported, error spelling, and the values of the keywords that
// set scalars of a SchemaNode (type, counts, numeric bounds, enum/const).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "structured/schema.h"

namespace k3::structured {

// Annotations: carried by a schema, never constraining a value.
const std::set<std::string>& AnnotationKeywords();
// Standard keywords the matcher does not enforce: an error, not a silent pass.
const std::set<std::string>& UnsupportedKeywords();
// A JSON Schema keyword, supported or not (anything else is an extension and ignored).
bool IsSchemaKeyword(const std::string& key);

// What kinds of keyword an object schema carries.
struct KeywordKinds {
  bool alternatives = false;  // anyOf or oneOf
  bool constraints = false;   // any other non-annotation keyword
};
// INVALID_ARGUMENT naming the first unsupported keyword of `s` (keys in document order).
base::Result<KeywordKinds> ClassifyKeywords(const nlohmann::json& s, const std::string& pointer);

// INVALID_ARGUMENT "schema <pointer>: <what>" ("#" for the document root).
base::Status SchemaError(const std::string& pointer, const std::string& what);
// A JSON pointer token: "~" -> "~0", "/" -> "~1".
std::string PointerToken(const std::string& key);

size_t CountCodePoints(const std::string& utf8);
// The TypeBits of a "type" name (0 for an unknown name); "number" admits integers.
uint8_t TypeBit(const std::string& name);
// The TypeBits a literal value has.
uint8_t LiteralType(const nlohmann::json& v);

// The TypeBits "type" allows (one name or a list); kAllTypes without "type".
base::Result<uint8_t> ParseTypes(const nlohmann::json& s, const std::string& pointer);
// A non-negative integer keyword (minLength, maxItems, ...), or `fallback` when absent.
base::Result<int64_t> CountKeyword(const nlohmann::json& s, const char* key,
                                   const std::string& pointer, int64_t fallback);
// minimum / exclusiveMinimum / maximum / exclusiveMaximum into node's bounds: the tighter bound
// wins, at equal values the exclusive one; a bound must be finite and within 1e18.
base::Status CompileNumbers(const nlohmann::json& s, const std::string& pointer, SchemaNode* node);
// The values enum and const leave (enum ∩ {const}); nullopt when the schema has neither.
using LiteralValues = std::optional<std::vector<nlohmann::json>>;
base::Result<LiteralValues> FindLiterals(const nlohmann::json& s, const std::string& pointer);
// pattern / format (schema_strings.cc): sets node->string_dfa to a new automaton of *dfas (with
// the node's minLength / maxLength folded in and cleared); unknown formats are annotations.
base::Status CompileStringAutomaton(const nlohmann::json& s, const std::string& pointer,
                                    SchemaNode* node, std::vector<StringDfa>* dfas);

}  // namespace k3::structured
