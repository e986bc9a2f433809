#include "structured/schema_merge.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "structured/schema_keywords.h"

namespace k3::structured {

using Json = nlohmann::json;

namespace {

// The keyword's value as the merge reads it: a type list of strings, a list of names, a number.
// User schemas reach here unchecked, so a wrong shape is an error, never an exception.
base::Status CheckMergeable(const std::string& key, const Json& value, const std::string& pointer) {
  const std::string at = pointer + "/" + PointerToken(key);
  auto all_strings = [](const Json& list) {
    return std::all_of(list.begin(), list.end(), [](const Json& v) { return v.is_string(); });
  };
  if (key == "type" && !value.is_string() && !(value.is_array() && all_strings(value))) {
    return SchemaError(at, "must be a type name or a list of type names");
  }
  if (key == "required" && !(value.is_array() && all_strings(value))) {
    return SchemaError(at, "must be a list of property names");
  }
  if (key == "properties" && !value.is_object()) return SchemaError(at, "must be an object");
  if (key == "enum" && !value.is_array()) return SchemaError(at, "must be a list");
  return base::Status::Ok();
}

bool IsLowerBound(const std::string& key) {
  return key == "minLength" || key == "minItems" || key == "minimum" || key == "exclusiveMinimum";
}
bool IsUpperBound(const std::string& key) {
  return key == "maxLength" || key == "maxItems" || key == "maximum" || key == "exclusiveMaximum";
}

}  // namespace

base::Result<Json> MergeSchemas(const Json& a, const Json& b, const std::string& pointer) {
  if (!a.is_object() || !b.is_object()) return SchemaError(pointer, "must be an object schema");
  Json out = a;
  for (const auto& [key, value] : b.items()) {
    if (!out.contains(key) || out[key] == value || AnnotationKeywords().count(key)) {
      if (!out.contains(key)) out[key] = value;
      continue;
    }
    Json& mine = out[key];
    K3_RETURN_IF_ERROR(CheckMergeable(key, mine, pointer));
    K3_RETURN_IF_ERROR(CheckMergeable(key, value, pointer));
    if ((IsLowerBound(key) || IsUpperBound(key)) && !(mine.is_number() && value.is_number())) {
      return SchemaError(pointer + "/" + PointerToken(key), "must be a number");
    }
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
          K3_ASSIGN_OR_RETURN(
              mine[name],
              MergeSchemas(mine[name], sub, pointer + "/properties/" + PointerToken(name)));
        }
      }
    } else if (IsLowerBound(key)) {
      if (value > mine) mine = value;  // keeps the JSON number's kind (a count stays an integer)
    } else if (IsUpperBound(key)) {
      if (value < mine) mine = value;
    } else if (key == "enum") {
      Json common = Json::array();
      for (const Json& v : mine) {
        if (std::find(value.begin(), value.end(), v) != value.end()) common.push_back(v);
      }
      mine = common;
    } else if (key == "pattern" || key == "format") {
      // Both must hold: a list, which the string compiler intersects.
      Json both = mine.is_array() ? mine : Json::array({mine});
      for (const Json& v : value.is_array() ? value : Json::array({value})) both.push_back(v);
      mine = both;
    } else {
      return SchemaError(
          pointer + "/" + PointerToken(key),
          "cannot combine '" + key + "' with a different '" + key + "' beside the anyOf");
    }
  }
  return out;
}

// allOf: the parts (refs resolved) merged with the keywords beside them into one schema;
// nullopt if a part is `false`. A part that limits additional properties must declare every
// property the others declare (otherwise merging would change what it allows).
base::Result<std::optional<Json>> MergeAllOf(const Json& s, const std::string& pointer,
                                             const RefResolver& resolve) {
  const Json& list = s.at("allOf");
  if (!list.is_array() || list.empty()) {
    return SchemaError(pointer + "/allOf", "must be a non-empty array of schemas");
  }
  Json merged = s;
  merged.erase("allOf");
  std::vector<const Json*> parts = {&merged};
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string part_pointer = pointer + "/allOf/" + std::to_string(i);
    const Json* part = &list[i];
    for (int hops = 0; part->is_object() && part->contains("$ref") && hops < 16; ++hops) {
      const Json& ref = part->at("$ref");
      if (!ref.is_string()) return SchemaError(part_pointer + "/$ref", "must be a string");
      K3_ASSIGN_OR_RETURN(part, resolve(ref.get<std::string>(), part_pointer));
    }
    if (part->is_boolean()) {
      if (!part->get<bool>()) return std::optional<Json>();
      continue;
    }
    if (part->is_object() && part->contains("$ref")) {
      return SchemaError(part_pointer, "a $ref chain in allOf is too long");
    }
    parts.push_back(part);
  }
  for (const Json* part : parts) {
    if (!part->is_object() || !part->contains("additionalProperties") ||
        part->at("additionalProperties") == Json(true)) {
      continue;
    }
    const Json& own = part->contains("properties") ? part->at("properties") : Json::object();
    for (const Json* other : parts) {
      if (!other->is_object() || !other->contains("properties") ||
          !other->at("properties").is_object()) {
        continue;
      }
      for (const auto& [key, value] : other->at("properties").items()) {
        if (!own.is_object() || !own.contains(key)) {
          return SchemaError(pointer + "/allOf",
                             "a part with additionalProperties does not declare '" + key +
                                 "', which another part declares (not supported)");
        }
      }
    }
  }
  Json out = Json::object();
  for (const Json* part : parts) {
    K3_ASSIGN_OR_RETURN(out, MergeSchemas(out, *part, pointer + "/allOf"));
  }
  return std::optional<Json>(std::move(out));
}

}  // namespace k3::structured
