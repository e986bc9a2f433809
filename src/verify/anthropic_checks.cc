// Area "anthropic": POST /v1/messages (frontend spec §5.3): the message shape, the streaming
// event order, tool_use blocks (stop_reason tool_use, input objects valid for the schema),
// tool_result round trips and count_tokens.
#include <set>

#include "verify/check_util.h"
#include "verify/checks.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kAnthropicArea = "anthropic";

json AnthropicTools() {
  json tools = json::array();
  for (const auto& tool : WeatherTools()) {
    tools.push_back({{"name", tool["function"]["name"]},
                     {"description", tool["function"]["description"]},
                     {"input_schema", tool["function"]["parameters"]}});
  }
  return tools;
}

// "" when `body` is a Messages response: type message, role assistant, content blocks,
// a known stop_reason, usage with integer input/output tokens (output <= max_tokens).
std::string MessageShapeError(const json& body, int max_tokens) {
  static const std::set<std::string> kStops = {"end_turn",
                                               "max_tokens",
                                               "stop_sequence",
                                               "tool_use",
                                               "pause_turn",
                                               "refusal",
                                               "model_context_window_exceeded"};
  if (!body.is_object() || body.value("type", json()) != "message") return "type is not message";
  if (body.value("role", json()) != "assistant") return "role is not assistant";
  if (!body.value("id", json()).is_string()) return "no string id";
  const json content = body.value("content", json());
  if (!content.is_array()) return "content is not an array";
  for (const auto& block : content) {
    if (!block.is_object() || !block.value("type", json()).is_string())
      return "a block without a type";
    if (block["type"] == "text" && !block.value("text", json()).is_string())
      return "a text block without text";
    if (block["type"] == "tool_use" && !block.value("input", json()).is_object()) {
      return "a tool_use block whose input is not an object: " + block.dump();
    }
  }
  const json stop = body.value("stop_reason", json());
  if (!stop.is_string() || !kStops.count(stop.get<std::string>()))
    return "stop_reason " + stop.dump();
  if (!body.contains("stop_sequence")) return "no stop_sequence field";
  const json usage = body.value("usage", json());
  if (!usage.is_object() || !usage.value("input_tokens", json()).is_number_integer() ||
      !usage.value("output_tokens", json()).is_number_integer()) {
    return "usage lacks integer input_tokens/output_tokens";
  }
  if (usage["output_tokens"].get<int>() > max_tokens) return "output_tokens above max_tokens";
  return "";
}

// Sends a Messages request and checks the shape; "" or what went wrong.
std::string AskMessage(const CheckContext& ctx, const json& body, Reply* reply) {
  *reply = ctx.client->Post("/v1/messages", body);
  if (auto e = ExpectOkJson(*reply); !e.empty()) return e;
  if (auto e = MessageShapeError(reply->json, body["max_tokens"]); !e.empty()) {
    return e + ": " + Describe(*reply);
  }
  return "";
}

// tool_use blocks: at least one, stop_reason tool_use, names declared (only `only` when set),
// inputs JSON objects. Anthropic tools carry no `strict` flag (spec §5.3), so unlike the OpenAI
// strict tools the inputs are not required to validate against input_schema.
std::string ToolUseError(const json& message, const std::string& only) {
  int num_calls = 0;
  for (const auto& block : message["content"]) {
    if (block["type"] != "tool_use") continue;
    ++num_calls;
    const std::string name = block.value("name", "");
    if (name != "get_weather" && name != "get_time") return "a call to the undeclared tool " + name;
    if (!only.empty() && name != only) return "a call to " + name + ", not " + only;
    if (!block.value("input", json()).is_object()) return "input is not an object: " + block.dump();
  }
  if (num_calls == 0)
    return "no tool_use block (stop_reason " + message["stop_reason"].dump() + ")";
  if (message["stop_reason"] != "tool_use") {
    return "stop_reason " + message["stop_reason"].dump() + " with tool_use blocks";
  }
  return "";
}

CheckList ShapeChecks(const CheckContext& ctx) {
  json body = MessagesBody(ctx, "Tell me a short story.", 16);
  body["temperature"] = 0;
  Reply plain;
  const std::string shape = AskMessage(ctx, body, &plain);
  body["stream"] = true;
  const Reply streamed = ctx.client->Post("/v1/messages", body);
  MessageStreamSummary summary;
  std::string order = streamed.status == 200 && streamed.streamed
                          ? ValidateMessageStream(ParseSse(streamed.events), &summary)
                          : "expected a 200 stream, got " + Describe(streamed);
  std::string agree = shape.empty() && order.empty() ? "" : "needs both answers well-formed";
  if (agree.empty()) {
    json blocks = json::array();
    for (const auto& block : summary.blocks) {
      blocks.push_back(block.type == "thinking"
                           ? json{{"type", "thinking"}, {"thinking", block.text}}
                           : json{{"type", block.type}, {"text", block.text}});
    }
    json expected = json::array();
    for (const auto& block : plain.json["content"]) {
      expected.push_back(block["type"] == "thinking"
                             ? json{{"type", "thinking"}, {"thinking", block.value("thinking", "")}}
                             : json{{"type", block["type"]}, {"text", block.value("text", "")}});
    }
    if (blocks != expected || summary.stop_reason != plain.json["stop_reason"]) {
      agree = "streamed " + blocks.dump().substr(0, 120) + " " + summary.stop_reason + " vs " +
              expected.dump().substr(0, 120) + " " + plain.json["stop_reason"].dump();
    }
  }
  return {PassUnless(kAnthropicArea, "messages_shape", shape),
          PassUnless(kAnthropicArea, "messages_stream_event_order", order),
          PassUnless(kAnthropicArea, "messages_stream_matches_non_stream", agree)};
}

