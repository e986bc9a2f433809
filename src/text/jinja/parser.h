// Jinja2 template parser: tokens (lexer.h) -> syntax tree (ast.h). Follows Jinja2's grammar and
// operator precedence (lowest first): `x if c else y`; or; and; not; comparisons and `in`;
// + -; ~; * / // %; **; unary - +; then primaries with `.attr`, `[key]`, `[a:b:c]`, calls,
// `|filter` and `is test`. Statements: if/elif/else, for (with `if` filter and else),
// break/continue, set (also `ns.attr` and block set), macro, call, filter, with, raw.
// Nesting deeper than kMaxParseDepth is refused so that hostile input cannot exhaust the stack.
// Pure function; thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "base/result.h"
#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace k3::text::jinja {

inline constexpr int kMaxParseDepth = 64;

// Errors are INVALID_ARGUMENT with "line N: ...".
base::Result<std::unique_ptr<Program>> ParseTemplate(std::string_view source,
                                                     const LexOptions& options);

}  // namespace k3::text::jinja
