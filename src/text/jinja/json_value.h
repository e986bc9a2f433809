// Conversion of parsed JSON (nlohmann::json or nlohmann::ordered_json) into template Values.
// Use ordered_json to keep a request's key order: `tojson` prints dicts in insertion order, as
// Python does. Integers beyond int64 become floats (Python would keep an int).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

// JSON nested deeper than this is refused (values are printed and compared recursively).
inline constexpr int kMaxJsonDepth = 128;

template <typename Json>
base::Result<Value> FromJson(const Json& json, int depth = 0) {
  if (depth > kMaxJsonDepth) {
    return base::InvalidArgument("JSON nested deeper than " + std::to_string(kMaxJsonDepth));
  }
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      return Value::None();
    case nlohmann::json::value_t::boolean:
      return Value(json.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value(json.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = json.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float:
      return Value(json.template get<double>());
    case nlohmann::json::value_t::string:
      return Value(json.template get<std::string>());
    case nlohmann::json::value_t::array: {
      Value::List items;
      items.reserve(json.size());
      for (const auto& item : json) {
        K3_ASSIGN_OR_RETURN(Value v, FromJson(item, depth + 1));
        items.push_back(std::move(v));
      }
      return Value(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict dict;  // JSON object keys are unique
      for (auto it = json.begin(); it != json.end(); ++it) {
        K3_ASSIGN_OR_RETURN(Value v, FromJson(it.value(), depth + 1));
        dict.AppendNew(it.key(), std::move(v));
      }
      return Value(std::move(dict));
    }
    default:
      return base::InvalidArgument("unsupported JSON value (binary or discarded)");
  }
}

}  // namespace k3::text::jinja
