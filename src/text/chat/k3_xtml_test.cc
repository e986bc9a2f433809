// The K3 renderer against the official encoder's output (shared/goldens/chat/k3_render.jsonl):
// for each case the request maps to the recorded render_call, and the segments (text and
// allow_special, split for split), the joined text and the ids (each segment encoded on its own
// with the k3 tokenizer) are equal; prompt_tokens is n_ids minus the 3-token opener.
#include "text/chat/k3_xtml.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/kimi_tokenizer.h"
#include "testing/paths.h"

namespace k3::text::chat {
namespace {

using Json = nlohmann::ordered_json;

std::vector<Json> Goldens() {
  std::vector<Json> cases;
  std::string text = testing::ReadFileOrDie(testing::SharedDir() + "/goldens/chat/k3_render.jsonl");
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) cases.push_back(Json::parse(text.substr(start, end - start)));
    start = end + 1;
  }
  return cases;
}

// The options the case's render_call used: from the request, plus image_prompts (not a request
// field). Checks that the request maps to the recorded call.
K3RenderOptions OptionsFor(const Json& golden) {
  auto options = K3OptionsFromRequest(golden["request"]);
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  if (!options.ok()) return {};
  const Json& call = golden["render_call"];
  EXPECT_EQ(options->thinking, call["thinking"].get<bool>());
  EXPECT_EQ(options->thinking_effort.value_or(""), call["thinking_effort"].get<std::string>());
  EXPECT_EQ(options->add_generation_prompt, call["add_generation_prompt"].get<bool>());
  EXPECT_EQ(options->tools != nullptr, call["tools_passed"].get<bool>());
  EXPECT_EQ(options->tool_choice != nullptr, call.contains("tool_choice"));
  if (options->tool_choice != nullptr) {
    EXPECT_EQ(*options->tool_choice, call["tool_choice"]);
  }
  EXPECT_EQ(options->response_format != nullptr, call.contains("response_format"));
  if (options->response_format != nullptr) {
    EXPECT_EQ(*options->response_format, call["response_format"]);
  }
  if (call.contains("image_prompts")) {
    options->image_prompts = call["image_prompts"].get<std::vector<std::string>>();
  }
  return *options;
}

std::vector<TokenId> EncodeSegments(const ChatSegments& segments) {
  std::vector<Segment> views;
  for (const ChatSegment& s : segments) views.push_back(Segment{s.text, s.allow_special});
  auto ids = testing::KimiTokenizer("k3").EncodeSegments(views);
  EXPECT_TRUE(ids.ok()) << ids.status().ToString();
  return ids.ok() ? *ids : std::vector<TokenId>{};
}

// Compares one golden; true when everything matches.
bool CheckCase(const Json& golden) {
  const std::string id = golden["id"].get<std::string>();
  SCOPED_TRACE(id);
  K3RenderOptions options = OptionsFor(golden);
  auto rendered = RenderK3(golden["request"]["messages"], options);
  EXPECT_TRUE(rendered.ok()) << rendered.status().ToString();
  if (!rendered.ok()) return false;
  ChatSegments expected;
  for (const Json& s : golden["segments"]) {
    expected.push_back({s[0].get<std::string>(), s[1].get<bool>()});
  }
  bool same_segments = rendered->size() == expected.size();
  for (size_t i = 0; same_segments && i < expected.size(); ++i) {
    same_segments = (*rendered)[i].text == expected[i].text &&
                    (*rendered)[i].allow_special == expected[i].allow_special;
  }
  EXPECT_TRUE(same_segments) << "segments differ";
  std::string text = JoinSegments(*rendered);
  EXPECT_EQ(text, golden["text"].get<std::string>());
  std::vector<TokenId> ids = EncodeSegments(*rendered);
  auto golden_ids = golden["ids"].get<std::vector<TokenId>>();
  EXPECT_EQ(ids, golden_ids);
  const int n_ids = golden["n_ids"].get<int>();
  EXPECT_EQ(static_cast<int>(ids.size()), n_ids);
  EXPECT_EQ(n_ids - kK3GenerationOpenerTokens, golden["prompt_tokens_reported"].get<int>());
  return same_segments && text == golden["text"].get<std::string>() && ids == golden_ids;
}

TEST(K3Render, Goldens) {
  std::vector<Json> cases = Goldens();
  ASSERT_EQ(cases.size(), 49u);
  int exact = 0;
  for (const Json& golden : cases) exact += CheckCase(golden) ? 1 : 0;
  std::printf("K3 render goldens: %d/%zu byte-exact\n", exact, cases.size());
  EXPECT_EQ(exact, static_cast<int>(cases.size()));
}

// The same request through the one-call entry point gives the same segments.
TEST(K3Render, RequestEntryPointMatchesOptionsPath) {
  for (const Json& golden : Goldens()) {
    if (golden["render_call"].contains("image_prompts")) continue;
    SCOPED_TRACE(golden["id"].get<std::string>());
    auto direct = RenderK3Request(golden["request"]);
    ASSERT_TRUE(direct.ok()) << direct.status().ToString();
    EXPECT_EQ(JoinSegments(*direct), golden["text"].get<std::string>());
  }
}

}  // namespace
}  // namespace k3::text::chat
