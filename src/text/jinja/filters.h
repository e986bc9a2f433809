// Jinja's filters (`value|name(args)`). Text and scalar filters (filters.cc): abs, capitalize,
// default/d, escape/e, float, indent, int, length/count, lower, replace, round, safe, string,
// title, tojson, trim, upper. Sequence filters (filters_seq.cc): attr, dictsort, first, items,
// join, last, list, map, max, min, reject, rejectattr, reverse, select, selectattr, sort, sum,
// unique. `tojson` is Hugging Face's: json.dumps(x, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False).
#pragma once

#include <optional>
#include <string_view>

#include "base/result.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

// An unknown name is INVALID_ARGUMENT ("no filter named 'x'"). `interp` supplies limits and
// runs the filters and tests that map/select name.
base::Result<Value> RunFilter(Interpreter& interp, std::string_view name, const Value& input,
                              const CallArgs& args);

// The sequence filters; nullopt when `name` is not one of them (used by RunFilter).
std::optional<base::Result<Value>> RunSequenceFilter(Interpreter& interp, std::string_view name,
                                                     const Value& input, const CallArgs& args);

// Jinja's attribute getter for `attribute=` arguments: "a.b.0" looks up a, then b, then item 0.
base::Result<Value> GetAttributePath(const Value& obj, const Value& path);

}  // namespace k3::text::jinja
