#include "structured/schema_keywords.h"

#include <algorithm>
#include <cmath>

namespace k3::structured {

using Json = nlohmann::json;

namespace {

// One numeric bound keyword folded into (has, value, exclusive): the tighter bound wins, and at
// equal values the exclusive one.
struct BoundKeyword {
  const char* key;
  bool is_min;
  bool exclusive;
};

base::Status FoldBound(const Json& s, const std::string& pointer, BoundKeyword k, bool* has,
                       double* value, bool* exclusive) {
  auto it = s.find(k.key);
  if (it == s.end()) return base::Status::Ok();
  if (it->is_boolean() && k.exclusive) {
    return SchemaError(pointer + "/" + k.key,
                       "boolean form (draft 4) is not supported; use a number");
  }
  if (!it->is_number()) return SchemaError(pointer + "/" + k.key, "must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || std::fabs(v) > 1e18) {
    return SchemaError(pointer + "/" + k.key, "must be a finite number within 1e18");
  }
  const bool tighter =
      !*has || (k.is_min ? v > *value : v < *value) || (v == *value && k.exclusive);
  if (tighter) {
    *has = true;
    *value = v;
    *exclusive = k.exclusive;
  }
  return base::Status::Ok();
}

}  // namespace

const std::set<std::string>& AnnotationKeywords() {
  static const std::set<std::string> k = {"title",    "description", "default",  "examples",
                                          "$schema",  "$id",         "$comment", "deprecated",
                                          "readOnly", "writeOnly",   "$defs",    "definitions"};
  return k;
}

// Standard keywords the matcher does not enforce: an error, not a silent pass.
const std::set<std::string>& UnsupportedKeywords() {
  static const std::set<std::string> k = {"not",
                                          "if",
                                          "then",
                                          "else",
                                          "multipleOf",
                                          "patternProperties",
                                          "uniqueItems",
                                          "propertyNames",
                                          "contains",
                                          "minContains",
                                          "maxContains",
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
                                          "exclusiveMaximum",
                                          "pattern",
                                          "format",
                                          "minProperties",
                                          "maxProperties",
                                          "prefixItems",
                                          "allOf"};
  return k.count(key) || UnsupportedKeywords().count(key);
}

base::Result<KeywordKinds> ClassifyKeywords(const Json& s, const std::string& pointer) {
  KeywordKinds kinds;
  for (const auto& [key, value] : s.items()) {
    if (UnsupportedKeywords().count(key)) {
      return SchemaError(pointer + "/" + PointerToken(key),
                         "keyword '" + key + "' is not supported");
    }
    if (key == "anyOf" || key == "oneOf") {
      kinds.alternatives = true;
    } else if (!AnnotationKeywords().count(key)) {
      kinds.constraints = true;
    }
  }
  return kinds;
}

size_t CountCodePoints(const std::string& utf8) {
  size_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

base::Status SchemaError(const std::string& pointer, const std::string& what) {
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

std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
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

base::Result<uint8_t> ParseTypes(const Json& s, const std::string& pointer) {
  auto it = s.find("type");
  if (it == s.end()) return static_cast<uint8_t>(kAllTypes);
  std::vector<Json> names = it->is_array() ? it->get<std::vector<Json>>() : std::vector<Json>{*it};
  uint8_t types = 0;
  for (const Json& name : names) {
    const uint8_t bit = name.is_string() ? TypeBit(name.get<std::string>()) : 0;
    if (bit == 0) return SchemaError(pointer + "/type", "unknown type " + name.dump());
    types |= bit;
  }
  return types;
}

base::Result<int64_t> CountKeyword(const Json& s, const char* key, const std::string& pointer,
                                   int64_t fallback) {
  auto it = s.find(key);
  if (it == s.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return SchemaError(pointer + "/" + key, "must be a non-negative integer");
  }
  return it->get<int64_t>();
}

// In this order (the first error wins): minimum, exclusiveMinimum, maximum, exclusiveMaximum.
base::Status CompileNumbers(const Json& s, const std::string& pointer, SchemaNode* node) {
  K3_RETURN_IF_ERROR(FoldBound(s, pointer, {"minimum", true, false}, &node->has_min, &node->minimum,
                               &node->exclusive_min));
  K3_RETURN_IF_ERROR(FoldBound(s, pointer, {"exclusiveMinimum", true, true}, &node->has_min,
                               &node->minimum, &node->exclusive_min));
  K3_RETURN_IF_ERROR(FoldBound(s, pointer, {"maximum", false, false}, &node->has_max,
                               &node->maximum, &node->exclusive_max));
  return FoldBound(s, pointer, {"exclusiveMaximum", false, true}, &node->has_max, &node->maximum,
                   &node->exclusive_max);
}

base::Result<LiteralValues> FindLiterals(const Json& s, const std::string& pointer) {
  LiteralValues values;
  if (auto it = s.find("enum"); it != s.end()) {
    if (!it->is_array()) return SchemaError(pointer + "/enum", "must be an array");
    values = it->get<std::vector<Json>>();
  }
  if (auto it = s.find("const"); it != s.end()) {
    if (values) {
      const bool listed = std::find(values->begin(), values->end(), *it) != values->end();
      values = listed ? std::vector<Json>{*it} : std::vector<Json>{};
    } else {
      values = std::vector<Json>{*it};
    }
  }
  return values;
}
}  // namespace k3::structured
