// pattern and format on a string schema: one StringDfa (their intersection, with minLength /
// maxLength folded in when either is there).
#include "structured/schema_keywords.h"

namespace k3::structured {

using Json = nlohmann::json;

base::Status CompileStringAutomaton(const Json& s, const std::string& pointer, SchemaNode* node,
                                    std::vector<StringDfa>* dfas) {
  std::vector<StringDfa> parts;
  if (auto it = s.find("pattern"); it != s.end()) {
    // A list only where allOf / anyOf merging met two different patterns (all must match).
    const Json list = it->is_array() ? *it : Json::array({*it});
    for (const Json& p : list) {
      if (!p.is_string()) return SchemaError(pointer + "/pattern", "must be a string");
      auto dfa = CompilePattern(p.get<std::string>());
      if (!dfa.ok()) return SchemaError(pointer + "/pattern", dfa.status().message());
      parts.push_back(std::move(dfa).value());
    }
  }
  if (auto it = s.find("format"); it != s.end()) {
    const Json list = it->is_array() ? *it : Json::array({*it});
    for (const Json& f : list) {
      if (!f.is_string()) return SchemaError(pointer + "/format", "must be a string");
      auto dfa = CompileFormat(f.get<std::string>());
      if (dfa.status().code() == base::StatusCode::kNotFound) continue;  // an annotation
      if (!dfa.ok()) return SchemaError(pointer + "/format", dfa.status().message());
      parts.push_back(std::move(dfa).value());
    }
  }
  if (parts.empty()) return base::Status::Ok();
  if (node->min_length > 0 || node->max_length >= 0) {
    parts.push_back(LengthDfa(node->min_length, node->max_length));
  }
  StringDfa all = std::move(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    auto both = IntersectDfa(all, parts[i]);
    if (!both.ok()) return SchemaError(pointer, both.status().message());
    all = std::move(both).value();
  }
  node->min_length = 0;
  node->max_length = -1;
  node->string_dfa = static_cast<int32_t>(dfas->size());
  dfas->push_back(std::move(all));
  return base::Status::Ok();
}

}  // namespace k3::structured
