// The Kimi sampling policy (Kimi Vendor Verifier tests/params) and POST /v1/completions bodies.
#include <gtest/gtest.h>

#include <string>

#include "api/openai_request.h"

namespace k3::api::completion_request_test {
namespace {

struct Outcome {
  bool ok = false;
  ApiError error;
  std::string exception;
  OpenAiRequest request;
};

Outcome Chat(const std::string& patch, const ApiOptions& options) {
  Json body = Json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})");
  body.merge_patch(Json::parse(patch));
  Outcome out;
  try {
    out.ok = ParseChatRequest(body, options, &out.request, &out.error);
  } catch (const std::exception& e) {
    out.exception = e.what();
  }
  return out;
}

Outcome Completion(const std::string& body, const ApiOptions& options = {}) {
  Outcome out;
  try {
    out.ok = ParseCompletionRequest(Json::parse(body), options, &out.request, &out.error);
  } catch (const std::exception& e) {
    out.exception = e.what();
  }
  return out;
}

const ApiOptions kKimi = {.policy = SamplingPolicy::kKimi};

// tests/params: each wrong value is a 400 naming the field, under the Kimi policy only.
TEST(KimiPolicy, RejectsEveryValueTheVerifierRejects) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"temperature": 1.1})", "temperature"},
      {R"({"temperature": 2.0})", "temperature"},
      {R"({"temperature": -0.1})", "temperature"},
      {R"({"temperature": 0.5})", "temperature"},
      {R"({"top_p": 0.8})", "top_p"},
      {R"({"presence_penalty": 0.5})", "presence_penalty"},
      {R"({"frequency_penalty": 0.5})", "frequency_penalty"},
      {R"({"n": 2})", "n"},
      {R"({"temperature": "1.0"})", "temperature"},
  };
  for (const auto& [patch, param] : cases) {
    const Outcome kimi = Chat(patch, kKimi);
    ASSERT_TRUE(kimi.exception.empty()) << patch;
    EXPECT_FALSE(kimi.ok) << patch;
    EXPECT_EQ(kimi.error.http_status, 400) << patch;
    EXPECT_EQ(kimi.error.param, param) << patch;
    EXPECT_FALSE(kimi.error.message.empty()) << patch;
  }
  // The open policy takes the in-range ones.
  for (const char* patch :
       {R"({"temperature": 1.1})", R"({"temperature": 2.0})", R"({"temperature": 0.5})",
        R"({"top_p": 0.8})", R"({"presence_penalty": 0.5})", R"({"n": 2})"}) {
    EXPECT_TRUE(Chat(patch, {}).ok) << patch;
  }
}

TEST(KimiPolicy, AcceptsTheVerifierDefaults) {
  for (const char* patch :
       {"{}", R"({"temperature": 0.6})", R"({"temperature": 0.0})", R"({"temperature": 0})",
        R"({"temperature": 1.0})", R"({"temperature": 1})", R"({"top_p": 0.95})",
        R"({"top_p": 1.0})", R"({"presence_penalty": 0})", R"({"frequency_penalty": 0.0})",
        R"({"n": 1})",
        R"({"temperature": 1.0, "top_p": 0.95, "presence_penalty": 0, "frequency_penalty": 0,
            "n": 1, "max_tokens": 64})"}) {
    const Outcome out = Chat(patch, kKimi);
    EXPECT_TRUE(out.ok) << patch << ": " << out.error.message;
  }
}

TEST(KimiPolicy, AppliesToCompletionsToo) {
  EXPECT_FALSE(Completion(R"({"prompt": "a", "temperature": 1.1})", kKimi).ok);
  EXPECT_TRUE(Completion(R"({"prompt": "a", "temperature": 0.6})", kKimi).ok);
}

