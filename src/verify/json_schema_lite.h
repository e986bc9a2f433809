// A small JSON Schema validator for checking a server's structured outputs and tool-call
// arguments. Written independently of src/structured on purpose: the verifier must not share the
// server's understanding of a schema. It covers the subset Moonshot's MFJS accepts (frontend spec
// §4.2) plus the common Draft 2020-12 keywords: type, properties, required, additionalProperties,
// items, enum, const, anyOf, oneOf, min/maxLength, min/maxItems, minimum/maximum,
// exclusiveMinimum/Maximum and in-document $ref ("#", "#/$defs/N", "#/definitions/N").
// Other keywords are ignored (as annotations are). Pure functions, thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace k3::verify {

// "" when `value` is valid for `schema`, else the first violation as "PATH: what" (PATH is a
// JSON pointer into the value, "" for the root shown as "/").
std::string ValidateSchema(const nlohmann::json& schema, const nlohmann::json& value);

// True when the JSON text has no whitespace outside strings (the compact form structured outputs
// must take: frontend spec §5.1 "compact JSON without whitespace", KVV "no \n or \t").
bool IsCompactJson(const std::string& text);

}  // namespace k3::verify
