// Methods callable on values, as Jinja exposes Python's: str (startswith, endswith, split,
// rsplit, strip, lstrip, rstrip, lower, upper, title, capitalize, replace, find, count, join,
// isdigit, isalpha, isalnum, isspace), dict (get, items, keys, values) and list (count, index).
// Mutating methods (list.append, dict.update, ...) are absent, as in Jinja's immutable sandbox.
#pragma once

#include <optional>
#include <string_view>

#include "text/jinja/value.h"

namespace k3::text::jinja {

// `obj.name` as a bound method, or nullopt when `obj` has no such method.
std::optional<Value> GetMethod(const Value& obj, std::string_view name);

}  // namespace k3::text::jinja