TEST(CompletionRequest, PromptForms) {
  Outcome out = Completion(R"({"prompt": "hello"})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.prompt, "hello");
  EXPECT_TRUE(out.request.generate.prompt_ids.empty());
  EXPECT_FALSE(out.request.generate.chat.has_value());

  out = Completion(R"({"prompt": ["hello"]})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.prompt, "hello");

  out = Completion(R"({"prompt": [1, 2, 3]})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.prompt_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(out.request.generate.prompt.empty());

  out = Completion(R"({"prompt": [[4, 5]]})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.prompt_ids, (std::vector<int32_t>{4, 5}));
}

TEST(CompletionRequest, RejectsWith400) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"prompt": ["a", "b"]})", "prompt"},  // several prompts
      {R"({"prompt": [[1], [2]]})", "prompt"},  // several token prompts
      {R"({"prompt": []})", "prompt"},
      {R"({"prompt": [1, "a"]})", "prompt"},
      {R"({"prompt": [-1]})", "prompt"},
      {R"({"prompt": 5})", "prompt"},
      {R"({"max_tokens": 5})", "prompt"},  // prompt missing
      {R"({"prompt": "a", "suffix": "z"})", "suffix"},
      {R"({"prompt": "a", "logprobs": 6})", "logprobs"},
      {R"({"prompt": "a", "logprobs": true})", "logprobs"},
      {R"({"prompt": "a", "best_of": 2})", "best_of"},  // best_of != n (1)
      {R"({"prompt": "a", "n": 2, "best_of": 3})", "best_of"},
      {R"({"prompt": "a", "echo": "yes"})", "echo"},
      {R"({"prompt": "a", "temperature": 3})", "temperature"},
      {R"({"prompt": "a", "max_tokens": 0})", "max_tokens"},
      {R"({"prompt": "a", "k3_forced_output": "x"})", "k3_forced_output"},
  };
  for (const auto& [body, param] : cases) {
    const Outcome out = Completion(body);
    ASSERT_TRUE(out.exception.empty()) << body << " threw " << out.exception;
    EXPECT_FALSE(out.ok) << body;
    EXPECT_EQ(out.error.http_status, 400) << body;
    EXPECT_EQ(out.error.param, param) << body;
    EXPECT_FALSE(out.error.message.empty()) << body;
  }
  const Outcome array = Completion("[]");
  EXPECT_FALSE(array.ok);
  EXPECT_EQ(array.error.http_status, 400);
}

TEST(CompletionRequest, EchoLogprobsBestOfAndUsage) {
  const Outcome out = Completion(R"({"prompt": "a", "echo": true, "logprobs": 5, "n": 2,
      "best_of": 2, "stream": true, "stream_options": {"include_usage": true}, "max_tokens": 7})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const serve::GenerateRequest& g = out.request.generate;
  EXPECT_TRUE(g.echo);
  EXPECT_TRUE(g.want_logprobs);
  EXPECT_EQ(g.sampling.logprobs, 5);
  EXPECT_EQ(out.request.completion_logprobs, 5);
  EXPECT_EQ(g.sampling.n, 2);
  EXPECT_EQ(g.sampling.max_tokens, 7);
  EXPECT_TRUE(out.request.stream);
  EXPECT_TRUE(out.request.include_usage);

  const Outcome zero = Completion(R"({"prompt": "a", "logprobs": 0})");
  ASSERT_TRUE(zero.ok) << zero.error.message;
  EXPECT_EQ(zero.request.generate.sampling.logprobs, 0);
  EXPECT_TRUE(zero.request.generate.want_logprobs);

  const Outcome none = Completion(R"({"prompt": "a"})");
  ASSERT_TRUE(none.ok);
  EXPECT_EQ(none.request.completion_logprobs, -1);
  EXPECT_FALSE(none.request.generate.want_logprobs);
  EXPECT_FALSE(none.request.generate.echo);
}

TEST(ForcedOutput, OnlyWithTheServerOption) {
  const ApiOptions allowed = {.allow_forced_output = true};
  Outcome out = Chat(R"({"k3_forced_output": "scripted"})", {});
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.http_status, 400);
  EXPECT_EQ(out.error.param, "k3_forced_output");

  out = Chat(R"({"k3_forced_output": "scripted"})", allowed);
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.forced_output, "scripted");

  out = Chat(R"({"k3_forced_output": 5})", allowed);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.param, "k3_forced_output");

  out = Completion(R"({"prompt": "a", "k3_forced_output": "x"})", allowed);
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.request.generate.forced_output, "x");
}

}  // namespace
}  // namespace k3::api::completion_request_test
