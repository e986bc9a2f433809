#include "structured/schema.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace k3::structured {
namespace {

using Json = nlohmann::json;

const std::set<std::string>& AnnotationKeywords() {
  static const std::set<std::string> k = {"title",    "description", "default",  "examples",
                                          "$schema",  "$id",         "$comment", "deprecated",
                                          "readOnly", "writeOnly",   "$defs",    "definitions"};
  return k;
}

// Standard keywords the matcher does not enforce: an error, not a silent pass.
const std::set<std::string>& UnsupportedKeywords() {
  static const std::set<std::string> k = {"allOf",
                                          "not",
                                          "if",
                                          "then",
                                          "else",
                                          "pattern",
                                          "format",
                                          "multipleOf",
                                          "prefixItems",
                                          "patternProperties",
                                          "uniqueItems",
                                          "propertyNames",
                                          "contains",
                                          "minContains",
                                          "maxContains",
                                          "minProperties",
                                          "maxProperties",
                                          "dependentRequired",
                                          "dependentSchemas",
                                          "dependencies",
                                          "unevaluatedItems",
                                          "unevaluatedProperties",
                                          "additionalItems",
                                          "contentEncoding",
                                          "contentMediaType",
                                          "contentSchema",
                                          "$anchor",
                                          "$dynamicRef",
                                          "$dynamicAnchor",
                                          "$recursiveRef",
                                          "$recursiveAnchor",
                                          "$vocabulary"};
  return k;
}

bool IsSchemaKeyword(const std::string& key) {
  static const std::set<std::string> k = {"type",
                                          "properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "enum",
                                          "const",
                                          "anyOf",
                                          "oneOf",
                                          "minLength",
                                          "maxLength",
                                          "minItems",
                                          "maxItems",
                                          "minimum",
                                          "maximum",
                                          "exclusiveMinimum",
                                          "exclusiveMaximum"};
  return k.count(key) || UnsupportedKeywords().count(key);
}

size_t CountCodePoints(const std::string& utf8) {
  size_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

base::Status Bad(const std::string& pointer, const std::string& what) {
  return base::InvalidArgument("schema " + (pointer.empty() ? std::string("#") : pointer) + ": " +
                               what);
}

uint8_t TypeBit(const std::string& name) {
  if (name == "object") return kObject;
  if (name == "array") return kArray;
  if (name == "string") return kString;
  if (name == "integer") return kInteger;
  if (name == "number") return kNumber | kInteger;
  if (name == "boolean") return kBoolean;
  if (name == "null") return kNull;
  return 0;
}

uint8_t LiteralType(const Json& v) {
  if (v.is_object()) return kObject;
  if (v.is_array()) return kArray;
  if (v.is_string()) return kString;
  if (v.is_number_integer()) return kInteger | kNumber;
  if (v.is_number()) return kNumber;
  if (v.is_boolean()) return kBoolean;
  return kNull;
}

std::string Escape(const std::string& token) {  // JSON pointer token
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

class Compiler {
 public:
  Compiler(const Json& document, SchemaGraph* graph, const SchemaOptions& options)
      : doc_(document), g_(*graph), options_(options) {}

  base::Result<int32_t> Compile(const Json& s, const std::string& pointer);

 private:
  base::Result<int32_t> Never() {
    if (never_ < 0) {
      never_ = NewNode();
      g_.nodes[never_].types = 0;
    }
    return never_;
  }
  int32_t NewNode() {
    g_.nodes.emplace_back();
    return static_cast<int32_t>(g_.nodes.size() - 1);
  }
  base::Result<const Json*> Resolve(const std::string& ref, const std::string& pointer) const;
  base::Status CompileBody(const Json& s, const std::string& pointer, int32_t index);
  base::Status CompileMergedAlternatives(const Json& s, const std::string& pointer, int32_t index);
  int32_t ConstNode(const Json& value);
  base::Result<Json> Merge(const Json& a, const Json& b, const std::string& pointer) const;
  base::Status CompileObject(const Json& s, const std::string& pointer, int32_t index);
  base::Status CompileNumbers(const Json& s, const std::string& pointer, SchemaNode* node);
  base::Result<int64_t> Count(const Json& s, const char* key, const std::string& pointer,
                              int64_t fallback) const;

  const Json& doc_;
  SchemaGraph& g_;
  SchemaOptions options_;
  std::map<std::string, int32_t> memo_;
  int32_t never_ = -1;

 public:
  struct PendingOneOf {
    int32_t node;
    std::string pointer;
  };
  std::vector<PendingOneOf> pending_one_of_;
};

base::Result<const Json*> Compiler::Resolve(const std::string& ref,
                                            const std::string& pointer) const {
  if (ref.empty() || ref[0] != '#') {
    return Bad(pointer, "$ref \"" + ref + "\" is not in this document (only \"#...\" refs)");
  }
  try {
    const Json& target = doc_.at(Json::json_pointer(ref.substr(1)));
    return &target;
  } catch (const std::exception&) {
    return Bad(pointer, "$ref \"" + ref + "\" does not resolve");
  }
}

// {"type": "object", "anyOf": [A, B]} means anyOf: [A ∧ siblings, B ∧ siblings]: each
// alternative is merged with the keywords beside it (refs of the alternative resolved first).
base::Status Compiler::CompileMergedAlternatives(const Json& s, const std::string& pointer,
                                                 int32_t index) {
  const bool one_of = s.contains("oneOf");
  if (one_of && s.contains("anyOf")) return Bad(pointer, "both anyOf and oneOf");
  const char* key = one_of ? "oneOf" : "anyOf";
  const Json& list = s.at(key);
  if (!list.is_array() || list.empty()) {
    return Bad(pointer + "/" + key, "must be a non-empty array of schemas");
  }
  Json siblings = s;
  siblings.erase(key);
  std::vector<int32_t> alternatives;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string alt_pointer = pointer + "/" + key + "/" + std::to_string(i);
    const Json* alt = &list[i];
    for (int hops = 0; alt->is_object() && alt->contains("$ref") && hops < 16; ++hops) {
      K3_ASSIGN_OR_RETURN(alt, Resolve(alt->at("$ref").get<std::string>(), alt_pointer));
    }
    if (alt->is_boolean()) {
      if (!alt->get<bool>()) continue;
      alt = &siblings;
    }
    K3_ASSIGN_OR_RETURN(Json merged, Merge(siblings, *alt, alt_pointer));
    // A synthetic pointer: the merged schema is not in the document, but its refs are.
    K3_ASSIGN_OR_RETURN(int32_t node, Compile(merged, alt_pointer + "&"));
    alternatives.push_back(node);
  }
  if (alternatives.empty()) return Bad(pointer + "/" + key, "no alternative can match");
  g_.nodes[index].any_of = std::move(alternatives);
  g_.nodes[index].types = 0;
  if (one_of) pending_one_of_.push_back({index, pointer + "/oneOf"});
  return base::Status::Ok();
}

base::Result<Json> Compiler::Merge(const Json& a, const Json& b, const std::string& pointer) const {
  if (!a.is_object() || !b.is_object()) return Bad(pointer, "must be an object schema");
  Json out = a;
  for (const auto& [key, value] : b.items()) {
    if (!out.contains(key) || out[key] == value || AnnotationKeywords().count(key)) {
      if (!out.contains(key)) out[key] = value;
      continue;
    }
    Json& mine = out[key];
    if (key == "type") {
      std::set<std::string> x, y, both;
      for (const Json& t : mine.is_array() ? mine : Json::array({mine}))
        x.insert(t.get<std::string>());
      for (const Json& t : value.is_array() ? value : Json::array({value}))
        y.insert(t.get<std::string>());
      for (const std::string& t : x) {
        if (y.count(t) || (t == "integer" && y.count("number"))) both.insert(t);
      }
      for (const std::string& t : y) {
        if (t == "integer" && x.count("number")) both.insert(t);
      }
      mine = Json(std::vector<std::string>(both.begin(), both.end()));
    } else if (key == "required") {
      std::set<std::string> names;
      for (const Json& n : mine) names.insert(n.get<std::string>());
      for (const Json& n : value) names.insert(n.get<std::string>());
      mine = Json(std::vector<std::string>(names.begin(), names.end()));
    } else if (key == "properties") {
      for (const auto& [name, sub] : value.items()) {
        if (!mine.contains(name)) {
          mine[name] = sub;
        } else if (mine[name] != sub) {
          K3_ASSIGN_OR_RETURN(mine[name],
                              Merge(mine[name], sub, pointer + "/properties/" + Escape(name)));
        }
      }
    } else if (key == "minLength" || key == "minItems" || key == "minimum" ||
               key == "exclusiveMinimum") {
      mine = std::max(mine.get<double>(), value.get<double>());
    } else if (key == "maxLength" || key == "maxItems" || key == "maximum" ||
               key == "exclusiveMaximum") {
      mine = std::min(mine.get<double>(), value.get<double>());
    } else if (key == "enum") {
      Json common = Json::array();
      for (const Json& v : mine) {
        if (std::find(value.begin(), value.end(), v) != value.end()) common.push_back(v);
      }
      mine = common;
    } else {
      return Bad(pointer + "/" + Escape(key),
                 "cannot combine '" + key + "' with a different '" + key + "' beside the anyOf");
    }
  }
  return out;
}

base::Result<int32_t> Compiler::Compile(const Json& s, const std::string& pointer) {
  if (s.is_boolean()) return s.get<bool>() ? base::Result<int32_t>(kAnyNode) : Never();
  if (!s.is_object()) return Bad(pointer, "a schema must be an object or a boolean");
  auto memo = memo_.find(pointer);
  if (memo != memo_.end()) return memo->second;
  if (auto ref = s.find("$ref"); ref != s.end()) {
    if (!ref->is_string()) return Bad(pointer + "/$ref", "must be a string");
    for (const auto& [key, value] : s.items()) {
      if (key != "$ref" && !AnnotationKeywords().count(key) && IsSchemaKeyword(key)) {
        return Bad(pointer + "/" + Escape(key),
                   "keyword '" + key + "' beside $ref is not supported");
      }
    }
    const std::string target_pointer = ref->get<std::string>().substr(1);
    K3_ASSIGN_OR_RETURN(const Json* target, Resolve(ref->get<std::string>(), pointer));
    // Refs are memoised by their target, so a cycle of refs resolves to one node.
    memo_[pointer] = -2;  // in progress: a ref cycle with no schema in between
    auto it = memo_.find(target_pointer);
    if (it != memo_.end() && it->second == -2) return Bad(pointer, "$ref cycle without a schema");
    K3_ASSIGN_OR_RETURN(int32_t node, Compile(*target, target_pointer));
    memo_[pointer] = node;
    return node;
  }
  const int32_t index = NewNode();
  memo_[pointer] = index;
  K3_RETURN_IF_ERROR(CompileBody(s, pointer, index));
  return index;
}

base::Result<int64_t> Compiler::Count(const Json& s, const char* key, const std::string& pointer,
                                      int64_t fallback) const {
  auto it = s.find(key);
  if (it == s.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return Bad(pointer + "/" + key, "must be a non-negative integer");
  }
  return it->get<int64_t>();
}

base::Status Compiler::CompileNumbers(const Json& s, const std::string& pointer, SchemaNode* node) {
  // The tighter of minimum / exclusiveMinimum (maximum / exclusiveMaximum) wins.
  auto number = [&](const char* key, bool is_min, bool* has, double* value, bool* exclusive,
                    bool exclusive_value) -> base::Status {
    auto it = s.find(key);
    if (it == s.end()) return base::Status::Ok();
    if (it->is_boolean() && exclusive_value) {
      return Bad(pointer + "/" + key, "boolean form (draft 4) is not supported; use a number");
    }
    if (!it->is_number()) return Bad(pointer + "/" + key, "must be a number");
    const double v = it->get<double>();
    if (!std::isfinite(v) || std::fabs(v) > 1e18) {
      return Bad(pointer + "/" + key, "must be a finite number within 1e18");
    }
    const bool tighter =
        !*has || (is_min ? v > *value : v < *value) || (v == *value && exclusive_value);
    if (tighter) {
      *has = true;
      *value = v;
      *exclusive = exclusive_value;
    }
    return base::Status::Ok();
  };
  K3_RETURN_IF_ERROR(
      number("minimum", true, &node->has_min, &node->minimum, &node->exclusive_min, false));
  K3_RETURN_IF_ERROR(
      number("exclusiveMinimum", true, &node->has_min, &node->minimum, &node->exclusive_min, true));
  K3_RETURN_IF_ERROR(
      number("maximum", false, &node->has_max, &node->maximum, &node->exclusive_max, false));
  K3_RETURN_IF_ERROR(number("exclusiveMaximum", false, &node->has_max, &node->maximum,
                            &node->exclusive_max, true));
  return base::Status::Ok();
}
base::Status Compiler::CompileObject(const Json& s, const std::string& pointer, int32_t index) {
  std::map<std::string, Property> props;  // by canonical key
  if (auto it = s.find("properties"); it != s.end()) {
    if (!it->is_object()) return Bad(pointer + "/properties", "must be an object");
    for (const auto& [name, sub] : it->items()) {
      K3_ASSIGN_OR_RETURN(int32_t child, Compile(sub, pointer + "/properties/" + Escape(name)));
      props[CanonicalJsonString(name)] = Property{CanonicalJsonString(name), child, false};
    }
  }
  int32_t additional = kAnyNode;
  if (options_.closed_objects && !props.empty() && !s.contains("additionalProperties")) {
    additional = -1;
  }
  if (auto it = s.find("additionalProperties"); it != s.end()) {
    if (it->is_boolean() && !it->get<bool>()) {
      additional = -1;
    } else {
      K3_ASSIGN_OR_RETURN(additional, Compile(*it, pointer + "/additionalProperties"));
    }
  }
  if (auto it = s.find("required"); it != s.end()) {
    if (!it->is_array()) return Bad(pointer + "/required", "must be an array of strings");
    for (const Json& name : *it) {
      if (!name.is_string()) return Bad(pointer + "/required", "must be an array of strings");
      const std::string key = CanonicalJsonString(name.get<std::string>());
      auto p = props.find(key);
      if (p == props.end()) {
        if (additional < 0) {
          return Bad(pointer + "/required", "requires \"" + name.get<std::string>() +
                                                "\", which additionalProperties: false forbids");
        }
        p = props.emplace(key, Property{key, additional, false}).first;
      }
      p->second.required = true;
    }
  }
  if (props.size() > 64) return Bad(pointer + "/properties", "more than 64 properties");
  SchemaNode& node = g_.nodes[index];
  node.additional = additional;
  for (auto& [key, prop] : props) {
    node.required_count += prop.required;
    node.properties.push_back(std::move(prop));
  }
  return base::Status::Ok();
}

base::Status Compiler::CompileBody(const Json& s, const std::string& pointer, int32_t index) {
  bool has_alternatives = false;
  bool has_constraints = false;
  for (const auto& [key, value] : s.items()) {
    if (UnsupportedKeywords().count(key)) {
      return Bad(pointer + "/" + Escape(key), "keyword '" + key + "' is not supported");
    }
    if (key == "anyOf" || key == "oneOf") {
      has_alternatives = true;
    } else if (!AnnotationKeywords().count(key)) {
      has_constraints = true;
    }
  }
  if (has_alternatives && has_constraints) return CompileMergedAlternatives(s, pointer, index);
  if (has_alternatives) {
    if (s.contains("anyOf") && s.contains("oneOf")) return Bad(pointer, "both anyOf and oneOf");
    const bool one_of = s.contains("oneOf");
    const char* key = one_of ? "oneOf" : "anyOf";
    const Json& list = s.at(key);
    if (!list.is_array() || list.empty()) {
      return Bad(pointer + "/" + key, "must be a non-empty array of schemas");
    }
    std::vector<int32_t> alternatives;
    for (size_t i = 0; i < list.size(); ++i) {
      K3_ASSIGN_OR_RETURN(int32_t alt,
                          Compile(list[i], pointer + "/" + key + "/" + std::to_string(i)));
      alternatives.push_back(alt);
    }
    g_.nodes[index].any_of = std::move(alternatives);
    g_.nodes[index].types = 0;
    if (one_of) pending_one_of_.push_back({index, pointer + "/oneOf"});
    return base::Status::Ok();
  }
  uint8_t types = kAllTypes;
  if (auto it = s.find("type"); it != s.end()) {
    std::vector<Json> names =
        it->is_array() ? it->get<std::vector<Json>>() : std::vector<Json>{*it};
    types = 0;
    for (const Json& name : names) {
      const uint8_t bit = name.is_string() ? TypeBit(name.get<std::string>()) : 0;
      if (bit == 0) return Bad(pointer + "/type", "unknown type " + name.dump());
      types |= bit;
    }
  }
  {
    SchemaNode& node = g_.nodes[index];
    node.types = types;
    K3_ASSIGN_OR_RETURN(node.min_length, Count(s, "minLength", pointer, 0));
    K3_ASSIGN_OR_RETURN(node.max_length, Count(s, "maxLength", pointer, -1));
    K3_ASSIGN_OR_RETURN(node.min_items, Count(s, "minItems", pointer, 0));
    K3_ASSIGN_OR_RETURN(node.max_items, Count(s, "maxItems", pointer, -1));
    K3_RETURN_IF_ERROR(CompileNumbers(s, pointer, &node));
  }
  if (auto it = s.find("items"); it != s.end()) {
    if (it->is_array()) return Bad(pointer + "/items", "tuple form (an array) is not supported");
    K3_ASSIGN_OR_RETURN(int32_t items, Compile(*it, pointer + "/items"));
    g_.nodes[index].items = items;
  }
  K3_RETURN_IF_ERROR(CompileObject(s, pointer, index));
  std::vector<Json> values;
  bool has_literals = false;
  if (auto it = s.find("enum"); it != s.end()) {
    if (!it->is_array()) return Bad(pointer + "/enum", "must be an array");
    values = it->get<std::vector<Json>>();
    has_literals = true;
  }
  if (auto it = s.find("const"); it != s.end()) {
    if (has_literals) {
      const bool listed = std::find(values.begin(), values.end(), *it) != values.end();
      values = listed ? std::vector<Json>{*it} : std::vector<Json>{};
    } else {
      values = {*it};
    }
    has_literals = true;
  }
  if (has_literals) {
    // Object values become nodes (keys in any order, as a validator compares them); the rest are
    // literal texts.
    std::vector<int32_t> objects;
    for (const Json& v : values) {
      if (v.is_object() && (g_.nodes[index].types & kObject)) objects.push_back(ConstNode(v));
    }
    SchemaNode& node = g_.nodes[index];
    std::set<std::string> texts;
    uint8_t literal_types = 0;
    for (const Json& v : values) {
      if (v.is_object() || !(LiteralType(v) & node.types)) continue;
      if (v.is_string()) {
        const int64_t n = static_cast<int64_t>(CountCodePoints(v.get_ref<const std::string&>()));
        if (n < node.min_length || (node.max_length >= 0 && n > node.max_length)) continue;
      }
      texts.insert(CanonicalJson(v));
      literal_types |= LiteralType(v);
    }
    node.has_literals = true;
    node.literals.assign(texts.begin(), texts.end());
    node.types = literal_types;
    if (!objects.empty()) {
      if (!texts.empty()) {
        const int32_t literals = NewNode();
        g_.nodes[literals] = g_.nodes[index];
        objects.insert(objects.begin(), literals);
      }
      SchemaNode& merged = g_.nodes[index];
      merged.has_literals = false;
      merged.literals.clear();
      merged.types = 0;
      merged.any_of = std::move(objects);
    }
  }
  return base::Status::Ok();
}

int32_t Compiler::ConstNode(const Json& v) {
  const int32_t index = NewNode();
  if (!v.is_object()) {
    // Arrays are matched as their text (objects inside them with sorted keys: a documented limit).
    g_.nodes[index].has_literals = true;
    g_.nodes[index].literals = {CanonicalJson(v)};
    g_.nodes[index].types = LiteralType(v);
    return index;
  }
  std::vector<Property> props;
  for (const auto& [key, value] : v.items()) {
    props.push_back(Property{CanonicalJsonString(key), ConstNode(value), true});
  }
  std::sort(props.begin(), props.end(),
            [](const Property& x, const Property& y) { return x.key < y.key; });
  SchemaNode& node = g_.nodes[index];
  node.types = kObject;
  node.additional = -1;
  node.required_count = static_cast<int>(props.size());
  node.properties = std::move(props);
  return index;
}

}  // namespace

namespace {

// The closed integer range a node's bounds allow (as long doubles: exact up to 2^64).
bool IntegerRangeNonEmpty(const SchemaNode& n) {
  long double lo = -1e30L, hi = 1e30L;
  if (n.has_min)
    lo = n.exclusive_min ? std::floor((long double)n.minimum) + 1
                         : std::ceil((long double)n.minimum);
  if (n.has_max)
    hi = n.exclusive_max ? std::ceil((long double)n.maximum) - 1
                         : std::floor((long double)n.maximum);
  return lo <= hi;
}

bool NumberRangeNonEmpty(const SchemaNode& n) {
  if (!n.has_min || !n.has_max) return true;
  if (n.minimum < n.maximum) return true;
  return n.minimum == n.maximum && !n.exclusive_min && !n.exclusive_max;
}

// The type bits of `node` that have a finite instance, given which nodes are known productive.
uint8_t ProductiveTypes(const SchemaGraph& g, const SchemaNode& n, const std::vector<char>& prod) {
  uint8_t out = 0;
  if (n.types & kString) {
    if (n.max_length < 0 || n.min_length <= n.max_length) out |= kString;
  }
  if (n.types & kNumber) {
    if (NumberRangeNonEmpty(n)) out |= kNumber | kInteger;
  } else if (n.types & kInteger) {
    if (IntegerRangeNonEmpty(n)) out |= kInteger;
  }
  out |= n.types & (kBoolean | kNull);
  if (n.types & kArray) {
    const bool sizes = n.max_items < 0 || n.min_items <= n.max_items;
    if (sizes && (n.min_items == 0 || prod[n.items])) out |= kArray;
  }
  if (n.types & kObject) {
    bool ok = true;
    for (const Property& p : n.properties) ok = ok && (!p.required || prod[p.node]);
    if (ok) out |= kObject;
  }
  (void)g;
  return out;
}

bool NodeProductive(const SchemaGraph& g, const SchemaNode& n, const std::vector<char>& prod) {
  if (n.has_literals) return !n.literals.empty();
  if (!n.any_of.empty() || n.types == 0) {
    for (int32_t alt : n.any_of) {
      if (prod[alt]) return true;
    }
    return false;
  }
  return ProductiveTypes(g, n, prod) != 0;
}

// Least fixpoint of "has a finite instance", then every edge to a node without one is cut.
base::Status PruneUnproductive(SchemaGraph* graph) {
  SchemaGraph& g = *graph;
  std::vector<char> prod(g.nodes.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!prod[i] && NodeProductive(g, g.nodes[i], prod)) prod[i] = changed = true;
    }
  }
  for (SchemaNode& n : g.nodes) {
    if (n.has_literals) continue;
    std::erase_if(n.any_of, [&](int32_t alt) { return !prod[alt]; });
    if (!n.any_of.empty()) continue;
    n.types = ProductiveTypes(g, n, prod);
    std::erase_if(n.properties, [&](const Property& p) { return !p.required && !prod[p.node]; });
    n.required_count = 0;
    for (const Property& p : n.properties) n.required_count += p.required;
    if (n.additional >= 0 && !prod[n.additional]) n.additional = -1;
    if (!prod[n.items]) n.max_items = 0;
  }
  if (!prod[g.root]) return base::InvalidArgument("schema has no finite instance");
  return base::Status::Ok();
}

