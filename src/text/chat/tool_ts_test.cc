// Tests of the TypeScript tool encoder: every case of <shared>/goldens/chat/tool_ts.jsonl (the
// output of Moonshot's Python encode_tools_to_typescript_style, with and without deep_sort_dict),
// then behaviours of the Python code that the goldens do not reach.
#include "text/chat/tool_ts.h"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/paths.h"

namespace k3::text::chat {
namespace {

using Json = nlohmann::ordered_json;

std::vector<Json> ReadOrderedLines(const std::string& path) {
  std::istringstream in(testing::ReadFileOrDie(path));
  std::vector<Json> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(Json::parse(line));
  }
  return lines;
}

// Compares the encoder with one expected value: a string, or null where Python raised.
bool Matches(const std::optional<std::string>& got, const Json& expected, const std::string& id) {
  if (expected.is_null()) {
    EXPECT_FALSE(got.has_value()) << id << " should fail, got:\n" << got.value_or("");
    return !got.has_value();
  }
  EXPECT_TRUE(got.has_value()) << id << " failed";
  if (!got) return false;
  EXPECT_EQ(*got, expected.get<std::string>()) << id;
  return *got == expected.get<std::string>();
}

TEST(ToolTs, Goldens) {
  int passed = 0;
  int total = 0;
  int unsorted = 0;
  for (const Json& golden :
       ReadOrderedLines(testing::SharedDir() + "/goldens/chat/tool_ts.jsonl")) {
    ++total;
    std::string id = golden["id"].get<std::string>();
    bool ok = Matches(EncodeToolsTypescript(DeepSortKeys(golden["tools"])), golden["ts"], id);
    if (golden.contains("ts_without_deep_sort")) {
      ++unsorted;
      ok &= Matches(EncodeToolsTypescript(golden["tools"]), golden["ts_without_deep_sort"],
                    id + " (unsorted)");
    }
    passed += ok;
  }
  std::cout << "[ GOLDENS  ] TS tool goldens: " << passed << "/" << total << " (" << unsorted
            << " also without deep sort)\n";
  EXPECT_EQ(total, 45);
  EXPECT_EQ(passed, total);
}

TEST(ToolTs, DeepSortKeys) {
  Json in = Json::parse(R"({"b":[{"z":1,"a":2}],"a":{"é":1,"e":2,"Z":3},"":null})");
  EXPECT_EQ(DeepSortKeys(in).dump(), R"({"":null,"a":{"Z":3,"e":2,"é":1},"b":[{"a":2,"z":1}]})");
  EXPECT_EQ(DeepSortKeys(Json(5)), Json(5));
}

std::optional<std::string> EncodeParams(const char* parameters) {
  Json tools = Json::array();
  tools.push_back({{"type", "function"},
                   {"function", {{"name", "f"}, {"parameters", Json::parse(parameters)}}}});
  return EncodeToolsTypescript(tools);
}

std::string Wrap(const std::string& body) {
  return "# Tools\n\n## functions\nnamespace functions {\n" + body + "\n}\n";
}

TEST(ToolTs, FalsyAndMalformedTools) {
  EXPECT_EQ(EncodeToolsTypescript(Json()), "");
  EXPECT_EQ(EncodeToolsTypescript(Json::array()), "");
  EXPECT_EQ(EncodeToolsTypescript(Json::object()), "");
  EXPECT_EQ(EncodeToolsTypescript(Json::parse(R"([{"type":"function","function":{}}])")), "");
  EXPECT_EQ(EncodeToolsTypescript(Json::parse(R"({"a":1})")), std::nullopt);
  EXPECT_EQ(EncodeToolsTypescript(Json::parse("[1]")), std::nullopt);
  EXPECT_EQ(EncodeToolsTypescript(Json::parse(R"([{"type":"function","function":"f"}])")),
            std::nullopt);
  EXPECT_EQ(EncodeParams("[1]"), std::nullopt);
  EXPECT_EQ(EncodeParams(R"({"properties":[]})"), std::nullopt);
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":5}})"), std::nullopt);
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"type":"string"}},"required":7})"), std::nullopt);
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"type":"string","description":3}}})"),
            std::nullopt);
}

TEST(ToolTs, PythonQuirksBeyondTheGoldens) {
  // set("ab") is {"a", "b"}: a required list given as a string works character by character.
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"type":"string"},"ab":{}},"required":"ab"})"),
            Wrap("type f = (_: {\n  a: string,\n  ab?: any\n}) => any;"));
  // An unknown non-string type prints with str() in an f-string but cannot be joined.
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"type":null}}})"),
            Wrap("type f = (_: {\n  a?: None\n}) => any;"));
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"anyOf":[{"type":5}]}}})"), std::nullopt);
  // Without a declared type an enum is checked only when printed.
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"enum":5}}})"), std::nullopt);
  EXPECT_EQ(EncodeParams(R"({"properties":{"a":{"enum":"xy"}}})"),
            Wrap("type f = (_: {\n  a?: \"x\" | \"y\"\n}) => any;"));
  // With a self reference the root's additionalProperties are parsed but never printed.
  EXPECT_EQ(EncodeParams(R"({"properties":{"n":{"$ref":"#"}},"additionalProperties":3})"),
            Wrap("interface parameters {\n  n?: parameters\n}\ntype f = (_: parameters) => any;"));
  EXPECT_EQ(EncodeParams(R"({"properties":{"n":{}},"additionalProperties":3})"), std::nullopt);
  // Constraints and defaults print with str() / repr() / json.dumps.
  EXPECT_EQ(
      EncodeParams(R"({"properties":{"x":{"type":"number","maximum":1e-5,"default":[1.0,"é"]}}})"),
      Wrap("type f = (_: {\n  // maximum: 1e-05\n  // Default: [1.0, \"é\"]\n  x?: number\n}) "
           "=> any;"));
}

TEST(ToolTs, DeepNestingFailsCleanly) {
  std::string schema = R"({"type":"string"})";
  for (int i = 0; i < 400; ++i) schema = R"({"type":"array","items":)" + schema + "}";
  EXPECT_EQ(EncodeParams(("{\"properties\":{\"a\":" + schema + "}}").c_str()), std::nullopt);
}

}  // namespace
}  // namespace k3::text::chat
