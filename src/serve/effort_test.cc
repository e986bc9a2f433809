#include "serve/effort.h"

#include <gtest/gtest.h>

#include "serve/chat_format.h"

namespace k3::serve {
namespace {

ResolvedThinking Resolve(std::optional<bool> enabled, std::optional<std::string> effort) {
  return ResolveThinking({.enabled = enabled, .effort = std::move(effort)});
}

TEST(Effort, EveryNameMapsToAK3Level) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"minimal", "low"}, {"low", "low"},   {"medium", "high"},
      {"high", "high"},   {"xhigh", "max"}, {"max", "max"}};
  for (const auto& [requested, level] : table) {
    const ResolvedThinking r = Resolve(std::nullopt, requested);
    EXPECT_TRUE(r.enabled) << requested;
    EXPECT_FALSE(r.explicit_flag) << requested;
    EXPECT_EQ(r.k3_effort, level) << requested;
  }
  EXPECT_EQ(EffortNames().size(), table.size() + 1);  // and "none"
}

TEST(Effort, NoneTurnsThinkingOffAndDisabledWins) {
  EXPECT_FALSE(Resolve(std::nullopt, "none").enabled);
  EXPECT_EQ(Resolve(true, "none").explicit_flag, false);
  EXPECT_FALSE(Resolve(false, "high").enabled);
  const ResolvedThinking absent = Resolve(std::nullopt, std::nullopt);
  EXPECT_TRUE(absent.enabled);
  EXPECT_FALSE(absent.explicit_flag);
  EXPECT_EQ(absent.k3_effort, "max");
  EXPECT_EQ(Resolve(true, std::nullopt).explicit_flag, true);
}

TEST(Effort, UnknownIsKeptForTheRendererToName) {
  EXPECT_EQ(Resolve(std::nullopt, "extreme").k3_effort, "extreme");
}

// The K3 prompt names the mapped level, and every accepted value renders (the note lists medium,
// so medium must not be a 400).
std::string RenderedK3(std::optional<std::string> effort) {
  ChatRequest request;
  request.conversation.messages.push_back(
      {.role = text::chat::Role::kUser, .content = text::chat::Content::Of("hi")});
  request.thinking.effort = std::move(effort);
  auto rendered = ChatFormat::K3().Render(request);
  if (!rendered.ok()) return "error: " + rendered.status().message();
  std::string text;
  for (const auto& segment : rendered->segments) text += segment.text;
  return text;
}

TEST(Effort, K3RendersTheMappedLevel) {
  EXPECT_NE(RenderedK3("medium").find("invoked with `thinking_effort=high`"), std::string::npos);
  EXPECT_NE(RenderedK3("minimal").find("`thinking_effort=low`"), std::string::npos);
  EXPECT_NE(RenderedK3("xhigh").find("`thinking_effort=max`"), std::string::npos);
  EXPECT_NE(RenderedK3(std::nullopt).find("`thinking_effort=max`"), std::string::npos);
  const std::string off = RenderedK3("none");
  EXPECT_EQ(off.find("thinking_effort="), std::string::npos) << off;
  EXPECT_NE(off.find("<|open|>response<|sep|>"), std::string::npos) << off;
  for (const std::string& name : EffortNames()) {
    EXPECT_FALSE(RenderedK3(name).starts_with("error")) << name;
  }
}

}  // namespace
}  // namespace k3::serve
