// Python semantics of Jinja operators on Values: arithmetic (int64 overflow is an error, since
// Python ints do not overflow), comparisons, `in`, attribute and item access, slicing, iteration
// and len(). Errors are INVALID_ARGUMENT messages in Python's words ("unsupported operand
// type(s) for +: 'int' and 'str'"); the interpreter adds the line. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "text/jinja/ast.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

// Bounds for values an operator creates (checked before allocating).
struct OpLimits {
  size_t max_string_bytes;
  size_t max_list_items;
};

// +, -, *, /, //, %, ** (not ~, and, or).
base::Result<Value> BinaryOp(Op op, const Value& left, const Value& right, const OpLimits& limits);
base::Result<Value> Negate(const Value& operand);

// ==, !=, <, <=, >, >=, in, not in.
base::Result<bool> Compare(Op op, const Value& left, const Value& right);
// Python `<` over numbers, strings and lists (lexicographic); other pairs are an error.
base::Result<bool> LessThan(const Value& left, const Value& right);
// `item in container`: substring, list element or dict key; Undefined contains nothing.
base::Result<bool> Contains(const Value& container, const Value& item);

// `obj.name`: dict/str/list methods first, then dict keys and namespace attributes; anything
// missing is Undefined (an error only for an Undefined `obj`).
base::Result<Value> GetAttr(const Value& obj, const std::string& name);
// `obj[key]`: keys and indexes first, then (for a string key) attributes; missing is Undefined.
base::Result<Value> GetItem(const Value& obj, const Value& key);
// `obj[start:stop:step]` on lists and strings with Python's clamping; nulls are omitted parts.
base::Result<Value> Slice(const Value& obj, const Value* start, const Value* stop,
                          const Value* step);

// The items a for loop visits: list elements, dict keys, string characters; Undefined is empty.
base::Result<std::vector<Value>> Iterate(const Value& iterable);
// len(): code points for strings.
base::Result<int64_t> Length(const Value& value);

// The code points of a UTF-8 string as separate strings (invalid bytes stand alone).
std::vector<std::string_view> SplitCodePoints(std::string_view text);

// An error for using an Undefined value (its hint says which name or attribute was missing).
base::Status UndefinedError(const Value& undefined);

}  // namespace k3::text::jinja
