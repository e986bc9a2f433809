// Golden test of the whole Jinja chat path: every request of
// <shared>/goldens/chat/{k2,k2_thinking,k25}_render.jsonl goes through JinjaChatTemplate loaded
// from the checkpoint folder <shared>/kimi/<k2|k2-thinking|k25> (tools deep-sorted, tools_ts_str
// from our own TypeScript encoder, default kwargs), and must give the text Jinja2 3.1.6 produced
// under Moonshot's/Hugging Face's setup byte for byte, and the recorded ids when that text is
// encoded with all specials allowed by the checkpoint's tokenizer (see <shared>/goldens/README.md).
#include <gtest/gtest.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testing/kimi_tokenizer.h"
#include "testing/paths.h"
#include "text/chat/jinja_chat.h"
#include "text/chat/tool_ts.h"

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

struct Tally {
  int text = 0;  // byte-exact text
  int ids = 0;   // and equal ids
  int ts = 0;    // cases whose tools_ts_str our encoder reproduced (K2.5 only)
  int total = 0;
};

// The generator's tools_ts_str (null: no tools or the Python encoder raised) against ours.
bool SameToolsTs(const Json& golden) {
  const Json& request = golden["request"];
  std::optional<std::string> ours;
  if (request.contains("tools")) ours = EncodeToolsTypescript(DeepSortKeys(request["tools"]));
  const Json& recorded = golden["tools_ts_str"];
  bool same = recorded.is_null() ? !ours.has_value() : ours == recorded.get<std::string>();
  EXPECT_TRUE(same) << golden["id"] << ": recorded " << recorded << ", ours "
                    << ours.value_or("(none)");
  return same;
}

Tally RunGoldens(const std::string& checkpoint, const std::string& golden_file) {
  std::string dir = testing::SharedDir();
  auto tmpl = JinjaChatTemplate::FromDirectory(dir + "/kimi/" + checkpoint);
  EXPECT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  Tally tally;
  if (!tmpl.ok()) return tally;
  const Tokenizer& tokenizer = testing::KimiTokenizer(checkpoint);
  for (const Json& golden : ReadOrderedLines(dir + "/goldens/chat/" + golden_file)) {
    ++tally.total;
    std::string id = golden["id"].get<std::string>();
    const Json& request = golden["request"];
    if (golden.contains("tools_ts_str")) tally.ts += SameToolsTs(golden);
    const Json* tools = request.contains("tools") ? &request["tools"] : nullptr;
    auto text = tmpl->Render(request["messages"], tools, golden["kwargs"]);
    if (!text.ok()) {
      ADD_FAILURE() << golden_file << " " << id << ": " << text.status().ToString();
      continue;
    }
    EXPECT_EQ(*text, golden["text"].get<std::string>()) << golden_file << " " << id;
    if (*text != golden["text"].get<std::string>()) continue;
    ++tally.text;
    auto ids = tokenizer.Encode(*text, SpecialMode::kAll);
    if (!ids.ok()) {
      ADD_FAILURE() << golden_file << " " << id << ": " << ids.status().ToString();
      continue;
    }
    EXPECT_EQ(*ids, golden["ids"].get<std::vector<TokenId>>()) << golden_file << " " << id;
    tally.ids += *ids == golden["ids"].get<std::vector<TokenId>>();
  }
  std::cout << "[ GOLDENS  ] " << golden_file << ": text " << tally.text << "/" << tally.total
            << ", ids " << tally.ids << "/" << tally.total;
  if (tmpl->uses_tools_ts()) {
    std::cout << ", tools_ts_str from our encoder " << tally.ts << "/" << tally.total;
  }
  std::cout << "\n";
  return tally;
}

void ExpectAllPass(const Tally& t, bool tools_ts) {
  EXPECT_EQ(t.total, 40);
  EXPECT_EQ(t.text, t.total);
  EXPECT_EQ(t.ids, t.total);
  if (tools_ts) {
    EXPECT_EQ(t.ts, t.total);
  }
}

TEST(JinjaChatGolden, KimiK2) { ExpectAllPass(RunGoldens("k2", "k2_render.jsonl"), false); }

TEST(JinjaChatGolden, KimiK2Thinking) {
  ExpectAllPass(RunGoldens("k2-thinking", "k2_thinking_render.jsonl"), false);
}

TEST(JinjaChatGolden, KimiK25) { ExpectAllPass(RunGoldens("k25", "k25_render.jsonl"), true); }

}  // namespace
}  // namespace k3::text::chat
