// The Responses API converter (input items, tools, tool_choice, text.format, reasoning, the
// stateless refusals) and the response builder (event order, sequence numbers, stream
// reassembly equal to the non-streamed body).
#include <gtest/gtest.h>

#include <string>

#include "api/responses_request.h"
#include "api/responses_response.h"

namespace k3::api {
namespace {

using text::chat::Role;
using text::chat::ToolChoice;
using text::output::OutputEvent;

struct Outcome {
  bool ok = false;
  ApiError error;
  std::string exception;  // a parse that throws is a bug (a 500, not a 400)
  ResponsesRequest request;
  const serve::ChatRequest& chat() const { return *request.generate.chat; }
};

Outcome Parse(const std::string& text, const ApiOptions& options = {}) {
  Outcome out;
  try {
    out.ok = ParseResponsesRequest(Json::parse(text), options, &out.request, &out.error);
  } catch (const std::exception& e) {
    out.exception = e.what();
  }
  return out;
}

const char* kWeather =
    R"({"type": "function", "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": false}})";

TEST(ResponsesRequest, StringInputAndInstructions) {
  Outcome out = Parse(R"({"model": "m", "input": "hi", "instructions": "be brief",
                          "max_output_tokens": 32, "temperature": 0.5})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const auto& messages = out.chat().conversation.messages;
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].role, Role::kSystem);
  EXPECT_EQ(messages[1].role, Role::kUser);
  EXPECT_EQ(out.request.generate.sampling.max_tokens, 32);
  EXPECT_TRUE(out.request.generate.max_tokens_given);
  EXPECT_DOUBLE_EQ(out.request.generate.sampling.temperature, 0.5);
  EXPECT_EQ(out.request.echo["instructions"], "be brief");
  EXPECT_EQ(out.request.echo["max_output_tokens"], 32);
}

TEST(ResponsesRequest, ToolLoopItems) {
  Outcome out = Parse(std::string(R"({"input": [
      {"role": "user", "content": [{"type": "input_text", "text": "weather?"},
                                   {"type": "input_image", "image_url": "data:image/png;base64,AA"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
      {"type": "function_call", "call_id": "call_x", "name": "get_weather",
       "arguments": "{\"city\":\"Paris\"}"},
      {"type": "function_call_output", "call_id": "call_x", "output": "sunny"},
      {"type": "message", "role": "assistant",
       "content": [{"type": "output_text", "text": "It is sunny."}]},
      {"role": "user", "content": "thanks"}],
     "tools": [)") + kWeather +
                      R"(], "tool_choice": "required", "parallel_tool_calls": false})");
  ASSERT_TRUE(out.ok) << out.error.message;
  const auto& m = out.chat().conversation.messages;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].role, Role::kUser);
  EXPECT_EQ(m[1].role, Role::kAssistant);
  EXPECT_EQ(m[1].reasoning, "think");
  ASSERT_EQ(m[1].tool_calls.size(), 1u);
  EXPECT_EQ(m[1].tool_calls[0].name, "get_weather");
  EXPECT_EQ(m[1].tool_calls[0].id, "functions.get_weather:0");
  EXPECT_EQ(m[2].role, Role::kTool);
  EXPECT_EQ(m[2].tool_call_id, "functions.get_weather:0");  // the client's call_id, renamed
  EXPECT_EQ(m[3].role, Role::kAssistant);
  EXPECT_EQ(m[4].role, Role::kUser);
  ASSERT_EQ(out.chat().conversation.tools.size(), 1u);
  EXPECT_EQ(out.chat().conversation.tools[0].strict, true);  // the Responses default
  EXPECT_EQ(out.chat().tool_choice.mode, ToolChoice::Mode::kRequired);
  EXPECT_FALSE(out.chat().parallel_tool_calls);
  EXPECT_EQ(out.request.echo["tools"][0]["strict"], true);
}

TEST(ResponsesRequest, NamedChoiceAndHostedToolsIgnored) {
  Outcome out = Parse(std::string(R"({"input": "x", "tools": [{"type": "web_search"},)") +
                      kWeather + R"(, {"type": "mcp", "server_label": "s"}],
      "tool_choice": {"type": "function", "name": "get_weather"}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.chat().conversation.tools.size(), 1u);
  EXPECT_EQ(out.chat().tool_choice.mode, ToolChoice::Mode::kFunction);
  EXPECT_EQ(out.chat().tool_choice.function, "get_weather");
  EXPECT_EQ(out.request.echo["tools"].size(), 3u);  // hosted ones echoed
}

TEST(ResponsesRequest, TextFormatAndReasoning) {
  Outcome out = Parse(R"({"input": "x", "reasoning": {"effort": "minimal", "summary": "auto"},
      "text": {"format": {"type": "json_schema", "name": "answer", "strict": true,
                          "schema": {"type": "object", "properties": {"a": {"type": "integer"}},
                                     "required": ["a"], "additionalProperties": false}}}})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_EQ(out.chat().response_format.type, text::chat::ResponseFormat::Type::kJsonSchema);
  EXPECT_EQ(out.chat().thinking.effort, "minimal");  // resolved per format by serve/effort.h
  EXPECT_EQ(out.request.echo["reasoning"]["effort"], "minimal");
  Outcome off = Parse(R"({"input": "x", "reasoning": {"effort": "none"}})");
  ASSERT_TRUE(off.ok) << off.error.message;
  EXPECT_EQ(off.chat().thinking.effort, "none");  // thinking off, by serve::ResolveThinking
}

