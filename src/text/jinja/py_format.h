// Python's text forms of template values: str() (what `{{ x }}` prints), repr() (how str() shows
// list and dict elements) and json.dumps (the `tojson` filter Hugging Face installs:
// json.dumps(x, ensure_ascii=False, indent, separators, sort_keys)). Pure functions.
// Every function stops with RESOURCE_EXHAUSTED once its output would pass `max_bytes`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "base/status.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

// Python float repr: shortest round-trip digits; exponent form below 1e-4 and from 1e16
// ("1e-05", "1e+16"); "1.0" for integral values; "inf", "-inf", "nan".
std::string FloatRepr(double value);

// Appends str(value): strings as-is, True/False/None, ints, float repr, Undefined as "", and the
// repr of lists and dicts.
base::Status AppendStr(const Value& value, size_t max_bytes, std::string* out);
// Appends repr(value): strings quoted the way Python quotes them.
base::Status AppendRepr(const Value& value, size_t max_bytes, std::string* out);
// Python's repr of a str (chooses ' or " as Python does; escapes \\, \n, \r, \t and controls).
void AppendStringRepr(std::string_view text, std::string* out);

struct JsonDumpsOptions {
  std::optional<std::string> indent;  // the per-level indent; nullopt = single line
  std::string item_separator = ", ";  // Python's default (", " without indent, "," with)
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // true: non-ASCII as \uXXXX (surrogate pairs above U+FFFF)
};

// json.dumps (ensure_ascii=False by default: non-ASCII text passes through); '"', '\\' and controls
// are escaped (\n \r \t \b \f, others \u00xx); NaN/Infinity as Python writes them. Undefined,
// namespaces and callables are not serializable (INVALID_ARGUMENT).
// A JSON string literal of `text` (quotes included) as Python's json.dumps writes it.
void AppendJsonString(std::string_view text, bool ensure_ascii, std::string* out);

base::Status AppendJsonDumps(const Value& value, const JsonDumpsOptions& options, size_t max_bytes,
                             std::string* out);

}  // namespace k3::text::jinja
