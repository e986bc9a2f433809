// The Jinja2 lexer: template source -> tokens. Whitespace control is applied here, exactly as
// Jinja2's lexer does it, so data tokens already hold the bytes to emit:
//   - newlines (\r\n, \r) become \n and one trailing newline of the source is dropped
//     (keep_trailing_newline=False);
//   - `{%-`/`{{-`/`{#-` strip all whitespace before the tag, `-%}`/`-}}`/`-#}` all after it;
//   - trim_blocks drops the first newline after `%}` and `#}` (not after `+%}` or `}}`);
//   - lstrip_blocks drops spaces and tabs between a line start and `{%`/`{#` (not `{%+`, `{{`).
// `{% raw %}...{% endraw %}` becomes one data token. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace k3::text::jinja {

enum class TokenKind {
  kData,           // literal template text (after whitespace control)
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,           // identifier or keyword (if, for, and, none, ...)
  kString,         // a string literal; `text` holds the decoded value
  kInteger,        // `int_value`
  kFloat,          // `float_value`
  kOperator,  // `text` is the operator: + - * / // % ** ~ | . , : ( ) [ ] { } == != < <= > >= =
  kEof,
};

struct Token {
  TokenKind kind;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;  // 1-based line of the token's first byte in the normalised source
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Always ends with one kEof token. Errors (unterminated tags or strings, stray characters,
// integers beyond int64) are INVALID_ARGUMENT with "line N: ...".
base::Result<std::vector<Token>> Lex(std::string_view source, const LexOptions& options);

}  // namespace k3::text::jinja