uint8_t EffectiveTypes(const SchemaGraph& g, int32_t node, int depth = 0) {
  const SchemaNode& n = g.nodes[node];
  if (n.any_of.empty() || depth > 32) return n.types;
  uint8_t out = 0;
  for (int32_t alt : n.any_of) out |= EffectiveTypes(g, alt, depth + 1);
  return out;
}

uint8_t LiteralTextType(const std::string& text) {
  switch (text[0]) {
    case '{':
      return kObject;
    case '[':
      return kArray;
    case '"':
      return kString;
    case 't':
    case 'f':
      return kBoolean;
    case 'n':
      return kNull;
    default:
      return text.find_first_of(".eE") == std::string::npos ? kInteger | kNumber : kNumber;
  }
}

base::Result<int32_t> CompileInto(const nlohmann::json& schema, SchemaGraph* graph,
                                  const SchemaOptions& options) {
  Compiler compiler(schema, graph, options);
  K3_ASSIGN_OR_RETURN(int32_t root, compiler.Compile(schema, ""));
  for (const auto& pending : compiler.pending_one_of_) {
    const std::vector<int32_t>& alts = graph->nodes[pending.node].any_of;
    for (size_t i = 0; i < alts.size(); ++i) {
      for (size_t j = i + 1; j < alts.size(); ++j) {
        if (EffectiveTypes(*graph, alts[i]) & EffectiveTypes(*graph, alts[j])) {
          return Bad(pending.pointer, "alternatives " + std::to_string(i) + " and " +
                                          std::to_string(j) +
                                          " share a JSON type; oneOf is supported only when "
                                          "each alternative has its own types");
        }
      }
    }
  }
  return root;
}

}  // namespace

