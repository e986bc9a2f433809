#include "api/fields.h"

#include <cmath>
#include <sstream>

namespace k3::api {
namespace {

std::string Format(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string StringOr(const Json& object, const char* key, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string Fields::Path(const char* name) const {
  return prefix_.empty() ? std::string(name) : prefix_ + "." + name;
}

const Json* Fields::Get(const char* name) const {
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool Fields::Number(const char* name, double min, double max, double* out, ApiError* error) const {
  const Json* value = Get(name);
  if (value == nullptr) return true;
  if (!value->is_number()) {
    *error = BadRequest("'" + Path(name) + "' must be a number", Path(name));
    return false;
  }
  const double v = value->get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    *error = BadRequest("'" + Path(name) + "' must be between " + Format(min) + " and " +
                            Format(max) + ", got " + Format(v),
                        Path(name));
    return false;
  }
  *out = v;
  return true;
}

bool Fields::Integer(const char* name, int64_t min, int64_t max, int64_t* out,
                     ApiError* error) const {
  const Json* value = Get(name);
  if (value == nullptr) return true;
  if (!value->is_number_integer()) {
    *error = BadRequest("'" + Path(name) + "' must be an integer", Path(name));
    return false;
  }
  const int64_t v =
      value->is_number_unsigned()
          ? static_cast<int64_t>(std::min<uint64_t>(value->get<uint64_t>(), INT64_MAX))
          : value->get<int64_t>();
  if (v < min || v > max) {
    *error = BadRequest("'" + Path(name) + "' must be between " + std::to_string(min) + " and " +
                            std::to_string(max) + ", got " + std::to_string(v),
                        Path(name));
    return false;
  }
  *out = v;
  return true;
}

bool Fields::Bool(const char* name, bool* out, ApiError* error) const {
  const Json* value = Get(name);
  if (value == nullptr) return true;
  if (!value->is_boolean()) {
    *error = BadRequest("'" + Path(name) + "' must be a boolean", Path(name));
    return false;
  }
  *out = value->get<bool>();
  return true;
}

bool Fields::String(const char* name, std::string* out, ApiError* error) const {
  const Json* value = Get(name);
  if (value == nullptr) return true;
  if (!value->is_string()) {
    *error = BadRequest("'" + Path(name) + "' must be a string", Path(name));
    return false;
  }
  *out = value->get<std::string>();
  return true;
}

bool Fields::Enum(const char* name, const std::vector<std::string>& allowed, std::string* out,
                  ApiError* error) const {
  std::string value;
  if (!String(name, &value, error)) return false;
  if (Get(name) == nullptr) return true;
  for (const std::string& option : allowed) {
    if (value == option) {
      *out = value;
      return true;
    }
  }
  std::string list;
  for (const std::string& option : allowed) list += (list.empty() ? "'" : ", '") + option + "'";
  *error = BadRequest("'" + Path(name) + "' must be one of " + list + ", got '" + value + "'",
                      Path(name));
  return false;
}

bool Fields::StringOrList(const char* name, size_t max_items, std::vector<std::string>* out,
                          ApiError* error) const {
  const Json* value = Get(name);
  if (value == nullptr) return true;
  if (value->is_string()) {
    out->assign(1, value->get<std::string>());
    return true;
  }
  if (value->is_array() && value->size() <= max_items) {
    std::vector<std::string> items;
    for (const Json& item : *value) {
      if (!item.is_string()) break;
      items.push_back(item.get<std::string>());
    }
    if (items.size() == value->size()) {
      *out = std::move(items);
      return true;
    }
  }
  *error = BadRequest("'" + Path(name) + "' must be a string or a list of at most " +
                          std::to_string(max_items) + " strings",
                      Path(name));
  return false;
}

}  // namespace k3::api
