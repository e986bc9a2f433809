// Moonshot's TypeScript-style tool declaration (KVV beam/tokenizer/tool_declaration_ts.py,
// `encode_tools_to_typescript_style`), the `tools_ts_str` that the K2.5/K2.6 chat templates put in
// the tool_declare message, reproduced byte for byte, plus `deep_sort_dict`, which Moonshot's
// apply_chat_template runs on the tools first.
//
// The encoder is a port of the Python function's observable behaviour, including its quirks:
// `Default:` uses Python repr for numbers and booleans (True/False) and json.dumps otherwise; enum
// members print with str() (`True | None`); descriptions become `// ` lines with blank lines kept
// bare; `$defs` interfaces come in registry (insertion) order. Wherever the Python function raises
// (oneOf/allOf/const without a type, unknown type-list members, missing or foreign `$ref`s,
// wrong-typed fields, ...), EncodeToolsTypescript returns std::nullopt, and the caller falls back
// to JSON as Moonshot's tokenizer does.
//
// Deliberate limits: schemas nested deeper than kMaxToolSchemaDepth and output beyond
// kMaxToolTsBytes give std::nullopt (Python would recurse further or build the string); integers
// beyond int64 print as floats. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace k3::text::chat {

inline constexpr int kMaxToolSchemaDepth = 128;
inline constexpr size_t kMaxToolTsBytes = size_t{64} << 20;

// Python's deep_sort_dict: every object's keys in code-point order, recursively (lists keep their
// order, their elements are sorted inside).
nlohmann::ordered_json DeepSortKeys(const nlohmann::ordered_json& json);

// encode_tools_to_typescript_style(tools): "" for a falsy `tools` or when no tool is of type
// "function"; std::nullopt where Python raises. Does not sort: callers that follow Moonshot's
// apply_chat_template pass DeepSortKeys(tools).
std::optional<std::string> EncodeToolsTypescript(const nlohmann::ordered_json& tools);

}  // namespace k3::text::chat