TEST(ResponsesRequest, AcceptedStatelessFields) {
  Outcome out = Parse(R"({"input": "x", "store": true, "metadata": {"k": "v"}, "user": "u",
      "include": ["reasoning.encrypted_content"], "stream": true, "truncation": "disabled"})");
  ASSERT_TRUE(out.ok) << out.error.message;
  EXPECT_TRUE(out.request.stream);
  EXPECT_EQ(out.request.echo["metadata"]["k"], "v");
  EXPECT_EQ(out.request.echo["store"], true);
}

// Each bad body is a 400 naming the field, never an exception.
TEST(ResponsesRequest, BadBodiesAre400) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "input"},
      {R"({"input": 3})", "input"},
      {R"({"input": []})", "input"},
      {R"({"input": "x", "previous_response_id": "resp_1"})", "previous_response_id"},
      {R"({"input": "x", "conversation": "c"})", "conversation"},
      {R"({"input": "x", "background": true})", "background"},
      {R"({"input": [{"type": "item_reference", "id": "msg_1"}]})", "input[0]"},
      {R"({"input": [{"type": "web_search_call"}]})", "input[0]"},
      {R"({"input": [{"role": "robot", "content": "x"}]})", "input[0]"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_file"}]}]})",
       "input[0].content[0]"},
      {R"({"input": [{"type": "function_call", "name": "f"}]})", "input[0]"},
      {R"({"input": [{"type": "function_call_output", "call_id": "c"}]})", "input[0]"},
      {R"({"input": "x", "tools": [{"type": "teleport"}]})", "tools[0].type"},
      {R"({"input": "x", "tools": "no"})", "tools"},
      {R"({"input": "x", "tool_choice": "required"})", "tool_choice"},
      {R"({"input": "x", "tool_choice": {"type": "web_search"}})", "tool_choice"},
      {R"({"input": "x", "reasoning": {"effort": "huge"}})", "reasoning.effort"},
      {R"({"input": "x", "text": {"format": {"type": "yaml"}}})", "text.format.type"},
      {R"({"input": "x", "include": ["message.output_text.logprobs"]})", "include"},
      {R"({"input": "x", "max_output_tokens": 0})", "max_output_tokens"},
      {R"({"input": "x", "text": {"format": {"type": "json_schema", "schema": {}}}})",
       "text.format"},
      {R"({"input": "x", "metadata": 3})", "metadata"},
      {R"({"input": "x", "store": "yes"})", "store"},
  };
  for (const auto& [body, param] : cases) {
    Outcome out = Parse(body);
    EXPECT_TRUE(out.exception.empty()) << body << ": " << out.exception;
    EXPECT_FALSE(out.ok) << body;
    EXPECT_EQ(out.error.http_status, 400) << body;
    EXPECT_EQ(out.error.param, param) << body << ": " << out.error.message;
  }
}

