#include "structured/schema_compiler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "structured/schema_keywords.h"
#include "structured/schema_merge.h"

namespace k3::structured {
namespace {

using Json = nlohmann::json;

// A oneOf node whose alternatives must be checked for disjoint types once the graph is complete.
struct PendingOneOf {
  int32_t node;
  std::string pointer;
};

// The anyOf or oneOf list of `s` (which has one of them): its key and the non-empty array.
struct AlternativeList {
  const char* key;
  const Json* list;
};

base::Result<AlternativeList> FindAlternatives(const Json& s, const std::string& pointer) {
  const bool one_of = s.contains("oneOf");
  if (one_of && s.contains("anyOf")) return SchemaError(pointer, "both anyOf and oneOf");
  const char* key = one_of ? "oneOf" : "anyOf";
  const Json& list = s.at(key);
  if (!list.is_array() || list.empty()) {
    return SchemaError(pointer + "/" + key, "must be a non-empty array of schemas");
  }
  return AlternativeList{key, &list};
}

// The JSON types of the values `node` allows, through its alternatives (32 levels deep at most).
uint8_t EffectiveTypes(const SchemaGraph& g, int32_t node, int depth = 0) {
  const SchemaNode& n = g.nodes[node];
  if (n.any_of.empty() || depth > 32) return n.types;
  uint8_t out = 0;
  for (int32_t alt : n.any_of) out |= EffectiveTypes(g, alt, depth + 1);
  return out;
}

// oneOf is compiled as anyOf, which is exact only when no value matches two alternatives.
base::Status CheckOneOfDisjoint(const SchemaGraph& graph, const PendingOneOf& pending) {
  const std::vector<int32_t>& alts = graph.nodes[pending.node].any_of;
  for (size_t i = 0; i < alts.size(); ++i) {
    for (size_t j = i + 1; j < alts.size(); ++j) {
      if (EffectiveTypes(graph, alts[i]) & EffectiveTypes(graph, alts[j])) {
        return SchemaError(pending.pointer, "alternatives " + std::to_string(i) + " and " +
                                                std::to_string(j) +
                                                " share a JSON type; oneOf is supported only when "
                                                "each alternative has its own types");
      }
    }
  }
  return base::Status::Ok();
}

// Compiles one document. Nodes are memoised by JSON pointer, so every ref target becomes one
// node and a recursive schema a cycle; merged alternatives get synthetic pointers ("...&").
class Compiler {
 public:
  Compiler(const Json& document, SchemaGraph* graph, const SchemaOptions& options)
      : doc_(document), g_(*graph), options_(options) {}

  base::Result<int32_t> Compile(const Json& s, const std::string& pointer);
  const std::vector<PendingOneOf>& pending_one_of() const { return pending_one_of_; }

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
  base::Result<int32_t> CompileNested(const Json& s, const std::string& pointer);
  base::Result<const Json*> Resolve(const std::string& ref, const std::string& pointer) const;
  base::Status CompileBody(const Json& s, const std::string& pointer, int32_t index);
  base::Status CompileAlternatives(const Json& s, const std::string& pointer, int32_t index);
  base::Status CompileMergedAlternatives(const Json& s, const std::string& pointer, int32_t index);
  void SetAlternatives(int32_t index, std::vector<int32_t> alternatives, const char* key,
                       const std::string& pointer);
  base::Status CompileObject(const Json& s, const std::string& pointer, int32_t index);
  void ApplyLiterals(const std::vector<Json>& values, int32_t index);
  int32_t ConstNode(const Json& value);

