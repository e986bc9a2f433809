// Jinja's tests (`x is name(args)`): defined, undefined, none, boolean, true, false, integer,
// float, number, string, mapping, iterable, sequence, callable, sameas, escaped, lower, upper,
// odd, even, divisibleby, in, and the comparisons eq/equalto/==, ne/!=, lt/lessthan/<, le/<=,
// gt/greaterthan/>, ge/>=. Pure functions.
#pragma once

#include <string_view>

#include "base/result.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

// An unknown test name is INVALID_ARGUMENT ("no test named 'x'").
base::Result<bool> RunTest(std::string_view name, const Value& value, const CallArgs& args);

}  // namespace k3::text::jinja