TEST(ResponsesStore, PreviousResponseAndItemReferenceResolve) {
  ResponsesStore store(2);
  const Json output = Json::parse(R"([
      {"id": "fc_1", "type": "function_call", "call_id": "functions.f:0", "name": "f",
       "arguments": "{}", "status": "completed"}])");
  store.Put("resp_1", Json::parse(R"([{"role": "user", "content": "hi"}])"), output);
  ResponsesRequest request;
  ApiError error;
  const std::string tools = R"("tools": [{"type": "function", "name": "f"}])";
  ASSERT_TRUE(ParseResponsesRequest(
      Json::parse(R"({"previous_response_id": "resp_1", )" + tools +
                  R"(, "input": [{"type": "function_call_output", "call_id": "functions.f:0",
                                  "output": "ok"}]})"),
      {}, &request, &error, &store))
      << error.message;
  const auto& messages = request.generate.chat->conversation.messages;
  ASSERT_EQ(messages.size(), 3u);  // user, assistant call, tool result
  EXPECT_EQ(messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(request.input_items.size(), 3u);
  ASSERT_TRUE(ParseResponsesRequest(Json::parse(R"({"input": [{"role": "user", "content": "hi"},
                                {"type": "item_reference", "id": "fc_1"}], )" +
                                                tools + "}"),
                                    {}, &request, &error, &store))
      << error.message;
  EXPECT_EQ(request.generate.chat->conversation.messages.size(), 2u);
  // Unknown ids, and an evicted response, are 400s naming the field.
  EXPECT_FALSE(ParseResponsesRequest(Json::parse(R"({"previous_response_id": "resp_x",
      "input": "x"})"),
                                     {}, &request, &error, &store));
  EXPECT_EQ(error.param, "previous_response_id");
  store.Put("resp_2", Json::array(), Json::array());
  store.Put("resp_3", Json::array(), Json::array());
  EXPECT_FALSE(
      ParseResponsesRequest(Json::parse(R"({"input": [{"type": "item_reference", "id": "fc_1"}]})"),
                            {}, &request, &error, &store));
  EXPECT_EQ(error.param, "input[0]");
}

// --- the builder ---

serve::ChoiceUpdate Update(std::vector<OutputEvent> events, int64_t tokens) {
  serve::ChoiceUpdate u;
  u.events = std::move(events);
  u.usage = {
      .prompt_tokens = 10, .completion_tokens = tokens, .cached_tokens = 4, .reasoning_tokens = 1};
  return u;
}

struct Built {
  std::vector<Json> events;
  Json body;
};

Built Build(std::vector<serve::ChoiceUpdate> updates, const char* finish, bool stream) {
  updates.back().finish_reason = finish;
  ResponsesBuilder builder({"resp_abc", 7, "k3"}, Json{{"tools", Json::array()}}, stream);
  std::vector<std::string> framed;
  builder.Start(10, &framed);
  for (const auto& u : updates) builder.Add(u, &framed);
  Built out;
  for (const std::string& f : framed) {
    out.events.push_back(Json::parse(f.substr(f.find("data: ") + 6)));
  }
  out.body = Json::parse(builder.Body());
  return out;
}

