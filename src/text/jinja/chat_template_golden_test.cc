// Golden test: renders Moonshot's chat templates for every request in
// <shared>/goldens/chat/{k2,k2_thinking,k25}_render.jsonl and compares with the text Jinja2 3.1.6
// produced under Hugging Face's environment, byte for byte (see <shared>/goldens/README.md).
//
// The context is what the generator passed: the line's "kwargs" (add_generation_prompt, and for
// K2.5 thinking/preserve_thinking), request.messages, and request.tools deep-sorted by key
// (deep_sort_dict). K2.5 also receives tools_ts_str, which the generator computed with Moonshot's
// TypeScript tool encoder before rendering; this test checks the engine alone, so it passes the
// recorded string (counted separately). The whole path, with tools_ts_str from our own encoder
// and ids from the tokenizer, is src/text/chat/jinja_chat_golden_test.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testing/paths.h"
#include "text/jinja/json_value.h"
#include "text/jinja/template.h"

namespace k3::text::jinja {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::vector<OrderedJson> ReadOrderedLines(const std::string& path) {
  std::istringstream in(testing::ReadFileOrDie(path));
  std::vector<OrderedJson> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(OrderedJson::parse(line));
  }
  return lines;
}

// Python's deep_sort_dict: every object's keys in sorted (code point) order.
OrderedJson DeepSort(const OrderedJson& json) {
  return OrderedJson::parse(nlohmann::json::parse(json.dump()).dump());
}

Value Context(const OrderedJson& golden) {
  OrderedJson context = golden["kwargs"];
  const OrderedJson& request = golden["request"];
  context["messages"] = request["messages"];
  if (request.contains("tools")) context["tools"] = DeepSort(request["tools"]);
  if (golden.contains("tools_ts_str")) context["tools_ts_str"] = golden["tools_ts_str"];
  auto value = FromJson(context);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : Value();
}

struct Tally {
  int passed = 0;
  int total = 0;
  int with_recorded_ts = 0;  // passed cases that rendered the recorded tools_ts_str
};

Tally RunGoldens(const std::string& checkpoint, const std::string& golden_file) {
  std::string dir = testing::SharedDir();
  auto tmpl =
      Template::Parse(testing::ReadFileOrDie(dir + "/kimi/" + checkpoint + "/chat_template.jinja"));
  EXPECT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  Tally tally;
  if (!tmpl.ok()) return tally;
  for (const OrderedJson& golden : ReadOrderedLines(dir + "/goldens/chat/" + golden_file)) {
    ++tally.total;
    std::string id = golden["id"].get<std::string>();
    auto text = tmpl->Render(Context(golden));
    if (!text.ok()) {
      ADD_FAILURE() << golden_file << " " << id << ": " << text.status().ToString();
      continue;
    }
    std::string expected = golden["text"].get<std::string>();
    EXPECT_EQ(*text, expected) << golden_file << " " << id;
    if (*text != expected) continue;
    ++tally.passed;
    if (golden.contains("tools_ts_str") && golden["tools_ts_str"].is_string()) {
      ++tally.with_recorded_ts;
    }
  }
  std::cout << "[ GOLDENS  ] " << golden_file << ": " << tally.passed << "/" << tally.total
            << " pass";
  if (tally.with_recorded_ts > 0) {
    std::cout << " (" << tally.with_recorded_ts
              << " of them given the generator's recorded tools_ts_str)";
  }
  std::cout << "\n";
  return tally;
}

TEST(ChatTemplateGolden, KimiK2) {
  Tally t = RunGoldens("k2", "k2_render.jsonl");
  EXPECT_GT(t.total, 0);
  EXPECT_EQ(t.passed, t.total);
}

TEST(ChatTemplateGolden, KimiK2Thinking) {
  Tally t = RunGoldens("k2-thinking", "k2_thinking_render.jsonl");
  EXPECT_GT(t.total, 0);
  EXPECT_EQ(t.passed, t.total);
}

TEST(ChatTemplateGolden, KimiK25) {
  Tally t = RunGoldens("k25", "k25_render.jsonl");
  EXPECT_GT(t.total, 0);
  EXPECT_EQ(t.passed, t.total);
}

}  // namespace
}  // namespace k3::text::jinja
