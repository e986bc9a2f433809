// Phase one of the TypeScript tool encoder: JSON Schema -> TsType tree, following Python's
// _parse_parameter_type and the _ParameterType* constructors, including where they raise.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "text/chat/tool_ts.h"
#include "text/chat/tool_ts_internal.h"

namespace k3::text::chat {
namespace {

bool IsString(const TsJson& json, std::string_view text) {
  return json.is_string() && json.get_ref<const std::string&>() == text;
}

constexpr std::string_view kStringConstraints[] = {"maxLength", "minLength", "pattern"};
constexpr std::string_view kNumberConstraints[] = {"maximum", "minimum"};
constexpr std::string_view kArrayConstraints[] = {"minItems", "maxItems"};

// _BaseType.__init__: the description and the allowed constraint members.
std::unique_ptr<TsType> NewType(TsKind kind, const TsJson* schema,
                                std::span<const std::string_view> allowed = {}) {
  auto type = std::make_unique<TsType>();
  type->kind = kind;
  if (schema == nullptr) return type;
  type->description = FindMember(*schema, "description");
  for (auto it = schema->begin(); it != schema->end(); ++it) {
    for (std::string_view key : allowed) {
      if (it.key() == key) type->constraints.emplace_back(it.key(), &it.value());
    }
  }
  return type;
}

std::unique_ptr<TsType> AnyType() {
  auto type = NewType(TsKind::kScalar, nullptr);
  type->scalar = "any";
  return type;
}

// Whether a value passes the enum check against a declared scalar type (bool is an int).
bool EnumMemberFits(const TsJson& type, const TsJson& value) {
  if (value.is_null()) return true;
  if (IsString(type, "string")) return value.is_string();
  if (IsString(type, "number")) return value.is_number() || value.is_boolean();
  if (IsString(type, "integer")) return value.is_number_integer() || value.is_boolean();
  if (IsString(type, "boolean")) return value.is_boolean();
  return true;
}

}  // namespace

std::unique_ptr<TsType> TsParser::Parse(const TsJson& schema, int depth) {
  if (depth > kMaxToolSchemaDepth) return nullptr;  // stands in for Python's RecursionError
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return AnyType();
    auto type = NewType(TsKind::kScalar, nullptr);
    type->scalar = "null";
    return type;
  }
  if (!schema.is_object()) return nullptr;  // `"$ref" in x` / x["type"] raise or nothing matches
  if (schema.contains("$ref")) return ParseRef(schema);
  if (schema.contains("anyOf")) return ParseAnyOf(schema, depth);
  if (schema.contains("enum")) return ParseEnum(schema);
  if (const TsJson* type = FindMember(schema, "type")) {
    if (type->is_array()) return ParseUnion(schema);
    if (IsString(*type, "object")) return ParseObject(schema, depth);
    if (IsString(*type, "array")) return ParseArray(schema, depth);
    return ParseScalar(*type, &schema);
  }
  if (schema.empty()) return AnyType();
  return nullptr;  // "Invalid JSON Schema object" (oneOf, allOf, const, ...)
}

std::unique_ptr<TsType> TsParser::ParseObject(const TsJson& schema, int depth) {
  if (depth > kMaxToolSchemaDepth || !schema.is_object()) return nullptr;
  auto type = NewType(TsKind::kObject, &schema);
  if (schema.empty()) return type;
  if (const TsJson* defs = FindMember(schema, "$defs")) {
    if (!registry_->Register(*defs)) return nullptr;
  }
  if (const TsJson* extra = FindMember(schema, "additionalProperties")) {
    if (extra->is_object()) {
      type->extra_type = Parse(*extra, depth + 1);
      if (!type->extra_type) return nullptr;
      type->extra = TsExtra::kType;
    } else if (extra->is_boolean()) {
      type->extra = extra->get<bool>() ? TsExtra::kTrue : TsExtra::kFalse;
    } else if (!extra->is_null()) {
      type->extra = TsExtra::kInvalid;  // raises when rendered
    }
  }
  if (!schema.contains("properties")) return type;
  if (!ParseProperties(schema, type.get(), depth)) return nullptr;
  return type;
}

