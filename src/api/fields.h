// Typed, range-checked reads of optional request fields. Each returns false and fills *error
// (400, naming the field) when the field is present but wrong; absent or null leaves the output
// untouched, so callers pre-set defaults.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/api_error.h"

namespace k3::api {

// object[key] when object is an object and that member is a string, else `fallback`. Never throws
// (nlohmann's value() throws on a member of another type, which must be a 400, not a 500).
std::string StringOr(const Json& object, const char* key, const std::string& fallback = "");

class Fields {
 public:
  // `prefix` names the enclosing object in error params ("thinking" -> "thinking.type").
  explicit Fields(const Json& object, std::string prefix = "")
      : object_(object), prefix_(std::move(prefix)) {}

  bool Number(const char* name, double min, double max, double* out, ApiError* error) const;
  bool Integer(const char* name, int64_t min, int64_t max, int64_t* out, ApiError* error) const;
  bool Bool(const char* name, bool* out, ApiError* error) const;
  bool String(const char* name, std::string* out, ApiError* error) const;
  // One of `allowed` (strings).
  bool Enum(const char* name, const std::vector<std::string>& allowed, std::string* out,
            ApiError* error) const;
  // A string or an array of at most max_items strings.
  bool StringOrList(const char* name, size_t max_items, std::vector<std::string>* out,
                    ApiError* error) const;
  const Json* Get(const char* name) const;  // null when absent or JSON null

 private:
  // "prefix.name" (or "name"), for messages and params.
  std::string Path(const char* name) const;

  const Json& object_;
  std::string prefix_;
};

}  // namespace k3::api
