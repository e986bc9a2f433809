#include "verify/json_schema_lite.h"

#include <cmath>
#include <regex>

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr int kMaxRefDepth = 64;  // a $ref cycle that consumes no input stops here

struct Validator {
  const json& root;

  std::string At(const std::string& path, const std::string& what) const {
    return (path.empty() ? "/" : path) + ": " + what;
  }

  static bool HasType(const json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    if (type == "number") return value.is_number();
    if (type == "integer") {
      if (value.is_number_integer()) return true;
      if (!value.is_number_float()) return false;
      const double d = value.get<double>();
      return std::isfinite(d) && std::floor(d) == d;
    }
    return false;
  }

  const json* Resolve(const std::string& ref) const {
    if (ref == "#") return &root;
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      const std::string p = prefix;
      if (!ref.starts_with(p)) continue;
      const std::string section = p.substr(2, p.size() - 3);
      const std::string name = ref.substr(p.size());
      if (root.contains(section) && root[section].contains(name)) return &root[section][name];
    }
    return nullptr;
  }

  static size_t CodePoints(const std::string& s) {
    size_t count = 0;
    for (unsigned char c : s) count += (c & 0xC0) != 0x80;
    return count;
  }

  std::string CheckType(const json& schema, const json& value, const std::string& path) const {
    if (!schema.contains("type")) return "";
    const json& type = schema["type"];
    if (type.is_string()) {
      if (!HasType(value, type.get<std::string>())) {
        return At(path, "expected type " + type.get<std::string>() + ", got " + value.dump());
      }
    } else if (type.is_array()) {
      for (const auto& t : type) {
        if (t.is_string() && HasType(value, t.get<std::string>())) return "";
      }
      return At(path, "expected one of types " + type.dump() + ", got " + value.dump());
    }
    return "";
  }

  std::string CheckObject(const json& schema, const json& value, const std::string& path,
                          int depth) const {
    if (!value.is_object()) return "";
    if (schema.contains("required") && schema["required"].is_array()) {
      for (const auto& key : schema["required"]) {
        if (key.is_string() && !value.contains(key.get<std::string>())) {
          return At(path, "missing required property '" + key.get<std::string>() + "'");
        }
      }
    }
    const json empty = json::object();
    const json& properties = schema.contains("properties") && schema["properties"].is_object()
                                 ? schema["properties"]
                                 : empty;
    for (const auto& [key, item] : value.items()) {
      const std::string item_path = path + "/" + key;
      if (properties.contains(key)) {
        if (auto e = Check(properties[key], item, item_path, depth); !e.empty()) return e;
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) {
          return At(path, "property '" + key + "' is not allowed (additionalProperties false)");
        }
        if (extra.is_object()) {
          if (auto e = Check(extra, item, item_path, depth); !e.empty()) return e;
        }
      }
    }
    return "";
  }

  std::string CheckArray(const json& schema, const json& value, const std::string& path,
                         int depth) const {
    if (!value.is_array()) return "";
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>()) {
      return At(path, "fewer than minItems " + schema["minItems"].dump() + " items");
    }
    if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<size_t>()) {
      return At(path, "more than maxItems " + schema["maxItems"].dump() + " items");
    }
    if (schema.contains("items") && schema["items"].is_object()) {
      for (size_t idx = 0; idx < value.size(); ++idx) {
        auto e = Check(schema["items"], value[idx], path + "/" + std::to_string(idx), depth);
        if (!e.empty()) return e;
      }
    }
    return "";
  }

  std::string CheckScalar(const json& schema, const json& value, const std::string& path) const {
    if (value.is_string()) {
      const size_t length = CodePoints(value.get<std::string>());
      if (schema.contains("minLength") && length < schema["minLength"].get<size_t>()) {
        return At(path, "shorter than minLength " + schema["minLength"].dump());
      }
      if (schema.contains("maxLength") && length > schema["maxLength"].get<size_t>()) {
        return At(path, "longer than maxLength " + schema["maxLength"].dump());
      }
      // pattern: an unanchored ECMA-262 search (std::regex's ECMAScript grammar, over the UTF-8
      // bytes: exact for ASCII patterns, which is what the checks use).
      if (schema.contains("pattern") && schema["pattern"].is_string()) {
        try {
          const std::regex re(schema["pattern"].get<std::string>(), std::regex::ECMAScript);
          if (!std::regex_search(value.get<std::string>(), re)) {
            return At(path, "does not match pattern " + schema["pattern"].dump());
          }
        } catch (const std::regex_error&) {
          return At(path, "pattern " + schema["pattern"].dump() + " does not compile here");
        }
      }
    }
    if (value.is_number()) {
      const double d = value.get<double>();
      auto bound = [&](const char* key) {
        return schema.contains(key) && schema[key].is_number() ? &schema[key] : nullptr;
      };
      if (auto* b = bound("minimum"); b && d < b->get<double>()) return At(path, "below minimum");
      if (auto* b = bound("maximum"); b && d > b->get<double>()) return At(path, "above maximum");
      if (auto* b = bound("exclusiveMinimum"); b && d <= b->get<double>()) {
        return At(path, "not above exclusiveMinimum");
      }
      if (auto* b = bound("exclusiveMaximum"); b && d >= b->get<double>()) {
        return At(path, "not below exclusiveMaximum");
      }
    }
    if (schema.contains("enum") && schema["enum"].is_array()) {
      bool found = false;
      for (const auto& option : schema["enum"]) found = found || option == value;
      if (!found) return At(path, value.dump() + " is not in enum " + schema["enum"].dump());
    }
    if (schema.contains("const") && schema["const"] != value) {
      return At(path, value.dump() + " is not const " + schema["const"].dump());
    }
    return "";
  }

  std::string CheckAlternatives(const json& schema, const json& value, const std::string& path,
                                int depth) const {
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!schema.contains(key) || !schema[key].is_array()) continue;
      int matched = 0;
      for (const auto& option : schema[key]) matched += Check(option, value, path, depth).empty();
      if (matched == 0) return At(path, std::string("matches no ") + key + " alternative");
      if (std::string(key) == "oneOf" && matched > 1) {
        return At(path, "matches " + std::to_string(matched) + " oneOf alternatives");
      }
    }
    return "";
  }

  std::string Check(const json& schema, const json& value, const std::string& path,
                    int depth) const {
    if (schema.is_boolean()) return schema.get<bool>() ? "" : At(path, "schema false");
    if (!schema.is_object()) return "";
    if (schema.contains("$ref") && schema["$ref"].is_string()) {
      const json* target = Resolve(schema["$ref"].get<std::string>());
      if (target == nullptr) return At(path, "unresolvable $ref " + schema["$ref"].dump());
      if (depth >= kMaxRefDepth) return At(path, "$ref nesting deeper than 64");
      if (auto e = Check(*target, value, path, depth + 1); !e.empty()) return e;
    }
    for (auto e : {CheckType(schema, value, path), CheckScalar(schema, value, path),
                   CheckObject(schema, value, path, depth), CheckArray(schema, value, path, depth),
                   CheckAlternatives(schema, value, path, depth)}) {
      if (!e.empty()) return e;
    }
    return "";
  }
};

}  // namespace

std::string ValidateSchema(const nlohmann::json& schema, const nlohmann::json& value) {
  // The schemas are the verifier's own, but a malformed keyword value (a string minItems) makes
  // nlohmann throw; report it instead of letting it escape.
  try {
    return Validator{schema}.Check(schema, value, "", 0);
  } catch (const nlohmann::json::exception& e) {
    return std::string("schema not understood: ") + e.what();
  }
}

bool IsCompactJson(const std::string& text) {
  bool in_string = false;
  for (size_t idx = 0; idx < text.size(); ++idx) {
    const char c = text[idx];
    if (in_string) {
      if (c == '\\') {
        ++idx;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      return false;
    }
  }
  return true;
}

}  // namespace k3::verify
