// usage.prompt_tokens and the prompt ids, end to end through the API layer: every chat golden's
// request body goes through ParseChatRequest and serve::Frontend::Prepare (chat format from the
// checkpoint folder in <shared>/kimi/, the real Kimi tokenizer) and must give the golden's ids
// exactly; K3 reports n_ids - 3 (the generation opener), the Jinja families n_ids. The engine
// behind the frontend is the scheduler-test fake runner with the Kimi vocabulary size (Prepare
// only reads its limits).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "api/openai_request.h"
#include "engine/engine.h"
#include "engine/fake_model_runner.h"
#include "serve/frontend.h"
#include "testing/paths.h"

namespace k3::api {
namespace {

constexpr int64_t kKimiVocab = 163840;

// Goldens whose render is not a function of a valid API request, and why:
// - image_with_image_prompts: the image prompt text comes from a vision processor, not the body;
// - tool_results_without_ids: a tool message without tool_call_id, which the Kimi Vendor
//   Verifier requires us to reject with 400 (the golden records what the renderer alone does).
const std::set<std::string> kNotFromTheRequest = {"image_with_image_prompts",
                                                  "tool_results_without_ids"};

// Goldens whose user text types special-token names: Moonshot's tokenizer turns them into control
// ids in Jinja-family chats; we encode client text with special tokens off (no injection), so our
// ids spell the names as ordinary tokens: same text, more ids (K3's golden already does this).
const std::set<std::string> kTypedSpecialNames = {"special_token_in_user_text"};

struct Stack {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<serve::Frontend> frontend;
};

Stack MakeStack(const std::string& checkpoint) {
  const std::string dir = testing::SharedDir() + "/kimi/" + checkpoint;
  engine::EngineConfig config;
  config.cache_memory_bytes = int64_t{64} << 20;
  auto engine = engine::Engine::Create(
      std::make_unique<engine::testing::FakeModelRunner>(kKimiVocab, true), config);
  K3_CHECK(engine.ok()) << engine.status().ToString();
  auto tokenizer = text::Tokenizer::FromKimiDirectory(dir);
  K3_CHECK(tokenizer.ok()) << tokenizer.status().ToString();
  auto format = serve::ChatFormat::FromCheckpoint(dir);
  K3_CHECK(format.ok()) << format.status().ToString();
  Stack stack;
  stack.engine = std::move(engine).value();
  stack.frontend =
      std::make_unique<serve::Frontend>(std::move(tokenizer).value(), std::move(format).value(),
                                        stack.engine.get(), serve::FrontendConfig{});
  return stack;
}

// Runs every golden of `file`; the body is the golden's request plus `kwargs` (Jinja families)
// as chat_template_kwargs.
void ExpectExactIds(const std::string& checkpoint, const std::string& file, int opener) {
  Stack stack = MakeStack(checkpoint);
  int exact = 0, total = 0;
  std::istringstream lines(testing::ReadFileOrDie(testing::SharedDir() + "/goldens/chat/" + file));
  std::string text;
  while (std::getline(lines, text)) {
    if (text.empty()) continue;
    const Json line = Json::parse(text);  // ordered: key order is part of the rendered text
    const std::string id = line["id"];
    if (kNotFromTheRequest.contains(id)) continue;
    ++total;
    Json body = line["request"];
    if (line.contains("kwargs")) {
      Json kwargs = line["kwargs"];
      kwargs.erase("add_generation_prompt");
      if (!kwargs.empty()) body["chat_template_kwargs"] = kwargs;
    }
    OpenAiRequest parsed;
    ApiError error;
    if (!ParseChatRequest(body, ApiOptions{}, &parsed, &error)) {
      ADD_FAILURE() << file << " " << id << ": rejected: " << error.message;
      continue;
    }
    auto prompt = stack.frontend->Prepare(parsed.generate);
    if (!prompt.ok()) {
      ADD_FAILURE() << file << " " << id << ": " << prompt.status().ToString();
      continue;
    }
    const auto& expected = line["ids"];
    std::vector<int32_t> ids(expected.begin(), expected.end());
    if (opener == 0 && kTypedSpecialNames.contains(id)) {
      --total;
      EXPECT_GT(prompt->ids.size(), ids.size()) << file << " " << id;
      const std::vector<text::TokenId> ours(prompt->ids.begin(), prompt->ids.end());
      EXPECT_EQ(*stack.frontend->tokenizer().Decode(ours), line["text"].get<std::string>());
      continue;
    }
    EXPECT_EQ(prompt->ids, ids) << file << " " << id;
    EXPECT_EQ(prompt->reported_prompt_tokens, static_cast<int64_t>(ids.size()) - opener)
        << file << " " << id;
    if (line.contains("prompt_tokens_reported")) {
      EXPECT_EQ(prompt->reported_prompt_tokens, line["prompt_tokens_reported"].get<int64_t>());
    }
    if (prompt->ids == ids) ++exact;
  }
  std::printf("%s through the API: %d/%d prompts id-exact\n", file.c_str(), exact, total);
  EXPECT_EQ(exact, total);
}

// The prompt ids of a chat whose user message, tool result and tool description carry `text`.
std::vector<int32_t> ChatIds(const Stack& stack, const std::string& text) {
  const Json body = {
      {"messages",
       {{{"role", "user"}, {"content", "hello " + text + " world"}},
        {{"role", "assistant"},
         {"content", ""},
         {"tool_calls",
          {{{"id", "call_1"},
            {"type", "function"},
            {"function", {{"name", "lookup"}, {"arguments", "{}"}}}}}}},
        {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "result " + text}}}},
      {"tools",
       {{{"type", "function"},
         {"function",
          {{"name", "lookup"},
           {"description", "Looks up " + text},
           {"parameters", {{"type", "object"}}}}}}}}};
  OpenAiRequest parsed;
  ApiError error;
  K3_CHECK(ParseChatRequest(body, ApiOptions{}, &parsed, &error)) << error.message;
  auto prompt = stack.frontend->Prepare(parsed.generate);
  K3_CHECK(prompt.ok()) << prompt.status().ToString();
  return prompt->ids;
}

// A control token typed into user, tool-result or tool-description text stays text: it adds
// ordinary ids (once per place) and never its control id, whose count stays what the template
// alone emits; the text decodes back unchanged.
void ExpectNoInjection(const std::string& checkpoint) {
  Stack stack = MakeStack(checkpoint);
  const text::Tokenizer& tokenizer = stack.frontend->tokenizer();
  const std::vector<int32_t> clean = ChatIds(stack, "plain");
  int checked = 0;
  for (const char* name : {"<|im_end|>", "<|tool_calls_section_begin|>", "<|im_user|>",
                           "<|end_of_msg|>", "<|open|>", "<|close|>", "<think>"}) {
    const auto id = tokenizer.specials().IdOf(name);
    if (!id) continue;
    ++checked;
    const std::vector<int32_t> injected = ChatIds(stack, name);
    EXPECT_EQ(std::count(injected.begin(), injected.end(), *id),
              std::count(clean.begin(), clean.end(), *id))
        << checkpoint << " " << name;
    EXPECT_GE(injected.size(), clean.size() + 4) << checkpoint << " " << name;
    const std::vector<text::TokenId> ids(injected.begin(), injected.end());
    EXPECT_NE(tokenizer.Decode(ids)->find(std::string("hello ") + name + " world"),
              std::string::npos)
        << checkpoint << " " << name;
  }
  EXPECT_GE(checked, 2) << checkpoint;
}

TEST(PromptTokensNoInjection, K3) { ExpectNoInjection("k3"); }
TEST(PromptTokensNoInjection, K25) { ExpectNoInjection("k25"); }
TEST(PromptTokensNoInjection, K2Instruct) { ExpectNoInjection("k2"); }
TEST(PromptTokensNoInjection, K2Thinking) { ExpectNoInjection("k2-thinking"); }

TEST(PromptTokensGolden, K3) { ExpectExactIds("k3", "k3_render.jsonl", 3); }
TEST(PromptTokensGolden, K25) { ExpectExactIds("k25", "k25_render.jsonl", 0); }
TEST(PromptTokensGolden, K2Instruct) { ExpectExactIds("k2", "k2_render.jsonl", 0); }
TEST(PromptTokensGolden, K2Thinking) {
  ExpectExactIds("k2-thinking", "k2_thinking_render.jsonl", 0);
}

}  // namespace
}  // namespace k3::api
