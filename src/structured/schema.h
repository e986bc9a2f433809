// JSON Schema -> SchemaGraph: the schema resolved into numbered nodes (refs become edges, so
// recursion is a cycle), checked against what the matcher can enforce. A keyword the matcher
// cannot enforce is an error naming it (the API answers 400), never silently ignored.
//
// Supported (Moonshot's MFJS subset and more): type (one or a list), properties, required,
// additionalProperties (bool or schema; default true), items, prefixItems, enum, const, anyOf,
// oneOf (when the alternatives have disjoint types, so "exactly one" equals "any"), allOf
// (merged), $defs/definitions + $ref (in-document, recursion allowed), minLength/maxLength,
// pattern and format (string automata, string_dfa.h), minItems/maxItems,
// minProperties/maxProperties, minimum/maximum, exclusiveMinimum/exclusiveMaximum (numbers),
// and the annotations title, description, default,
// examples, $schema, $id, $comment, deprecated, readOnly, writeOnly. Keywords outside JSON Schema
// are ignored, as the standard says.
//
// Every node keeps only values that can be finished: alternatives, optional properties and items
// that have no finite instance are pruned, and a schema with no finite instance at the root (or a
// required property without one) is an error.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "structured/string_dfa.h"

namespace k3::structured {

// JSON types as bits. kNumber admits integers too; kInteger alone means no fraction or exponent.
enum TypeBits : uint8_t {
  kObject = 1,
  kArray = 2,
  kString = 4,
  kInteger = 8,
  kNumber = 16,
  kBoolean = 32,
  kNull = 64,
  kAllTypes = 127,
};

// Node indices with a fixed meaning in every graph.
inline constexpr int32_t kAnyNode = 0;  // any JSON value (the schema `true` or `{}`)

struct Property {
  std::string key;  // the canonical JSON spelling of the name, without the quotes
  int32_t node = kAnyNode;
  bool required = false;
};

struct SchemaNode {
  uint8_t types = kAllTypes;
  // enum / const: the value is one of these canonical compact JSON texts (sorted, unique);
  // `types` is then only what the literals are.
  bool has_literals = false;
  std::vector<std::string> literals;
  // anyOf / oneOf: the value matches one of these nodes; nothing else of this node applies.
  std::vector<int32_t> any_of;
  // object: properties sorted by key; additional = node for other keys, or -1 for none.
  std::vector<Property> properties;
  int32_t additional = kAnyNode;
  int required_count = 0;
  // minProperties / maxProperties (-1: unbounded); closed_twin: this node with no additional
  // keys, for the key frame once the keys left must all be required ones (-1 if not needed).
  int64_t min_properties = 0;
  int64_t max_properties = -1;
  int32_t closed_twin = -1;
  // array: prefix_items[i] for item i (prefixItems), items for the rest
  std::vector<int32_t> prefix_items;
  int32_t items = kAnyNode;
  int64_t min_items = 0;
  int64_t max_items = -1;  // -1: unbounded
  // string (code points)
  int64_t min_length = 0;
  int64_t max_length = -1;
  // pattern / format: index into SchemaGraph::dfas of the automaton the decoded characters follow
  // (minLength / maxLength folded in, both then 0 / -1), or -1.
  int32_t string_dfa = -1;
  // number bounds (only with has_min / has_max)
  bool has_min = false, has_max = false;
  bool exclusive_min = false, exclusive_max = false;
  double minimum = 0, maximum = 0;

  int32_t ItemNode(int64_t index) const {
    return index < static_cast<int64_t>(prefix_items.size()) ? prefix_items[index] : items;
  }
  bool CountsProperties() const { return min_properties > 0 || max_properties >= 0; }
  bool IsPlainString() const { return min_length == 0 && max_length < 0 && string_dfa < 0; }
  bool HasBounds() const { return has_min || has_max; }
};

struct SchemaGraph {
  std::vector<SchemaNode> nodes;  // nodes[kAnyNode] is the any-value node
  std::vector<StringDfa> dfas;    // string automata of the nodes (SchemaNode::string_dfa)
  int32_t root = kAnyNode;
};

// The canonical spelling of a JSON string's contents (no quotes): what Python's
// json.dumps(..., ensure_ascii=False) writes. Object keys and string literals must be spelled this
// way, so that one value has one spelling and a key cannot pose as another.
std::string CanonicalJsonString(std::string_view utf8);
// True if some object key in JSON `text` is spelled with a \u escape that CanonicalJsonString
// would not write (anything but \u0000-\u001f): the matcher accepts one spelling per key, so such
// texts are outside its input domain (tests and benchmarks skip them).
bool HasNonCanonicalKey(std::string_view text);
// Canonical compact JSON text of a value (keys in the given order, numbers as nlohmann prints
// them after integral floats lose nothing).
std::string CanonicalJson(const nlohmann::json& value);

struct SchemaOptions {
  // For generation: an object that declares properties and says nothing about
  // additionalProperties gets no undeclared keys (as OpenAI's strict mode and XGrammar's
  // strict_mode do). Every output is still valid under the schema's own default (true); the
  // model just cannot invent keys. Explicit additionalProperties (true or a schema) and objects
  // without declared properties stay open. Off: exact validation semantics.
  bool closed_objects = false;
};

// INVALID_ARGUMENT naming the keyword and its JSON pointer on anything unsupported or
// unsatisfiable.
base::Result<SchemaGraph> CompileSchema(const nlohmann::json& schema,
                                        const SchemaOptions& options = {});
// A graph whose root accepts any JSON object (response_format json_object).
SchemaGraph AnyObjectGraph();
// Adds `schema` as a new root-like node of an existing graph (tools share one graph); returns
// its node index.
base::Result<int32_t> AddSchema(const nlohmann::json& schema, SchemaGraph* graph,
                                const SchemaOptions& options = {});
// A node of `graph` whose values are those of `node` restricted to the JSON types in `types`
// (-1 if none remain). May add nodes.
int32_t RestrictTypes(SchemaGraph* graph, int32_t node, uint8_t types);

}  // namespace k3::structured
