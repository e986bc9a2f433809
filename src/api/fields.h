// Typed, range-checked reads of optional request fields. Each returns false and fills *error
// (400, naming the field) when the field is present but wrong; absent or null leaves the output
// untouched, so callers pre-set defaults.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/api_error.h"

namespace k3::api {

class Fields {
 public:
  explicit Fields(const Json& object) : object_(object) {}

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
  const Json& object_;
};

}  // namespace k3::api
