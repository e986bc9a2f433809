// Content blocks in user messages and inside tool_result: images, text documents, search results;
// PDF documents refused with a 400 that names them.
#include "api/anthropic_blocks.h"

#include <gtest/gtest.h>

#include "api/anthropic_request.h"
#include "serve/chat_format.h"
#include "text/chat/conversation_json.h"

namespace k3::api {
namespace {

using text::chat::Content;
using text::chat::ContentPart;
using text::chat::Message;
using text::chat::Role;

struct Parsed {
  bool ok = false;
  ApiError error;
  AnthropicRequest request;
  const std::vector<Message>& messages() const {
    return request.generate.chat->conversation.messages;
  }
};

// A user turn after a tool call, whose content is `user` (a JSON list of blocks).
Parsed WithUserBlocks(const std::string& user) {
  Json body = Json::parse(R"({"model": "k3", "max_tokens": 64, "messages": [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f",
                                       "input": {}}]}]})");
  body["messages"].push_back({{"role", "user"}, {"content", Json::parse(user)}});
  Parsed out;
  out.ok = ParseMessagesRequest(body, {}, &out.request, &out.error);
  return out;
}

TEST(AnthropicBlocks, ImageInsideToolResultBecomesAnImagePart) {
  const Parsed out = WithUserBlocks(R"([{"type": "tool_result", "tool_use_id": "toolu_1",
    "content": [{"type": "text", "text": "the chart:"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "iVBORw0KGgo="}},
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}]}])");
  ASSERT_TRUE(out.ok) << out.error.message;
  const Message& tool = out.messages()[2];
  EXPECT_EQ(tool.role, Role::kTool);
  EXPECT_EQ(tool.tool_call_id, "functions.f:0");
  EXPECT_EQ(tool.content, Content::Of({ContentPart::Text("the chart:"),
                                       ContentPart::Image("data:image/png;base64,iVBORw0KGgo="),
                                       ContentPart::Image("https://x.test/a.png")}));
}

// What the fuzz target checks of every accepted request: the conversation reads back from the
// templates' JSON unchanged, and the K3 renderer takes it (images as placeholders).
TEST(AnthropicBlocks, ImageToolResultRoundTripsAndRenders) {
  const Parsed out = WithUserBlocks(R"([{"type": "tool_result", "tool_use_id": "toolu_1",
    "content": [{"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}]}])");
  ASSERT_TRUE(out.ok) << out.error.message;
  auto back = text::chat::MessagesFromJson(text::chat::MessagesToJson(out.messages()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, out.messages());
  auto rendered = serve::ChatFormat::K3().Render(*out.request.generate.chat);
  EXPECT_TRUE(rendered.ok()) << rendered.status().ToString();
}

TEST(AnthropicBlocks, TextOnlyToolResultStaysOneString) {
  const Parsed out = WithUserBlocks(R"([{"type": "tool_result", "tool_use_id": "toolu_1",
    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.messages()[2].content, Content::Of("ab"));
}

TEST(AnthropicBlocks, DocumentsAndSearchResultsRenderAsText) {
  const Parsed out = WithUserBlocks(R"([{"type": "tool_result", "tool_use_id": "toolu_1",
    "content": [
      {"type": "document", "title": "Notes", "context": "from the wiki",
       "source": {"type": "text", "media_type": "text/plain", "data": "Paris is sunny."}},
      {"type": "search_result", "source": "https://w.test/p", "title": "Weather",
       "content": [{"type": "text", "text": "21 C"}]},
      {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "c"}]}}
    ]},
    {"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "u"}]},
    {"type": "document", "source": {"type": "text", "data": "plain"}}])");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.messages()[2].content,
            Content::Of("Document: Notes\nContext: from the wiki\nParis is sunny.\n\n"
                        "Search result: Weather\nSource: https://w.test/p\n21 C\n\nc"));
  EXPECT_EQ(out.messages()[3],
            (Message{.role = Role::kUser,
                     .content = Content::Of({ContentPart::Text("Search result: t\nSource: s\nu"),
                                             ContentPart::Text("plain")})}));
}

TEST(AnthropicBlocks, PdfAndBadBlocksAre400) {
  for (
      const char* user : {
          R"([{"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
               "data": "JVBERi0="}}])",
          R"([{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "document",
               "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}}]}])",
          R"([{"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}}])",
          R"([{"type": "document"}])",
          R"([{"type": "document", "source": {"type": "text", "data": 5}}])",
          R"([{"type": "search_result", "source": "s", "title": "t"}])",
          R"([{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "tool_use"}]}])",
          R"([{"type": "tool_result", "tool_use_id": "toolu_1", "content": 5}])",
      }) {
    const Parsed out = WithUserBlocks(user);
    EXPECT_FALSE(out.ok) << user;
    EXPECT_EQ(out.error.http_status, 400) << user;
    EXPECT_TRUE(out.error.param.starts_with("messages[2]")) << user << ": " << out.error.param;
  }
  const Parsed pdf = WithUserBlocks(R"([{"type": "document", "source": {"type": "base64",
    "media_type": "application/pdf", "data": "JVBERi0="}}])");
  EXPECT_NE(pdf.error.message.find("application/pdf"), std::string::npos) << pdf.error.message;
  EXPECT_NE(pdf.error.message.find("PDF"), std::string::npos) << pdf.error.message;
}

}  // namespace
}  // namespace k3::api
