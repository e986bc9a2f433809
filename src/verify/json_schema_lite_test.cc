#include "verify/json_schema_lite.h"

#include <gtest/gtest.h>

namespace k3::verify {
namespace {

using nlohmann::json;

const json kWeather = json::parse(R"({
  "type": "object",
  "properties": {
    "city": {"type": "string", "minLength": 1, "maxLength": 5},
    "days": {"type": "integer", "minimum": 1, "maximum": 7},
    "unit": {"enum": ["C", "F"]},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
  },
  "required": ["city", "days"],
  "additionalProperties": false
})");

TEST(VerifyJsonSchemaLite, AcceptsValidInstances) {
  EXPECT_EQ(ValidateSchema(kWeather, json::parse(R"({"city":"Paris","days":3})")), "");
  EXPECT_EQ(ValidateSchema(kWeather,
                           json::parse(R"({"city":"Rome","days":7.0,"unit":"C","tags":["a"]})")),
            "");
  EXPECT_EQ(ValidateSchema(json::object(), json::parse("[1,\"x\",null]")), "");
}

TEST(VerifyJsonSchemaLite, NamesTheFirstViolation) {
  EXPECT_EQ(ValidateSchema(kWeather, json::parse(R"({"city":"Paris"})")),
            "/: missing required property 'days'");
  EXPECT_EQ(ValidateSchema(kWeather, json::parse(R"({"city":"Paris","days":"3"})")),
            "/days: expected type integer, got \"3\"");
  EXPECT_EQ(ValidateSchema(kWeather, json::parse(R"({"city":"Paris","days":2.5})")),
            "/days: expected type integer, got 2.5");
  EXPECT_NE(ValidateSchema(kWeather, json::parse(R"({"city":"Paris","days":8})")), "");
  EXPECT_NE(ValidateSchema(kWeather, json::parse(R"({"city":"","days":1})")), "");
  EXPECT_NE(ValidateSchema(kWeather, json::parse(R"({"city":"Lisbon","days":1})")), "");
  EXPECT_NE(ValidateSchema(kWeather, json::parse(R"({"city":"Oslo","days":1,"unit":"K"})")), "");
  EXPECT_NE(ValidateSchema(kWeather, json::parse(R"({"city":"Oslo","days":1,"tags":[1]})")), "");
  EXPECT_NE(
      ValidateSchema(kWeather, json::parse(R"({"city":"Oslo","days":1,"tags":["a","b","c"]})")),
      "");
  EXPECT_EQ(ValidateSchema(kWeather, json::parse(R"({"city":"Oslo","days":1,"x":0})")),
            "/: property 'x' is not allowed (additionalProperties false)");
  EXPECT_EQ(ValidateSchema(kWeather, json::parse("[]")), "/: expected type object, got []");
}

TEST(VerifyJsonSchemaLite, CountsCodePointsNotBytes) {
  const json schema = {{"type", "string"}, {"maxLength", 2}};
  EXPECT_EQ(ValidateSchema(schema, "é€"), "");
  EXPECT_NE(ValidateSchema(schema, "abc"), "");
}

TEST(VerifyJsonSchemaLite, RefsAnyOfOneOfConst) {
  const json schema = json::parse(R"({
    "$defs": {"node": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
                       "required": ["next"]}},
    "$ref": "#/$defs/node"
  })");
  EXPECT_EQ(ValidateSchema(schema, json::parse(R"({"next":{"next":null}})")), "");
  EXPECT_NE(ValidateSchema(schema, json::parse(R"({"next":{"next":1}})")), "");
  EXPECT_NE(ValidateSchema(schema, json::parse(R"({"next":{}})")), "");
  const json one_of = json::parse(R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})");
  EXPECT_EQ(ValidateSchema(one_of, 1.5), "");
  EXPECT_EQ(ValidateSchema(one_of, 2), "/: matches 2 oneOf alternatives");
  EXPECT_NE(ValidateSchema({{"const", "x"}}, "y"), "");
  EXPECT_NE(ValidateSchema({{"$ref", "#/$defs/missing"}}, 1), "");
  EXPECT_NE(ValidateSchema({{"type", "array"}, {"minItems", "two"}}, json::array()), "");
}

TEST(VerifyJsonSchemaLite, CompactMeansNoWhitespaceOutsideStrings) {
  EXPECT_TRUE(IsCompactJson(R"({"a":"x y\n","b":[1,2]})"));
  EXPECT_TRUE(IsCompactJson(R"({"a":"quote \" then space "})"));
  EXPECT_FALSE(IsCompactJson(R"({"a": 1})"));
  EXPECT_FALSE(IsCompactJson("{\n\"a\":1}"));
  EXPECT_FALSE(IsCompactJson("{\"a\":1}\t"));
}

}  // namespace
}  // namespace k3::verify