std::string CanonicalJsonString(std::string_view utf8) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(utf8.size());
  for (unsigned char c : utf8) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string CanonicalJson(const nlohmann::json& value) { return value.dump(); }

bool HasNonCanonicalKey(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    size_t j = i + 1;
    bool escaped_u = false;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] != '\\') continue;
      if (j + 5 < text.size() && text[j + 1] == 'u' && text.compare(j + 2, 3, "000") != 0 &&
          text.compare(j + 2, 3, "001") != 0) {
        escaped_u = true;
      }
      ++j;
    }
    if (escaped_u && j + 1 < text.size() && text[j + 1] == ':') return true;
    i = j;
  }
  return false;
}

base::Result<SchemaGraph> CompileSchema(const nlohmann::json& schema,
                                        const SchemaOptions& options) {
  SchemaGraph graph;
  graph.nodes.emplace_back();  // kAnyNode
  K3_ASSIGN_OR_RETURN(graph.root, CompileInto(schema, &graph, options));
  K3_RETURN_IF_ERROR(PruneUnproductive(&graph));
  return graph;
}

SchemaGraph AnyObjectGraph() {
  SchemaGraph graph;
  graph.nodes.emplace_back();
  graph.nodes.emplace_back();
  graph.nodes[1].types = kObject;
  graph.root = 1;
  return graph;
}

