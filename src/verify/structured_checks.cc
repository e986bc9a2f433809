// Area "structured": response_format (frontend spec §5.1; KVV test_response_format.py). The
// content must parse as JSON, validate against the schema (json_schema, strict), and be compact:
// no whitespace outside strings (§5.1 "compact JSON without whitespace"; KVV "no \n or \t").
#include "verify/check_util.h"
#include "verify/checks.h"
#include "verify/json_schema_lite.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kStructuredArea = "structured";

json PersonSchema() {
  return {{"type", "object"},
          {"properties",
           {{"name", {{"type", "string"}, {"maxLength", 12}}},
            {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 150}}},
            {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 3}}},
            {"kind", {{"enum", {"human", "robot"}}}}}},
          {"required", {"name", "age", "kind"}},
          {"additionalProperties", false}};
}

// Sends a request with `format` and returns "" or why its content breaks the contract.
std::string StructuredError(const CheckContext& ctx, const json& format, const json* schema,
                            bool stream) {
  json body = ChatBody(ctx, "Describe a person as JSON.", ctx.max_tokens);
  body["response_format"] = format;
  body["temperature"] = 0;
  body["seed"] = 11;
  if (stream) body["stream"] = true;
  const Reply reply = ctx.client->Post("/v1/chat/completions", body);
  ChatStreamSummary answer;
  if (stream) {
    if (reply.status != 200 || !reply.streamed)
      return "expected a 200 stream, got " + Describe(reply);
    if (auto e = ValidateChatStream(ParseSse(reply.events), {}, &answer); !e.empty()) {
      return "bad stream: " + e;
    }
  } else {
    if (auto e = ExpectOkJson(reply); !e.empty()) return e;
    if (auto e = ReadChatCompletion(reply.json, &answer); !e.empty()) return e;
  }
  const std::string shown = "'" + answer.content.substr(0, 120) + "'";
  const json value = json::parse(answer.content, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return "content is not JSON (finish_reason " + answer.finish_reason + "): " + shown;
  }
  if (schema == nullptr && !value.is_object())
    return "json_object content is not an object: " + shown;
  if (schema != nullptr) {
    if (auto e = ValidateSchema(*schema, value); !e.empty())
      return "schema violation " + e + " in " + shown;
  }
  if (!IsCompactJson(answer.content)) return "not compact (whitespace outside strings): " + shown;
  return "";
}

}  // namespace

CheckList RunStructuredChecks(const CheckContext& ctx) {
  const json object_format = {{"type", "json_object"}};
  const json schema = PersonSchema();
  const json schema_format = {
      {"type", "json_schema"},
      {"json_schema", {{"name", "person"}, {"strict", true}, {"schema", schema}}}};
  // pattern (walle's string-pattern case in the Kimi Vendor Verifier): a 200 whose strings match.
  const json coded = {{"type", "object"},
                      {"properties",
                       {{"code", {{"type", "string"}, {"pattern", "^[A-Z]{3}-[0-9]{2}$"}}},
                        {"slug", {{"type", "string"}, {"pattern", "^[a-z]+(-[a-z]+)*$"}}}}},
                      {"required", {"code", "slug"}},
                      {"additionalProperties", false}};
  const json coded_format = {
      {"type", "json_schema"},
      {"json_schema", {{"name", "coded"}, {"strict", true}, {"schema", coded}}}};
  return {
      PassUnless(kStructuredArea, "json_object",
                 StructuredError(ctx, object_format, nullptr, false)),
      PassUnless(kStructuredArea, "json_schema_strict",
                 StructuredError(ctx, schema_format, &schema, false)),
      PassUnless(kStructuredArea, "json_schema_strict_streamed",
                 StructuredError(ctx, schema_format, &schema, true)),
      PassUnless(kStructuredArea, "json_schema_pattern",
                 StructuredError(ctx, coded_format, &coded, false)),
  };
}

}  // namespace k3::verify
