// Internals of the TypeScript tool encoder (tool_ts.h). The Python original parses each schema
// into a tree of typed nodes first and renders the tree afterwards; some errors happen only while
// parsing and others only while rendering (and a few nodes are parsed but never rendered), so
// this port keeps the same two phases: TsParser builds TsType trees, the Render* functions print
// them. Every function returns nullptr / std::nullopt / false exactly where Python raises.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace k3::text::chat {

using TsJson = nlohmann::ordered_json;

// The member `key` of a JSON object, or null when absent.
inline const TsJson* FindMember(const TsJson& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// Python truthiness of a JSON value (None, False, 0, 0.0, "", [], {} are false).
bool PyTruthy(const TsJson& json);
// Appends Python's str(x) of the value x that json.loads would give; false where impossible.
bool AppendPyStr(const TsJson& json, std::string* out);
// Appends json.dumps(x, ensure_ascii=False); false where impossible.
bool AppendPyJsonDumps(const TsJson& json, std::string* out);
// A Python str's characters (code points), each as its UTF-8 bytes.
std::vector<std::string> PyChars(const std::string& text);

// `for x in value` over the value json.loads gives: a list's elements, a dict's keys, a str's
// characters. Calls fn(const TsJson&) -> bool for each and stops at the first false. Returns false
// where Python raises (numbers, booleans and None are not iterable) or fn returned false.
template <typename Fn>
bool ForEachPyItem(const TsJson& value, Fn&& fn) {
  if (value.is_array()) {
    for (const TsJson& item : value) {
      if (!fn(item)) return false;
    }
    return true;
  }
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!fn(TsJson(it.key()))) return false;
    }
    return true;
  }
  if (value.is_string()) {
    for (const std::string& c : PyChars(value.get_ref<const std::string&>())) {
      if (!fn(TsJson(c))) return false;
    }
    return true;
  }
  return false;
}

// The `$defs` registry: name -> schema. A name keeps the position of its first registration and
// takes the value of its latest one (Python dict assignment). Schemas point into the input.
class TsRegistry {
 public:
  // register_definitions(defs): false where Python raises (a truthy non-object).
  bool Register(const TsJson& defs);
  const TsJson* Find(const std::string& name) const;
  const std::vector<std::pair<std::string, const TsJson*>>& entries() const { return entries_; }

  bool has_self_ref = false;  // a "$ref": "#" was resolved

 private:
  std::vector<std::pair<std::string, const TsJson*>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

enum class TsKind { kScalar, kObject, kArray, kEnum, kAnyOf, kUnion, kRef };
// An object's additionalProperties: absent/null, true, false, a schema, or anything else (which
// raises only when the object is rendered).
enum class TsExtra { kNone, kTrue, kFalse, kType, kInvalid };

struct TsType;

// A property of an object (Python's _Parameter).
struct TsParam {
  std::string name;
  std::unique_ptr<TsType> type;
  bool optional = true;
  const TsJson* default_value = nullptr;  // nullptr or JSON null: no "Default:" line
};

struct TsType {
  TsKind kind = TsKind::kScalar;
  const TsJson* description = nullptr;  // the schema's "description" member; nullptr = ""
  // Constraint members in schema order (only the keys the node kind allows).
  std::vector<std::pair<std::string, const TsJson*>> constraints;
  TsJson scalar;                                      // kScalar: the type, any JSON value
  std::vector<TsParam> properties;                    // kObject, in schema order
  TsExtra extra = TsExtra::kNone;                     // kObject
  std::unique_ptr<TsType> extra_type;                 // kObject with TsExtra::kType
  std::unique_ptr<TsType> item;                       // kArray
  const TsJson* enum_values = nullptr;                // kEnum: the "enum" member
  std::vector<std::unique_ptr<TsType>> alternatives;  // kAnyOf
  std::vector<std::string> union_names;               // kUnion: mapped type names
  std::string ref_name;                               // kRef
};

// Python's _parse_parameter_type and the _ParameterType* constructors, sharing one registry.
class TsParser {
 public:
  explicit TsParser(TsRegistry* registry) : registry_(registry) {}

  // _parse_parameter_type(schema, registry); nullptr where Python raises.
  std::unique_ptr<TsType> Parse(const TsJson& schema, int depth);
  // _ParameterTypeObject(schema, registry), which accepts any object (even without "type").
  std::unique_ptr<TsType> ParseObject(const TsJson& schema, int depth);

 private:
  std::unique_ptr<TsType> ParseArray(const TsJson& schema, int depth);
  std::unique_ptr<TsType> ParseEnum(const TsJson& schema);
  std::unique_ptr<TsType> ParseAnyOf(const TsJson& schema, int depth);
  std::unique_ptr<TsType> ParseUnion(const TsJson& schema);
  std::unique_ptr<TsType> ParseRef(const TsJson& schema);
  std::unique_ptr<TsType> ParseScalar(const TsJson& type, const TsJson* schema);
  bool ParseProperties(const TsJson& schema, TsType* object, int depth);

  TsRegistry* registry_;
};

// A rendered type. Python returns the raw "type" value for an unknown scalar type (e.g. 5 or
// null): f-strings print it with str(), but str.join and `+` raise, so is_str records which.
struct TsText {
  std::string text;
  bool is_str = true;
};

// _format_description(description, indent): false where description is not a str.
bool FormatDescription(const TsJson& description, const std::string& indent, std::string* out);
// type.to_typescript_style(indent); std::nullopt where Python raises.
std::optional<TsText> RenderType(const TsType& type, const std::string& indent);
// _Parameter.to_typescript_style(indent).
std::optional<std::string> RenderParam(const TsParam& param, const std::string& indent);

}  // namespace k3::text::chat
