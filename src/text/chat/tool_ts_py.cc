// Python semantics the TypeScript tool encoder relies on: truthiness, str(), json.dumps, str
// iteration, and the $defs registry's dict behaviour.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "text/chat/tool_ts.h"
#include "text/chat/tool_ts_internal.h"
#include "text/jinja/json_value.h"
#include "text/jinja/py_format.h"

namespace k3::text::chat {

bool PyTruthy(const TsJson& json) {
  switch (json.type()) {
    case TsJson::value_t::null:
      return false;
    case TsJson::value_t::boolean:
      return json.get<bool>();
    case TsJson::value_t::number_integer:
      return json.get<int64_t>() != 0;
    case TsJson::value_t::number_unsigned:
      return json.get<uint64_t>() != 0;
    case TsJson::value_t::number_float:
      return json.get<double>() != 0.0;
    case TsJson::value_t::string:
      return !json.get_ref<const std::string&>().empty();
    case TsJson::value_t::array:
    case TsJson::value_t::object:
      return !json.empty();
    default:
      return false;
  }
}

bool AppendPyStr(const TsJson& json, std::string* out) {
  if (json.is_string()) {  // the common case, without a conversion
    *out += json.get_ref<const std::string&>();
    return true;
  }
  auto value = jinja::FromJson(json);
  return value.ok() && jinja::AppendStr(*value, kMaxToolTsBytes, out).ok();
}

bool AppendPyJsonDumps(const TsJson& json, std::string* out) {
  auto value = jinja::FromJson(json);
  return value.ok() && jinja::AppendJsonDumps(*value, {}, kMaxToolTsBytes, out).ok();
}

std::vector<std::string> PyChars(const std::string& text) {
  std::vector<std::string> chars;
  std::string_view rest(text);
  while (!rest.empty()) {
    char32_t cp;
    bool valid;
    size_t length = base::DecodeUtf8(rest, &cp, &valid);
    chars.emplace_back(rest.substr(0, length));
    rest.remove_prefix(length);
  }
  return chars;
}

bool TsRegistry::Register(const TsJson& defs) {
  if (!PyTruthy(defs)) return true;     // `if not defs: return`
  if (!defs.is_object()) return false;  // defs.items() raises
  for (auto it = defs.begin(); it != defs.end(); ++it) {
    auto [slot, inserted] = index_.emplace(it.key(), entries_.size());
    if (inserted) {
      entries_.emplace_back(it.key(), &it.value());
    } else {
      entries_[slot->second].second = &it.value();
    }
  }
  return true;
}

const TsJson* TsRegistry::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : entries_[it->second].second;
}

}  // namespace k3::text::chat
