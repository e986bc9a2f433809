// Unit tests of JinjaChatTemplate: loading, the variables it provides, tools_ts_str and its JSON
// fallback, and errors (never crashes) on malformed requests.
#include "text/chat/jinja_chat.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/paths.h"

namespace k3::text::chat {
namespace {

using Json = nlohmann::ordered_json;

const Json kUser = Json::parse(R"([{"role":"user","content":"hi"}])");

JinjaChatTemplate Make(const std::string& source) {
  auto tmpl = JinjaChatTemplate::FromSource(source);
  EXPECT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  return std::move(*tmpl);
}

TEST(JinjaChat, DefaultsAndKwargs) {
  JinjaChatTemplate tmpl = Make(
      "{{ add_generation_prompt }} {{ thinking }} {{ preserve_thinking }} {{ tools }} "
      "{{ messages[0].content }} {{ extra | default('-') }}");
  EXPECT_FALSE(tmpl.uses_tools_ts());
  EXPECT_EQ(*tmpl.Render(kUser, nullptr, Json()), "True True False None hi -");
  Json kwargs = {{"thinking", false}, {"add_generation_prompt", false}, {"extra", 7}};
  EXPECT_EQ(*tmpl.Render(kUser, nullptr, kwargs), "False False False None hi 7");
}

TEST(JinjaChat, ToolsAreSortedAndEncoded) {
  JinjaChatTemplate tmpl = Make("{{ tools | tojson }}|{{ tools_ts_str }}");
  EXPECT_TRUE(tmpl.uses_tools_ts());
  Json tools = Json::parse(
      R"([{"type":"function","function":{"parameters":{"type":"object"},"name":"f"}}])");
  EXPECT_EQ(*tmpl.Render(kUser, &tools, Json::object()),
            "[{\"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\"}}, \"type\": "
            "\"function\"}]|# Tools\n\n## functions\nnamespace functions {\ntype f = (_: {}) => "
            "any;\n}\n");
}

TEST(JinjaChat, K25FallsBackToJsonWhenTheEncoderRaises) {
  auto tmpl = JinjaChatTemplate::FromDirectory(testing::SharedDir() + "/kimi/k25");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  Json tools = Json::parse(R"([{"type":"function","function":{"name":"f","parameters":
      {"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}}}}}])");
  auto text = tmpl->Render(kUser, &tools, Json::object());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->rfind("<|im_system|>tool_declare<|im_middle|>[{\"function\":{\"name\":\"f\"", 0),
            0u)
      << *text;
}

TEST(JinjaChat, SpecialTokenMapFromTheCheckpoint) {
  auto dir = std::filesystem::temp_directory_path() / "k3_jinja_chat_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"bos_token":"[BOS]","eos_token":{"content":"[EOS]"},"chat_template":"{{ bos_token }}{{ eos_token }}"})";
  auto tmpl = JinjaChatTemplate::FromDirectory(dir.string());
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  EXPECT_EQ(*tmpl->Render(kUser, nullptr, Json::object()), "[BOS][EOS]");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(JinjaChatTemplate::FromDirectory(dir.string()).status().code(),
            base::StatusCode::kNotFound);
}

TEST(JinjaChat, MalformedInputIsAnError) {
  JinjaChatTemplate tmpl = Make("{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_EQ(tmpl.Render(Json::object(), nullptr, Json()).status().code(),
            base::StatusCode::kInvalidArgument);
  EXPECT_EQ(tmpl.Render(kUser, nullptr, Json(3)).status().code(),
            base::StatusCode::kInvalidArgument);
  EXPECT_EQ(tmpl.Render(kUser, nullptr, Json{{"messages", 1}}).status().code(),
            base::StatusCode::kInvalidArgument);
  Json deep = Json::array();
  for (int i = 0; i < 1000; ++i) deep = Json::array({deep});
  EXPECT_FALSE(tmpl.Render(Json::array({deep}), nullptr, Json()).ok());
  EXPECT_EQ(JinjaChatTemplate::FromSource("{% if %}").status().code(),
            base::StatusCode::kInvalidArgument);
  JinjaChatTemplate raising = Make("{{ raise_exception('no') }}");
  EXPECT_EQ(raising.Render(kUser, nullptr, Json()).status().code(),
            base::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace k3::text::chat
