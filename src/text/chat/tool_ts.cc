// The TypeScript tool encoder's entry points: per-function assembly (interfaces, description,
// `type NAME = (_: {...}) => any;`) and the namespace wrapper; plus deep_sort_dict.
#include "text/chat/tool_ts.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text/chat/tool_ts_internal.h"

namespace k3::text::chat {
namespace {

std::string JoinNonEmpty(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += '\n';
    out += part;
  }
  return out;
}

// The `interface parameters {...}` written when the schema refers to itself ("$ref": "#"): the
// root's properties in schema order, without sorting and without additionalProperties.
std::optional<std::string> SelfInterface(const TsType& root) {
  std::string fields;
  for (size_t i = 0; i < root.properties.size(); ++i) {
    auto field = RenderParam(root.properties[i], "  ");
    if (!field) return std::nullopt;
    if (i > 0) fields += ",\n";
    fields += *field;
  }
  if (!fields.empty()) fields = "\n" + fields + "\n";
  return "interface parameters {" + fields + "}";
}

// One `interface NAME TYPE` per $defs entry registered while parsing the root (registry order).
// False where Python raises.
bool Interfaces(TsParser* parser, const TsRegistry& registry,
                std::vector<std::string>* interfaces) {
  auto definitions = registry.entries();  // parsing below may register more; those are skipped
  for (const auto& [name, schema] : definitions) {
    auto type = parser->Parse(*schema, 0);
    if (!type || !schema->is_object()) return false;  // .get on a bool raises
    auto text = RenderType(*type, "");
    if (!text) return false;
    std::string interface;
    const TsJson* description = FindMember(*schema, "description");
    if (description != nullptr && PyTruthy(*description)) {
      if (!FormatDescription(*description, "", &interface)) return false;
      interface += '\n';
    }
    interfaces->push_back(interface + "interface " + name + " " + text->text);
  }
  return true;
}

// _openai_function_to_typescript_style(function).
std::optional<std::string> EncodeFunction(const TsJson& function) {
  static const TsJson kEmptyObject = TsJson::object();
  const TsJson* parameters = FindMember(function, "parameters");
  if (parameters == nullptr || !PyTruthy(*parameters)) parameters = &kEmptyObject;
  TsRegistry registry;
  TsParser parser(&registry);
  auto root = parser.ParseObject(*parameters, 0);
  if (!root) return std::nullopt;

  bool self_ref = registry.has_self_ref;  // decided before the $defs are parsed
  std::vector<std::string> interfaces;
  if (self_ref) {
    auto interface = SelfInterface(*root);
    if (!interface) return std::nullopt;
    interfaces.push_back(std::move(*interface));
  }
  if (!Interfaces(&parser, registry, &interfaces)) return std::nullopt;

  std::string name;
  const TsJson* name_json = FindMember(function, "name");
  if (name_json == nullptr) {
    name = "function";
  } else if (!AppendPyStr(*name_json, &name)) {
    return std::nullopt;
  }
  std::string type_def;
  if (self_ref) {
    type_def = "type " + name + " = (_: parameters) => any;";
  } else {
    auto params = RenderType(*root, "");
    if (!params) return std::nullopt;
    type_def = "type " + name + " = (_: " + params->text + ") => any;";
  }
  std::string description;
  const TsJson* description_json = FindMember(function, "description");
  if (description_json != nullptr && PyTruthy(*description_json) &&
      !FormatDescription(*description_json, "", &description)) {
    return std::nullopt;
  }
  std::string interface_text;
  for (size_t i = 0; i < interfaces.size(); ++i) {
    if (i > 0) interface_text += '\n';
    interface_text += interfaces[i];
  }
  return JoinNonEmpty({interface_text, description, type_def});
}

}  // namespace

nlohmann::ordered_json DeepSortKeys(const nlohmann::ordered_json& json) {
  if (json.is_array()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& item : json) out.push_back(DeepSortKeys(item));
    return out;
  }
  if (!json.is_object()) return json;
  std::vector<std::pair<const std::string*, const nlohmann::ordered_json*>> members;
  for (auto it = json.begin(); it != json.end(); ++it) members.emplace_back(&it.key(), &*it);
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    return *a.first < *b.first;  // byte order of UTF-8 == code-point order
  });
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  auto& object = out.get_ref<nlohmann::ordered_json::object_t&>();
  object.reserve(members.size());
  // Keys are unique and already ordered: append without ordered_map's linear key search.
  for (const auto& [key, value] : members) object.emplace_back(*key, DeepSortKeys(*value));
  return out;
}

std::optional<std::string> EncodeToolsTypescript(const nlohmann::ordered_json& tools) {
  if (!PyTruthy(tools)) return std::string();
  if (!tools.is_array()) return std::nullopt;  // iterating a dict/str yields str: .get raises
  std::vector<std::string> functions;
  for (const TsJson& tool : tools) {
    if (!tool.is_object()) return std::nullopt;  // tool.get raises
    const TsJson* type = FindMember(tool, "type");
    if (type == nullptr || !type->is_string() ||
        type->get_ref<const std::string&>() != "function") {
      continue;  // other tool types are skipped
    }
    const TsJson* function = FindMember(tool, "function");
    if (function == nullptr || !PyTruthy(*function)) continue;
    if (!function->is_object()) return std::nullopt;  // function.get raises
    auto encoded = EncodeFunction(*function);
    if (!encoded) return std::nullopt;
    functions.push_back(std::move(*encoded));
  }
  if (functions.empty()) return std::string();
  std::string out = "# Tools\n\n## functions\nnamespace functions {\n";
  for (size_t i = 0; i < functions.size(); ++i) {
    if (i > 0) out += '\n';
    out += functions[i];
    if (out.size() > kMaxToolTsBytes) return std::nullopt;
  }
  out += "\n}\n";
  return out;
}

}  // namespace k3::text::chat