CheckList ToolChecks(const CheckContext& ctx) {
  json body =
      MessagesBody(ctx, "What is the weather in Paris for the next 3 days?", ctx.max_tokens);
  body["tools"] = AnthropicTools();
  body["tool_choice"] = {{"type", "any"}};
  Reply reply;
  std::string any = AskMessage(ctx, body, &reply);
  if (any.empty()) any = ToolUseError(reply.json, "");
  body["tool_choice"] = {{"type", "tool"}, {"name", "get_time"}};
  std::string named = AskMessage(ctx, body, &reply);
  if (named.empty()) named = ToolUseError(reply.json, "get_time");
  body["tool_choice"] = {{"type", "any"}};
  body["stream"] = true;
  reply = ctx.client->Post("/v1/messages", body);
  MessageStreamSummary summary;
  std::string streamed = reply.status == 200 && reply.streamed
                             ? ValidateMessageStream(ParseSse(reply.events), &summary)
                             : "expected a 200 stream, got " + Describe(reply);
  if (streamed.empty()) {
    json message = {{"stop_reason", summary.stop_reason}, {"content", json::array()}};
    for (const auto& block : summary.blocks) {
      if (block.type != "tool_use") continue;
      const json input =
          json::parse(block.input_json.empty() ? "{}" : block.input_json, nullptr, false);
      if (input.is_discarded())
        streamed = "input_json_delta pieces are not JSON: " + block.input_json;
      message["content"].push_back(
          {{"type", "tool_use"}, {"id", block.id}, {"name", block.name}, {"input", input}});
    }
    if (streamed.empty()) streamed = ToolUseError(message, "");
  }
  return {PassUnless(kAnthropicArea, "messages_tool_choice_any", any),
          PassUnless(kAnthropicArea, "messages_tool_choice_named", named),
          PassUnless(kAnthropicArea, "messages_tool_use_streamed", streamed)};
}

CheckList ConversationChecks(const CheckContext& ctx) {
  json body = MessagesBody(ctx, "Weather in Paris?", 8);
  body["tools"] = AnthropicTools();
  body["messages"].push_back({{"role", "assistant"},
                              {"content",
                               {{{"type", "tool_use"},
                                 {"id", "toolu_01"},
                                 {"name", "get_weather"},
                                 {"input", {{"city", "Paris"}, {"days", 3}}}}}}});
  body["messages"].push_back(
      {{"role", "user"},
       {"content",
        {{{"type", "tool_result"}, {"tool_use_id", "toolu_01"}, {"content", "sunny, 21C"}}}}});
  Reply reply;
  const std::string round_trip = AskMessage(ctx, body, &reply);
  std::string count = round_trip.empty() ? "" : "needs the round trip's usage";
  if (count.empty()) {
    const json& usage = reply.json["usage"];
    const int64_t input = usage["input_tokens"].get<int64_t>() +
                          usage.value("cache_read_input_tokens", 0) +
                          usage.value("cache_creation_input_tokens", 0);
    json count_body = body;
    count_body.erase("max_tokens");
    const Reply counted = ctx.client->Post("/v1/messages/count_tokens", count_body);
    if (auto e = ExpectOkJson(counted); !e.empty()) {
      count = e;
    } else if (counted.json.value("input_tokens", json()) != json(input)) {
      count = "count_tokens says " + counted.json.value("input_tokens", json()).dump() +
              ", the request's usage says " + std::to_string(input) +
              " (input + cache read + cache creation)";
    }
  }
  json limited = MessagesBody(ctx, "Write a long essay about the sea.", 3);
  std::string limit = AskMessage(ctx, limited, &reply);
  if (limit.empty() && reply.json["stop_reason"] != "max_tokens" &&
      reply.json["usage"]["output_tokens"] == 3) {
    limit = "3 of 3 tokens used but stop_reason " + reply.json["stop_reason"].dump();
  }
  return {PassUnless(kAnthropicArea, "messages_tool_result_round_trip", round_trip),
          PassUnless(kAnthropicArea, "messages_count_tokens_matches_usage", count),
          PassUnless(kAnthropicArea, "messages_stop_reason_max_tokens", limit)};
}

}  // namespace

CheckList RunAnthropicChecks(const CheckContext& ctx) {
  CheckList out = ShapeChecks(ctx);
  for (auto& list : {ToolChecks(ctx), ConversationChecks(ctx), RunAnthropicSessionChecks(ctx),
                     RunAnthropicAgentChecks(ctx)}) {
    for (const auto& result : list) out.push_back(result);
  }
  return out;
}

}  // namespace k3::verify
