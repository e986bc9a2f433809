// The global functions a template can call without them being in its context, as Hugging Face's
// environment provides them: range, namespace, dict, and raise_exception (which fails the render
// with the template's message).
#pragma once

#include <optional>
#include <string_view>

#include "text/jinja/value.h"

namespace k3::text::jinja {

// The global named `name`, or nullopt.
std::optional<Value> LookupGlobal(std::string_view name);

}  // namespace k3::text::jinja