  const Json& doc_;
  SchemaGraph& g_;
  SchemaOptions options_;
  std::map<std::string, int32_t> memo_;  // pointer -> node; -2 while a ref is being resolved
  int32_t never_ = -1;                   // the node of the schema `false`, made on first use
  int depth_ = 0;                        // Compile calls in progress
  std::vector<PendingOneOf> pending_one_of_;
};

base::Result<const Json*> Compiler::Resolve(const std::string& ref,
                                            const std::string& pointer) const {
  if (ref.empty() || ref[0] != '#') {
    return SchemaError(pointer,
                       "$ref \"" + ref + "\" is not in this document (only \"#...\" refs)");
  }
  try {
    const Json& target = doc_.at(Json::json_pointer(ref.substr(1)));
    return &target;
  } catch (const std::exception&) {
    return SchemaError(pointer, "$ref \"" + ref + "\" does not resolve");
  }
}

// Nesting beyond this is refused, so no schema can exhaust the stack: deep documents, and a $ref
// back to an enclosing schema inside an anyOf/oneOf beside other keywords (every merged
// alternative is a new schema, so such a cycle never reaches the memo).
constexpr int kMaxNesting = 200;

base::Result<int32_t> Compiler::Compile(const Json& s, const std::string& pointer) {
  if (depth_ >= kMaxNesting) {
    return SchemaError(pointer, "nests more than " + std::to_string(kMaxNesting) +
                                    " levels deep (a $ref inside anyOf/oneOf that leads back "
                                    "to an enclosing schema does this)");
  }
  ++depth_;
  base::Result<int32_t> node = CompileNested(s, pointer);
  --depth_;
  return node;
}

base::Result<int32_t> Compiler::CompileNested(const Json& s, const std::string& pointer) {
  if (s.is_boolean()) return s.get<bool>() ? base::Result<int32_t>(kAnyNode) : Never();
  if (!s.is_object()) return SchemaError(pointer, "a schema must be an object or a boolean");
  auto memo = memo_.find(pointer);
  if (memo != memo_.end()) return memo->second;
  if (auto ref = s.find("$ref"); ref != s.end()) {
    if (!ref->is_string()) return SchemaError(pointer + "/$ref", "must be a string");
    for (const auto& [key, value] : s.items()) {
      if (key != "$ref" && !AnnotationKeywords().count(key) && IsSchemaKeyword(key)) {
        return SchemaError(pointer + "/" + PointerToken(key),
                           "keyword '" + key + "' beside $ref is not supported");
      }
    }
    K3_ASSIGN_OR_RETURN(const Json* target, Resolve(ref->get<std::string>(), pointer));
    const std::string target_pointer =
        ref->get<std::string>().substr(1);  // Resolve: starts with '#'
    // Refs are memoised by their target, so a cycle of refs resolves to one node.
    memo_[pointer] = -2;  // in progress: a ref cycle with no schema in between
    auto it = memo_.find(target_pointer);
    if (it != memo_.end() && it->second == -2)
      return SchemaError(pointer, "$ref cycle without a schema");
    K3_ASSIGN_OR_RETURN(int32_t node, Compile(*target, target_pointer));
    memo_[pointer] = node;
    return node;
  }
  const int32_t index = NewNode();
  memo_[pointer] = index;
  K3_RETURN_IF_ERROR(CompileBody(s, pointer, index));
  return index;
}

base::Status Compiler::CompileBody(const Json& s, const std::string& pointer, int32_t index) {
  if (s.contains("allOf")) {
    K3_ASSIGN_OR_RETURN(
        const std::optional<Json> merged,
        MergeAllOf(s, pointer, [this](const std::string& ref, const std::string& at) {
          return Resolve(ref, at);
        }));
    if (!merged) {  // a part is `false`
      g_.nodes[index].types = 0;
      return base::Status::Ok();
    }
    return CompileBody(*merged, pointer + "/allOf&", index);
  }
  K3_ASSIGN_OR_RETURN(const KeywordKinds kinds, ClassifyKeywords(s, pointer));
  if (kinds.alternatives && kinds.constraints) return CompileMergedAlternatives(s, pointer, index);
  if (kinds.alternatives) return CompileAlternatives(s, pointer, index);
  K3_ASSIGN_OR_RETURN(const uint8_t types, ParseTypes(s, pointer));
  {
    SchemaNode& node = g_.nodes[index];
    node.types = types;
    K3_ASSIGN_OR_RETURN(node.min_length, CountKeyword(s, "minLength", pointer, 0));
    K3_ASSIGN_OR_RETURN(node.max_length, CountKeyword(s, "maxLength", pointer, -1));
    K3_ASSIGN_OR_RETURN(node.min_items, CountKeyword(s, "minItems", pointer, 0));
    K3_ASSIGN_OR_RETURN(node.max_items, CountKeyword(s, "maxItems", pointer, -1));
    K3_ASSIGN_OR_RETURN(node.min_properties, CountKeyword(s, "minProperties", pointer, 0));
    K3_ASSIGN_OR_RETURN(node.max_properties, CountKeyword(s, "maxProperties", pointer, -1));
    K3_RETURN_IF_ERROR(CompileNumbers(s, pointer, &node));
    if (node.types & kString)
      K3_RETURN_IF_ERROR(CompileStringAutomaton(s, pointer, &node, &g_.dfas));
  }
  if (auto it = s.find("items"); it != s.end()) {
    if (it->is_array()) {
      return SchemaError(pointer + "/items", "tuple form (an array) is not supported");
    }
    K3_ASSIGN_OR_RETURN(int32_t items, Compile(*it, pointer + "/items"));
    g_.nodes[index].items = items;
  }
  if (auto it = s.find("prefixItems"); it != s.end()) {
    if (!it->is_array()) return SchemaError(pointer + "/prefixItems", "must be a list of schemas");
    for (size_t i = 0; i < it->size(); ++i) {
      K3_ASSIGN_OR_RETURN(int32_t item,
                          Compile((*it)[i], pointer + "/prefixItems/" + std::to_string(i)));
      g_.nodes[index].prefix_items.push_back(item);
    }
  }
  K3_RETURN_IF_ERROR(CompileObject(s, pointer, index));
  K3_ASSIGN_OR_RETURN(const LiteralValues literals, FindLiterals(s, pointer));
  if (literals) ApplyLiterals(*literals, index);
  return base::Status::Ok();
}

// anyOf / oneOf alone (beside annotations only): each alternative compiled as it stands.
base::Status Compiler::CompileAlternatives(const Json& s, const std::string& pointer,
                                           int32_t index) {
  K3_ASSIGN_OR_RETURN(const AlternativeList found, FindAlternatives(s, pointer));
  std::vector<int32_t> alternatives;
  for (size_t i = 0; i < found.list->size(); ++i) {
    K3_ASSIGN_OR_RETURN(int32_t alt, Compile((*found.list)[i],
                                             pointer + "/" + found.key + "/" + std::to_string(i)));
    alternatives.push_back(alt);
  }
  SetAlternatives(index, std::move(alternatives), found.key, pointer);
  return base::Status::Ok();
}

// {"type": "object", "anyOf": [A, B]} means anyOf: [A ∧ siblings, B ∧ siblings]: each
// alternative is merged with the keywords beside it (refs of the alternative resolved first).
base::Status Compiler::CompileMergedAlternatives(const Json& s, const std::string& pointer,
                                                 int32_t index) {
  K3_ASSIGN_OR_RETURN(const AlternativeList found, FindAlternatives(s, pointer));
  Json siblings = s;
  siblings.erase(found.key);
  std::vector<int32_t> alternatives;
  for (size_t i = 0; i < found.list->size(); ++i) {
    const std::string alt_pointer = pointer + "/" + found.key + "/" + std::to_string(i);
    const Json* alt = &(*found.list)[i];
    for (int hops = 0; alt->is_object() && alt->contains("$ref") && hops < 16; ++hops) {
      const Json& ref = alt->at("$ref");
      if (!ref.is_string()) return SchemaError(alt_pointer + "/$ref", "must be a string");
      K3_ASSIGN_OR_RETURN(alt, Resolve(ref.get<std::string>(), alt_pointer));
    }
    if (alt->is_boolean()) {
      if (!alt->get<bool>()) continue;
      alt = &siblings;
    }
    K3_ASSIGN_OR_RETURN(Json merged, MergeSchemas(siblings, *alt, alt_pointer));
    // A synthetic pointer: the merged schema is not in the document, but its refs are.
    K3_ASSIGN_OR_RETURN(int32_t node, Compile(merged, alt_pointer + "&"));
    alternatives.push_back(node);
  }
  if (alternatives.empty()) {
    return SchemaError(pointer + "/" + found.key, "no alternative can match");
  }
  SetAlternatives(index, std::move(alternatives), found.key, pointer);
  return base::Status::Ok();
}

void Compiler::SetAlternatives(int32_t index, std::vector<int32_t> alternatives, const char* key,
                               const std::string& pointer) {
  g_.nodes[index].any_of = std::move(alternatives);
  g_.nodes[index].types = 0;
  if (std::string_view(key) == "oneOf") pending_one_of_.push_back({index, pointer + "/oneOf"});
}

base::Status Compiler::CompileObject(const Json& s, const std::string& pointer, int32_t index) {
  std::map<std::string, Property> props;  // by canonical key
  if (auto it = s.find("properties"); it != s.end()) {
    if (!it->is_object()) return SchemaError(pointer + "/properties", "must be an object");
    for (const auto& [name, sub] : it->items()) {
      K3_ASSIGN_OR_RETURN(int32_t child,
                          Compile(sub, pointer + "/properties/" + PointerToken(name)));
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
    if (!it->is_array()) return SchemaError(pointer + "/required", "must be an array of strings");
    for (const Json& name : *it) {
      if (!name.is_string())
        return SchemaError(pointer + "/required", "must be an array of strings");
      const std::string key = CanonicalJsonString(name.get<std::string>());
      auto p = props.find(key);
      if (p == props.end()) {
        if (additional < 0) {
          return SchemaError(pointer + "/required",
                             "requires \"" + name.get<std::string>() +
                                 "\", which additionalProperties: false forbids");
        }
        p = props.emplace(key, Property{key, additional, false}).first;
      }
      p->second.required = true;
    }
  }
  if (props.size() > 64) return SchemaError(pointer + "/properties", "more than 64 properties");
  SchemaNode& node = g_.nodes[index];
  node.additional = additional;
  for (auto& [key, prop] : props) {
    node.required_count += prop.required;
    node.properties.push_back(std::move(prop));
  }
  return base::Status::Ok();
}

// enum / const: object values become nodes (keys in any order, as a validator compares them);
// the rest are literal texts, filtered by the node's types and string lengths.
void Compiler::ApplyLiterals(const std::vector<Json>& values, int32_t index) {
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
      if (node.string_dfa >= 0 &&
          !g_.dfas[node.string_dfa].Matches(DecodeUtf8(v.get_ref<const std::string&>()))) {
        continue;
      }
    }
    texts.insert(CanonicalJson(v));
    literal_types |= LiteralType(v);
  }
  node.has_literals = true;
  node.literals.assign(texts.begin(), texts.end());
  node.types = literal_types;
  if (objects.empty()) return;
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

base::Result<int32_t> CompileInto(const nlohmann::json& schema, SchemaGraph* graph,
                                  const SchemaOptions& options) {
  Compiler compiler(schema, graph, options);
  K3_ASSIGN_OR_RETURN(int32_t root, compiler.Compile(schema, ""));
  for (const PendingOneOf& pending : compiler.pending_one_of()) {
    K3_RETURN_IF_ERROR(CheckOneOfDisjoint(*graph, pending));
  }
  return root;
}

}  // namespace k3::structured
