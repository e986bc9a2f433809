#include "serve/context_limit.h"

#include <gtest/gtest.h>

namespace k3::serve {
namespace {

TEST(ContextLimit, FitsBelowTheLimit) {
  EXPECT_FALSE(CheckContext(10, std::nullopt, 100));
  EXPECT_FALSE(CheckContext(10, 90, 100));  // exactly the limit fits
}

TEST(ContextLimit, PromptAloneAtOrOverTheLimit) {
  const auto over = CheckContext(100, 5, 100);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->prompt, 100);
  EXPECT_TRUE(over->prompt_alone);  // the prompt decides, whatever max_tokens is
  EXPECT_EQ(over->max_tokens, 5);
  EXPECT_EQ(over->limit, 100);
  EXPECT_EQ(OpenAiContextMessage(*over),
            "This model's maximum context length is 100 tokens. However, your prompt has 100 "
            "tokens.");
}

TEST(ContextLimit, PromptPlusMaxTokensOverTheLimit) {
  const auto over = CheckContext(60, 41, 100);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->max_tokens, 41);
  EXPECT_FALSE(over->prompt_alone);
  EXPECT_EQ(OpenAiContextMessage(*over),
            "This model's maximum context length is 100 tokens. However, you requested 101 tokens "
            "(60 in the prompt, 41 for the completion).");
}

}  // namespace
}  // namespace k3::serve
