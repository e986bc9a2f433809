// Schemas from users that once crashed or threw inside the compiler: each is now a clear
// INVALID_ARGUMENT, or compiles when it is valid.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "structured/schema.h"

namespace k3::structured {
namespace {

base::Status CompileText(const char* text) {
  auto graph = CompileSchema(nlohmann::json::parse(text));
  return graph.ok() ? base::Status::Ok() : graph.status();
}

TEST(SchemaErrors, RefBackToTheRootInsideMergedAnyOfIsRefusedNotAStackOverflow) {
  const base::Status status = CompileText(R"({"maxLength": 2, "anyOf": [{"$ref": "#"}]})");
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("levels deep"), std::string::npos) << status.ToString();
}

TEST(SchemaErrors, EmptyRefIsRefusedNotAnException) {
  const base::Status status =
      CompileText(R"({"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": ""}]}})");
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("not in this document"), std::string::npos) << status.ToString();
}

TEST(SchemaErrors, DeepNestingIsRefused) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += R"({"type":"array","items":)";
  text += "{}";
  for (int i = 0; i < 300; ++i) text += "}";
  EXPECT_EQ(CompileText(text.c_str()).code(), base::StatusCode::kInvalidArgument);
  std::string shallow;
  for (int i = 0; i < 50; ++i) shallow += R"({"type":"array","items":)";
  shallow += "{}";
  for (int i = 0; i < 50; ++i) shallow += "}";
  EXPECT_TRUE(CompileText(shallow.c_str()).ok());
}

TEST(SchemaErrors, WrongKeywordShapesBesideAnyOfAreErrorsNotExceptions) {
  for (const char* text : {
           R"({"minLength": "x", "anyOf": [{"minLength": 1}]})",
           R"({"type": "string", "anyOf": [{"$ref": 5}]})",
           R"({"type": 5, "anyOf": [{"type": "string"}]})",
           R"({"required": "a", "anyOf": [{"required": ["b"]}]})",
           R"({"enum": 3, "anyOf": [{"enum": [1]}]})",
           R"({"properties": [], "anyOf": [{"properties": {"a": {}}}]})",
       }) {
    base::Status status = base::Status::Ok();
    EXPECT_NO_THROW(status = CompileText(text)) << text;
    EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument) << text;
  }
}

TEST(SchemaErrors, MergedCountBoundsStayIntegers) {
  EXPECT_TRUE(CompileText(R"({"minLength": 1, "anyOf": [{"minLength": 2}]})").ok());
  EXPECT_TRUE(CompileText(R"({"maxItems": 5, "anyOf": [{"maxItems": 3, "type": "array"}]})").ok());
}

}  // namespace
}  // namespace k3::structured
