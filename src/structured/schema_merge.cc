#include "structured/schema_merge.h"

#include <algorithm>
#include <set>
#include <vector>

#include "structured/schema_keywords.h"

namespace k3::structured {

using Json = nlohmann::json;

base::Result<Json> MergeSchemas(const Json& a, const Json& b, const std::string& pointer) {
  if (!a.is_object() || !b.is_object()) return SchemaError(pointer, "must be an object schema");
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
          K3_ASSIGN_OR_RETURN(
              mine[name],
              MergeSchemas(mine[name], sub, pointer + "/properties/" + PointerToken(name)));
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
      return SchemaError(
          pointer + "/" + PointerToken(key),
          "cannot combine '" + key + "' with a different '" + key + "' beside the anyOf");
    }
  }
  return out;
}

}  // namespace k3::structured
