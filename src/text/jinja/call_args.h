// Binding of Python-style call arguments (positional then keyword) to a builtin's parameter list,
// shared by filters, tests, methods and global functions. Pure functions.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

// Returns one Value per parameter in `params` order; a parameter not given is Undefined. Errors
// (INVALID_ARGUMENT) for too many positional arguments, unknown or repeated keywords and
// missing required ones (the first `num_required` parameters).
base::Result<std::vector<Value>> BindArgs(std::string_view function, const CallArgs& args,
                                          std::initializer_list<std::string_view> params,
                                          size_t num_required = 0);

// A value or, when it is Undefined (not given), `fallback`.
inline Value Or(const Value& given, Value fallback) {
  return given.is_undefined() ? std::move(fallback) : given;
}

// An int argument (bool accepted, as in Python); `what` names it in the error.
base::Result<int64_t> IntArg(const Value& value, std::string_view what);
base::Result<std::string> StringArg(const Value& value, std::string_view what);

}  // namespace k3::text::jinja