std::vector<serve::ChoiceUpdate> Mixed() {
  return {Update({{.kind = OutputEvent::kReasoning, .text = "hm"}}, 1),
          Update({{.kind = OutputEvent::kContent, .text = "ok "},
                  {.kind = OutputEvent::kContent, .text = "then"}},
                 3),
          Update({{.kind = OutputEvent::kToolCallBegin,
                   .tool_index = 0,
                   .id = "functions.f:0",
                   .name = "f"},
                  {.kind = OutputEvent::kToolCallArguments, .text = "{\"a\":", .tool_index = 0},
                  {.kind = OutputEvent::kToolCallArguments, .text = "1}", .tool_index = 0},
                  {.kind = OutputEvent::kToolCallEnd, .tool_index = 0, .complete = true}},
                 6)};
}

TEST(ResponsesBuilder, EventOrderAndSequence) {
  Built out = Build(Mixed(), "tool_calls", true);
  std::vector<std::string> types;
  for (size_t i = 0; i < out.events.size(); ++i) {
    EXPECT_EQ(out.events[i]["sequence_number"], i);
    types.push_back(out.events[i]["type"]);
  }
  const std::vector<std::string> expected = {"response.created",
                                             "response.in_progress",
                                             "response.output_item.added",
                                             "response.reasoning_summary_part.added",
                                             "response.reasoning_summary_text.delta",
                                             "response.reasoning_summary_text.done",
                                             "response.reasoning_summary_part.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.content_part.added",
                                             "response.output_text.delta",
                                             "response.output_text.delta",
                                             "response.output_text.done",
                                             "response.content_part.done",
                                             "response.output_item.done",
                                             "response.output_item.added",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.done",
                                             "response.output_item.done",
                                             "response.completed"};
  EXPECT_EQ(types, expected);
  const Json& done = out.events.back()["response"];
  EXPECT_EQ(done, out.body);  // the final event's response is the non-streamed body
  EXPECT_EQ(out.events[0]["response"]["status"], "in_progress");
}

TEST(ResponsesBuilder, BodyItemsAndUsage) {
  Built out = Build(Mixed(), "tool_calls", false);
  EXPECT_TRUE(out.events.empty());
  const Json& body = out.body;
  EXPECT_EQ(body["object"], "response");
  EXPECT_EQ(body["status"], "completed");
  ASSERT_EQ(body["output"].size(), 3u);
  EXPECT_EQ(body["output"][0]["type"], "reasoning");
  EXPECT_EQ(body["output"][0]["summary"][0]["text"], "hm");
  EXPECT_EQ(body["output"][1]["content"][0]["type"], "output_text");
  EXPECT_EQ(body["output"][1]["content"][0]["text"], "ok then");
  EXPECT_EQ(body["output"][2]["type"], "function_call");
  EXPECT_EQ(body["output"][2]["call_id"], "functions.f:0");
  EXPECT_EQ(body["output"][2]["arguments"], "{\"a\":1}");
  EXPECT_EQ(body["output"][2]["status"], "completed");
  EXPECT_EQ(body["usage"]["input_tokens"], 10);
  EXPECT_EQ(body["usage"]["output_tokens"], 6);
  EXPECT_EQ(body["usage"]["total_tokens"], 16);
  EXPECT_EQ(body["usage"]["input_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(body["usage"]["output_tokens_details"]["reasoning_tokens"], 1);
}

TEST(ResponsesBuilder, LengthIsIncomplete) {
  Built out =
      Build({Update({{.kind = OutputEvent::kToolCallBegin, .id = "functions.f:0", .name = "f"},
                     {.kind = OutputEvent::kToolCallArguments, .text = "{\"a\""}},
                    2)},
            "length", true);
  EXPECT_EQ(out.events.back()["type"], "response.incomplete");
  EXPECT_EQ(out.body["status"], "incomplete");
  EXPECT_EQ(out.body["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(out.body["output"][0]["status"], "incomplete");
}

TEST(ResponsesBuilder, ErrorIsFailed) {
  std::vector<serve::ChoiceUpdate> updates = {Update({}, 0)};
  updates[0].error = "boom";
  Built out = Build(updates, "error", true);
  EXPECT_EQ(out.events.back()["type"], "response.failed");
  EXPECT_EQ(out.body["error"]["message"], "boom");
}

}  // namespace
}  // namespace k3::api