// The properties, each optional unless its name is in set(required).
bool TsParser::ParseProperties(const TsJson& schema, TsType* object, int depth) {
  const TsJson& properties = schema["properties"];
  if (!properties.is_object()) return false;  // .keys() raises
  std::unordered_set<std::string> required;
  if (const TsJson* list = FindMember(schema, "required")) {
    if (list->is_array()) {
      for (const TsJson& item : *list) {
        if (item.is_array() || item.is_object()) return false;  // unhashable
        if (item.is_string()) required.insert(item.get<std::string>());
      }
    } else if (!ForEachPyItem(*list, [&](const TsJson& item) {
                 required.insert(item.get<std::string>());  // dict keys and str characters
                 return true;
               })) {
      return false;  // set(number / bool / None) raises
    }
  }
  for (auto it = properties.begin(); it != properties.end(); ++it) {
    TsParam param;
    param.name = it.key();
    param.type = Parse(it.value(), depth + 1);
    if (!param.type) return false;
    param.optional = required.count(param.name) == 0;
    if (it.value().is_object()) param.default_value = FindMember(it.value(), "default");
    object->properties.push_back(std::move(param));
  }
  return true;
}

std::unique_ptr<TsType> TsParser::ParseArray(const TsJson& schema, int depth) {
  auto type = NewType(TsKind::kArray, &schema, kArrayConstraints);
  const TsJson* items = FindMember(schema, "items");
  type->item = (items != nullptr && PyTruthy(*items)) ? Parse(*items, depth + 1) : AnyType();
  return type->item ? std::move(type) : nullptr;
}

std::unique_ptr<TsType> TsParser::ParseEnum(const TsJson& schema) {
  auto type = NewType(TsKind::kEnum, &schema);
  type->enum_values = &schema["enum"];
  const TsJson* declared = FindMember(schema, "type");
  if (declared == nullptr) return type;  // no check; rendering iterates the values
  if (declared->is_array()) {
    if (declared->size() == 2) {
      const TsJson& first = (*declared)[0];
      const TsJson& second = (*declared)[1];
      if (!IsString(first, "null") && !IsString(second, "null")) return nullptr;
      declared = IsString(first, "null") ? &second : &first;
    } else if (declared->size() == 1) {
      declared = &(*declared)[0];
    } else {
      return nullptr;  // "Enum type ... is not supported"
    }
  }
  bool fits = ForEachPyItem(*type->enum_values,
                            [&](const TsJson& value) { return EnumMemberFits(*declared, value); });
  return fits ? std::move(type) : nullptr;
}

std::unique_ptr<TsType> TsParser::ParseAnyOf(const TsJson& schema, int depth) {
  auto type = NewType(TsKind::kAnyOf, &schema);
  bool ok = ForEachPyItem(schema["anyOf"], [&](const TsJson& item) {
    type->alternatives.push_back(Parse(item, depth + 1));
    return type->alternatives.back() != nullptr;
  });
  return ok ? std::move(type) : nullptr;
}

std::unique_ptr<TsType> TsParser::ParseUnion(const TsJson& schema) {
  auto type = NewType(TsKind::kUnion, &schema);
  for (const TsJson& name : schema["type"]) {
    if (!name.is_string()) return nullptr;  // KeyError, or TypeError for unhashables
    const std::string& text = name.get_ref<const std::string&>();
    if (text == "string" || text == "number" || text == "boolean" || text == "null") {
      type->union_names.push_back(text);
    } else if (text == "integer") {
      type->union_names.push_back("number");
    } else if (text == "object") {
      type->union_names.push_back("{}");
    } else if (text == "array") {
      type->union_names.push_back("Array<any>");
    } else {
      return nullptr;  // KeyError
    }
  }
  return type;
}

std::unique_ptr<TsType> TsParser::ParseRef(const TsJson& schema) {
  auto type = NewType(TsKind::kRef, &schema);
  const TsJson& ref = schema["$ref"];
  if (IsString(ref, "#")) {
    registry_->has_self_ref = true;
    type->ref_name = "parameters";
    return type;
  }
  if (!ref.is_string()) return nullptr;  // ref.startswith raises
  const std::string& path = ref.get_ref<const std::string&>();
  if (path.rfind("#/$defs/", 0) != 0) return nullptr;  // "Unsupported reference format"
  std::string name = path.substr(path.rfind('/') + 1);
  const TsJson* resolved = registry_->Find(name);
  if (resolved == nullptr || !resolved->is_object()) return nullptr;  // not found / .get raises
  const TsJson* self_ref = FindMember(*resolved, "$self_ref");
  type->ref_name = (self_ref != nullptr && PyTruthy(*self_ref)) ? "parameters" : name;
  return type;
}

std::unique_ptr<TsType> TsParser::ParseScalar(const TsJson& declared, const TsJson* schema) {
  std::span<const std::string_view> allowed;
  if (IsString(declared, "string")) {
    allowed = kStringConstraints;
  } else if (IsString(declared, "number") || IsString(declared, "integer")) {
    allowed = kNumberConstraints;
  }
  auto type = NewType(TsKind::kScalar, schema, allowed);
  type->scalar = declared;
  return type;
}

}  // namespace k3::text::chat
