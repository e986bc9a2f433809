// Property: for any chunking, the streamed events equal the one-shot parse. Inputs: every
// hand-written case, every K3 golden assistant message, and synthetic random outputs built from
// markers, marker fragments, text, multi-byte and invalid UTF-8. Each input is fed in 200 random
// chunkings; the normalized event lists and the folded results must be identical.
#include <gtest/gtest.h>

#include <random>

#include "text/output/parse_test_util.h"

namespace k3::text::output::testing {
namespace {

struct Input {
  std::string name;
  ParserOptions options;
  std::string text;
  bool truncated;
};

void ExpectSameEvents(const std::vector<OutputEvent>& a, const std::vector<OutputEvent>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind) << i;
    EXPECT_EQ(a[i].text, b[i].text) << i;
    EXPECT_EQ(a[i].tool_index, b[i].tool_index) << i;
    EXPECT_EQ(a[i].id, b[i].id) << i;
    EXPECT_EQ(a[i].name, b[i].name) << i;
    EXPECT_EQ(a[i].complete, b[i].complete) << i;
  }
}

// Checks `chunkings` random chunkings of one input against the one-shot parse.
void CheckChunkings(const Input& in, int chunkings, std::mt19937_64& rng) {
  SCOPED_TRACE(in.name);
  ParsedOutput one_shot = ParseAll(in.text, in.options, in.truncated);
  StreamRun whole = ParseChunked(in.text, in.options, {}, in.truncated);
  ASSERT_EQ(whole.from_events, one_shot);
  for (int i = 0; i < chunkings; ++i) {
    std::vector<size_t> cuts = RandomCuts(in.text.size(), rng);
    StreamRun run = ParseChunked(in.text, in.options, cuts, in.truncated);
    ASSERT_EQ(run.from_events, one_shot) << "chunking " << i;
    ASSERT_EQ(run.result, one_shot) << "chunking " << i;
    ExpectSameEvents(run.events, whole.events);
    if (::testing::Test::HasFailure()) return;
  }
}

std::vector<Input> HandInputs() {
  std::vector<Input> inputs;
  for (const auto& cases : {K2Cases(), K3Cases()}) {
    for (const OutputCase& c : cases) {
      inputs.push_back({c.name, c.options, c.text, c.truncated});
      inputs.push_back({c.name + "/flip_truncated", c.options, c.text, !c.truncated});
    }
  }
  return inputs;
}

TEST(ChunkingProperty, HandWrittenCases) {
  std::mt19937_64 rng(1);
  for (const Input& in : HandInputs()) CheckChunkings(in, 200, rng);
}

TEST(ChunkingProperty, K3GoldenAssistantMessages) {
  std::mt19937_64 rng(2);
  std::vector<GoldenMessage> messages = K3GoldenMessages();
  ASSERT_FALSE(messages.empty());
  for (const GoldenMessage& gm : messages) {
    CheckChunkings({gm.name, gm.options, gm.text, false}, 200, rng);
    // Every prefix is a possible length cut.
    std::string prefix = gm.text.substr(0, rng() % (gm.text.size() + 1));
    CheckChunkings({gm.name + "/cut", gm.options, prefix, true}, 20, rng);
  }
}

// Pieces random outputs are made of: every marker, fragments of markers, attribute-ish text.
const std::vector<std::string>& Pieces(OutputFormat format) {
  static const std::vector<std::string> k2 = {
      "<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_call_section_begin|>",
      "<|tool_calls_section_end|>", "<|tool_call_section_end|>", "<|tool_call_begin|>",
      "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<|im_end|>", "functions.search:0",
      "functions.get_weather:1", "search:3", "functions_search_2", "img_gen:0", "{\"q\": \"x\"}",
      "{\"a\":", "<|tool_call", "<|", "<", "</thi", " ", "\n", "text", "é", "😀", "\xe4\xb8", "\xff",
      "\x80",
      // Whole calls, so that well-formed and dropped calls are common.
      "<|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{\"q\": "
      "1}<|tool_call_end|>",
      "<|tool_call_begin|>img_gen:1<|tool_call_argument_begin|>{}<|tool_call_end|>"};
  static const std::vector<std::string> k3 = {
      "<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>", "think", "response", "tools", "message",
      "call tool=\"web_search\" index=\"1\"", "call tool=\"img_gen\"",
      "argument key=\"q\" type=\"string\"", "argument key=\"n\" type=\"number\"",
      "json type=\"object\"", "call", "argument", "json", "12", "{\"a\":[1]}", "x\"y\\z", "<|open",
      "<|", "<", " ", "\n", "text", "é", "😀", "\xf0\x9f", "\xff", "&amp;",
      // Whole calls, so that well-formed and dropped calls are common.
      "<|open|>call tool=\"web_search\"<|sep|><|open|>argument key=\"q\" type=\"string\"<|sep|>"
      "v<|close|>argument<|sep|><|close|>call<|sep|>",
      "<|open|>call tool=\"img_gen\"<|sep|><|close|>call<|sep|>"};
  return format == OutputFormat::kK2 ? k2 : k3;
}

ParserOptions RandomOptions(std::mt19937_64& rng) {
  ParserOptions o;
  o.format = rng() % 2 ? OutputFormat::kK2 : OutputFormat::kK3;
  o.starts_in_reasoning = rng() % 2;
  o.thinking_enabled = rng() % 4 != 0;
  if (rng() % 4 != 0) o.tool_names = {"search", "get_weather", "web_search"};
  o.accept_undeclared_tools = rng() % 5 == 0;
  o.first_tool_index = static_cast<int>(rng() % 3);
  return o;
}

TEST(ChunkingProperty, SyntheticRandomOutputs) {
  std::mt19937_64 rng(3);
  int with_calls = 0, with_reasoning = 0, with_content = 0, with_dropped = 0;
  for (int n = 0; n < 300; ++n) {
    ParserOptions options = RandomOptions(rng);
    const std::vector<std::string>& pieces = Pieces(options.format);
    std::string text;
    size_t count = 1 + rng() % 40;
    for (size_t i = 0; i < count; ++i) text += pieces[rng() % pieces.size()];
    bool truncated = rng() % 3 == 0;
    CheckChunkings({"synthetic#" + std::to_string(n), options, text, truncated}, 200, rng);
    if (HasFailure()) return;
    ParsedOutput out = ParseAll(text, options, truncated);
    with_calls += !out.tool_calls.empty();
    with_reasoning += !out.reasoning.empty();
    with_content += !out.content.empty();
    with_dropped += out.dropped_calls > 0;
  }
  // The generator must exercise every kind of output, or the property says little.
  EXPECT_GT(with_calls, 20);
  EXPECT_GT(with_reasoning, 20);
  EXPECT_GT(with_content, 20);
  EXPECT_GT(with_dropped, 20);
}

}  // namespace
}  // namespace k3::text::output::testing
