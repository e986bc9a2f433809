// The typed conversation from and to OpenAI-style JSON: every golden request's messages and tools
// read and written back are the golden's own (what chat templates get from a typed request is
// what they got from the body), typed values survive the round trip, and malformed fields are
// INVALID_ARGUMENT naming them.
#include "text/chat/conversation_json.h"

#include <gtest/gtest.h>

#include <sstream>

#include "testing/paths.h"

namespace k3::text::chat {
namespace {

// Key order aside (the renderers sort tools and read messages by key).
nlohmann::json Unordered(const Json& value) { return nlohmann::json::parse(value.dump()); }

// The messages as the writer gives them back: `reasoning` (vLLM's name) is the reasoning, written
// under the one name chat templates read, reasoning_content.
Json WithReasoningContent(Json messages) {
  for (Json& message : messages) {
    if (!message.contains("reasoning")) continue;
    if (!message.contains("reasoning_content")) message["reasoning_content"] = message["reasoning"];
    message.erase("reasoning");
  }
  return messages;
}

TEST(ConversationJson, GoldenRequestsRoundTrip) {
  int checked = 0;
  for (const char* file : {"k3_render.jsonl", "k2_render.jsonl", "k25_render.jsonl"}) {
    std::istringstream lines(
        ::k3::testing::ReadFileOrDie(::k3::testing::SharedDir() + "/goldens/chat/" + file));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      const Json request = Json::parse(line)["request"];
      SCOPED_TRACE(std::string(file) + ": " + request.dump().substr(0, 200));
      auto messages = MessagesFromJson(request["messages"]);
      ASSERT_TRUE(messages.ok()) << messages.status().ToString();
      EXPECT_EQ(Unordered(MessagesToJson(*messages)),
                Unordered(WithReasoningContent(request["messages"])));
      if (request.contains("tools")) {
        auto tools = ToolsFromJson(request["tools"], "tools");
        ASSERT_TRUE(tools.ok()) << tools.status().ToString();
        EXPECT_EQ(Unordered(ToolsToJson(*tools)), Unordered(request["tools"]));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 49 + 40 + 40);
}

TEST(ConversationJson, TypedValuesRoundTrip) {
  Message system{.role = Role::kSystem, .content = Content::Of("")};
  system.tools = {Tool{.name = "late", .parameters = Json::object(), .strict = true}};
  Message user{.role = Role::kUser,
               .content = Content::Of({ContentPart::Text("a"), ContentPart::Image("u"),
                                       ContentPart{ContentPart::Kind::kVideo, "", "v"}})};
  user.name = "ann";
  Message assistant{.role = Role::kAssistant, .content = Content::Null(), .reasoning = "hm"};
  assistant.tool_calls = {{.id = "c1", .name = "f", .arguments = Json("{\"x\": 1}")},
                          {.id = std::nullopt, .name = "g", .arguments = Json::parse(R"({"y":2})")},
                          {.id = "c3", .name = "h", .arguments = std::nullopt}};
  Message result{.role = Role::kTool, .content = Content::Of("ok")};
  result.tool_call_id = "c1";
  result.tool = "f";
  Message bare{.role = Role::kUser};  // content absent
  const std::vector<Message> messages = {system, user, assistant, result, bare};
  auto back = MessagesFromJson(MessagesToJson(messages));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, messages);
  EXPECT_FALSE(MessagesToJson(messages)[4].contains("content"));

  const std::vector<Tool> tools = {{.name = "f", .description = "d", .parameters = Json::object()},
                                   {.name = "g", .strict = false}};
  auto tools_back = ToolsFromJson(ToolsToJson(tools), "tools");
  ASSERT_TRUE(tools_back.ok());
  EXPECT_EQ(*tools_back, tools);
}

TEST(ConversationJson, ChoiceAndFormat) {
  EXPECT_EQ(*ToolChoiceFromJson(Json("required")), (ToolChoice{ToolChoice::Mode::kRequired, ""}));
  EXPECT_EQ(*ToolChoiceFromJson(Json("none")), (ToolChoice{ToolChoice::Mode::kNone, ""}));
  EXPECT_EQ(*ToolChoiceFromJson(Json("auto")), ToolChoice());
  EXPECT_EQ(*ToolChoiceFromJson(Json()), ToolChoice());
  EXPECT_EQ(*ToolChoiceFromJson(Json::parse(R"({"type": "function", "function": {"name": "f"}})")),
            (ToolChoice{ToolChoice::Mode::kFunction, "f"}));
  EXPECT_FALSE(ToolChoiceFromJson(Json(1)).ok());

  auto format = ResponseFormatFromJson(Json::parse(
      R"({"type": "json_schema", "json_schema": {"name": "p", "schema": {"type": "object"}}})"));
  ASSERT_TRUE(format.ok());
  EXPECT_EQ(format->type, ResponseFormat::Type::kJsonSchema);
  EXPECT_EQ(format->name, "p");
  EXPECT_EQ(format->schema, Json::parse(R"({"type": "object"})"));
  EXPECT_TRUE(format->strict);
  EXPECT_EQ(ResponseFormatFromJson(Json("json_object"))->type, ResponseFormat::Type::kJsonObject);
  EXPECT_EQ(ResponseFormatFromJson(Json::parse(R"({"type": "text"})"))->type,
            ResponseFormat::Type::kText);
  EXPECT_TRUE(ResponseFormatFromJson(Json::parse(R"({"type": "json_schema"})"))->schema.is_null());
  EXPECT_FALSE(ResponseFormatFromJson(Json::parse(R"({"type": 1})")).ok());
}

void ExpectInvalid(const char* messages_json, const std::string& field,
                   const MessageReadOptions& options = {}) {
  auto result = MessagesFromJson(Json::parse(messages_json), options);
  ASSERT_FALSE(result.ok()) << messages_json;
  EXPECT_EQ(result.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(field), std::string::npos) << result.status().message();
}

TEST(ConversationJson, MalformedFieldsNameThemselves) {
  ExpectInvalid(R"({})", "messages");
  ExpectInvalid(R"([{"role": "user"}, 3])", "messages[1]");
  ExpectInvalid(R"([{"role": "developer", "content": "x"}])", "messages[0].role");
  ExpectInvalid(R"([{"role": "user", "content": "x", "name": 7}])", "messages[0].name");
  ExpectInvalid(R"([{"role": "user", "content": [{"type": "text"}]}])",
                "messages[0].content[0].text");
  ExpectInvalid(R"([{"role": "assistant", "reasoning": 2}])", "messages[0].reasoning");
  ExpectInvalid(R"([{"role": "assistant", "tool_calls": [{"function": {"name": 1}}]}])",
                "messages[0].tool_calls[0].function.name");
  ExpectInvalid(R"([{"role": "tool", "tool": 1}])", "messages[0].tool");
  ExpectInvalid(R"([{"role": "system", "tools": [{"function": {}}]}])",
                "messages[0].tools[0].function.name");
  auto developer = MessagesFromJson(Json::parse(R"([{"role": "developer", "content": "x"}])"),
                                    {.developer_is_system = true});
  ASSERT_TRUE(developer.ok());
  EXPECT_EQ((*developer)[0].role, Role::kSystem);
}

}  // namespace
}  // namespace k3::text::chat