base::Result<int32_t> AddSchema(const nlohmann::json& schema, SchemaGraph* graph,
                                const SchemaOptions& options) {
  if (graph->nodes.empty()) graph->nodes.emplace_back();
  K3_ASSIGN_OR_RETURN(int32_t node, CompileInto(schema, graph, options));
  const int32_t saved_root = graph->root;
  graph->root = node;
  base::Status status = PruneUnproductive(graph);
  graph->root = saved_root;
  K3_RETURN_IF_ERROR(status);
  return node;
}

int32_t RestrictTypes(SchemaGraph* graph, int32_t node, uint8_t types) {
  SchemaNode copy = graph->nodes[node];
  if (!copy.any_of.empty()) {
    std::vector<int32_t> alts;
    for (int32_t alt : copy.any_of) {
      const int32_t restricted = RestrictTypes(graph, alt, types);
      if (restricted >= 0) alts.push_back(restricted);
    }
    if (alts.empty()) return -1;
    copy.any_of = std::move(alts);
  } else if (copy.has_literals) {
    std::erase_if(copy.literals,
                  [&](const std::string& t) { return !(LiteralTextType(t) & types); });
    if (copy.literals.empty()) return -1;
  } else {
    copy.types &= types;
    if (copy.types == 0) return -1;
    if (copy.types == graph->nodes[node].types) return node;
  }
  graph->nodes.push_back(std::move(copy));
  return static_cast<int32_t>(graph->nodes.size() - 1);
}

}  // namespace k3::structured
