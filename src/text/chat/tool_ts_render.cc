// Phase two of the TypeScript tool encoder: TsType tree -> text, following the Python
// to_typescript_style / format_docstring methods, including where they raise.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "text/chat/tool_ts.h"
#include "text/chat/tool_ts_internal.h"

namespace k3::text::chat {
namespace {

constexpr char kIndent[] = "  ";

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// _BaseType.format_docstring(indent): description lines, then one line of sorted constraints.
std::optional<std::string> FormatDocstring(const TsType& type, const std::string& indent) {
  std::string out;
  if (type.description != nullptr && PyTruthy(*type.description)) {
    if (!FormatDescription(*type.description, indent, &out)) return std::nullopt;
    out += '\n';
  }
  if (!type.constraints.empty()) {
    auto constraints = type.constraints;  // keys are unique, so the order is total
    std::sort(constraints.begin(), constraints.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out += indent + "// ";
    for (size_t i = 0; i < constraints.size(); ++i) {
      if (i > 0) out += ", ";
      out += constraints[i].first + ": ";
      if (!AppendPyStr(*constraints[i].second, &out)) return std::nullopt;
    }
    out += '\n';
  }
  return out;
}

// _ParameterTypeObject.to_typescript_style: required properties by name, then optional ones by
// name, then the additionalProperties index signature.
std::optional<TsText> RenderObject(const TsType& type, const std::string& indent) {
  std::vector<const TsParam*> order;
  for (const TsParam& param : type.properties) order.push_back(&param);
  std::stable_sort(order.begin(), order.end(), [](const TsParam* a, const TsParam* b) {
    if (a->optional != b->optional) return !a->optional;
    return a->name < b->name;  // byte order of UTF-8 == code-point order
  });
  std::string inner = indent + kIndent;
  std::vector<std::string> fields;
  for (const TsParam* param : order) {
    auto field = RenderParam(*param, inner);
    if (!field) return std::nullopt;
    fields.push_back(std::move(*field));
  }
  if (type.extra != TsExtra::kNone) {
    std::string value;
    if (type.extra == TsExtra::kTrue) {
      value = "any";
    } else if (type.extra == TsExtra::kFalse) {
      value = "never";
    } else if (type.extra == TsExtra::kType) {
      auto rendered = RenderType(*type.extra_type, inner);
      if (!rendered) return std::nullopt;
      value = std::move(rendered->text);
    } else {
      return std::nullopt;  // "Unknown additionalProperties"
    }
    fields.push_back(inner + "[k: string]: " + value);
  }
  if (fields.empty()) return TsText{"{}"};
  std::string text = "{\n" + Join(fields, ",\n") + "\n" + indent + "}";
  if (text.size() > kMaxToolTsBytes) return std::nullopt;
  return TsText{std::move(text)};
}

std::optional<TsText> RenderArray(const TsType& type, const std::string& indent) {
  std::string inner = indent + kIndent;
  auto docstring = FormatDocstring(*type.item, inner);
  if (!docstring) return std::nullopt;
  if (docstring->empty()) {
    auto item = RenderType(*type.item, indent);
    if (!item) return std::nullopt;
    return TsText{"Array<" + item->text + ">"};
  }
  auto item = RenderType(*type.item, inner);
  if (!item || !item->is_str) return std::nullopt;  // str + non-str raises
  return TsText{"Array<\n" + *docstring + inner + item->text + "\n" + indent + ">"};
}

std::optional<TsText> RenderEnum(const TsType& type) {
  std::vector<std::string> members;
  bool ok = ForEachPyItem(*type.enum_values, [&](const TsJson& value) {
    std::string member;
    if (value.is_string()) {
      member = "\"" + value.get_ref<const std::string&>() + "\"";  // no escaping
    } else if (!AppendPyStr(value, &member)) {
      return false;
    }
    members.push_back(std::move(member));
    return true;
  });
  if (!ok) return std::nullopt;
  return TsText{Join(members, " | ")};
}

std::optional<TsText> RenderAnyOf(const TsType& type, const std::string& indent) {
  std::vector<std::string> parts;
  for (const auto& alternative : type.alternatives) {
    auto part = RenderType(*alternative, indent);
    if (!part || !part->is_str) return std::nullopt;  // str.join of a non-str raises
    parts.push_back(std::move(part->text));
  }
  return TsText{Join(parts, " | ")};
}

std::optional<TsText> RenderScalar(const TsType& type) {
  if (!type.scalar.is_string()) {
    TsText text{"", false};
    if (!AppendPyStr(type.scalar, &text.text)) return std::nullopt;
    return text;
  }
  const std::string& name = type.scalar.get_ref<const std::string&>();
  return TsText{name == "integer" ? "number" : name};
}

}  // namespace

bool FormatDescription(const TsJson& description, const std::string& indent, std::string* out) {
  if (!description.is_string()) return false;  // .split raises
  const std::string& text = description.get_ref<const std::string&>();
  size_t start = 0;
  while (true) {
    size_t end = text.find('\n', start);
    std::string_view line(text.data() + start,
                          (end == std::string::npos ? text.size() : end) - start);
    if (!line.empty()) {
      *out += indent;
      *out += "// ";
      *out += line;
    }
    if (end == std::string::npos) return true;
    *out += '\n';
    start = end + 1;
  }
}

std::optional<TsText> RenderType(const TsType& type, const std::string& indent) {
  switch (type.kind) {
    case TsKind::kScalar:
      return RenderScalar(type);
    case TsKind::kObject:
      return RenderObject(type, indent);
    case TsKind::kArray:
      return RenderArray(type, indent);
    case TsKind::kEnum:
      return RenderEnum(type);
    case TsKind::kAnyOf:
      return RenderAnyOf(type, indent);
    case TsKind::kUnion:
      return TsText{Join(type.union_names, " | ")};
    case TsKind::kRef:
      return TsText{type.ref_name};
  }
  return std::nullopt;
}

std::optional<std::string> RenderParam(const TsParam& param, const std::string& indent) {
  auto comments = FormatDocstring(*param.type, indent);
  if (!comments) return std::nullopt;
  if (param.default_value != nullptr && !param.default_value->is_null()) {
    *comments += indent + "// Default: ";
    const TsJson& value = *param.default_value;
    // repr() for int/float/bool (equal to str()), json.dumps for everything else.
    bool ok = (value.is_number() || value.is_boolean()) ? AppendPyStr(value, &*comments)
                                                        : AppendPyJsonDumps(value, &*comments);
    if (!ok) return std::nullopt;
    *comments += '\n';
  }
  auto type = RenderType(*param.type, indent);
  if (!type) return std::nullopt;
  return *comments + indent + param.name + (param.optional ? "?" : "") + ": " + type->text;
}

}  // namespace k3::text::chat
