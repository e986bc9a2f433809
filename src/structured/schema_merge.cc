#include "structured/schema_merge.h"

#include <algorithm>
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

}  // namespace k3::structured
