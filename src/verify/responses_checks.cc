// Area "responses": POST /v1/responses, the OpenAI Responses API: the response object (status,
// output items, usage), the streamed event sequence (sequence_number from 0 without gaps,
// response.created first, one terminal event last, every item added before its deltas and
// done after them, deltas that add up to the final items), forced function calls valid for
// their schema, text.format json_schema, a function_call_output round trip, and 400s for an
// unknown previous_response_id and an unknown input item.
#include <map>
#include <set>

#include "verify/check_util.h"
#include "verify/checks.h"
#include "verify/json_schema_lite.h"

namespace k3::verify {
namespace {

using nlohmann::json;

constexpr const char* kResponsesArea = "responses";

json ResponsesBody(const CheckContext& ctx, const std::string& input) {
  return {{"model", ctx.model}, {"input", input}, {"max_output_tokens", ctx.max_tokens}};
}

// WeatherTools() in the Responses flat form.
json FlatTools() {
  json tools = json::array();
  for (const auto& tool : WeatherTools()) {
    json flat = tool["function"];
    flat["type"] = "function";
    tools.push_back(std::move(flat));
  }
  return tools;
}

// "" when `body` is a finished response object within `max_tokens`, else the violation.
std::string ResponseShapeError(const json& body, int max_tokens) {
  static const std::set<std::string> kItems = {"message", "reasoning", "function_call"};
  if (!body.is_object() || body.value("object", json()) != "response") return "object not response";
  if (!body.value("id", json()).is_string()) return "no string id";
  const json status = body.value("status", json());
  if (status != "completed" && status != "incomplete") return "status " + status.dump();
  if (!body.value("output", json()).is_array()) return "output is not an array";
  for (const auto& item : body["output"]) {
    if (!item.is_object() || !kItems.count(item.value("type", std::string()))) {
      return "an output item of unexpected type: " + item.dump().substr(0, 200);
    }
    if (item["type"] == "function_call" &&
        (!item.value("call_id", json()).is_string() ||
         !item.value("arguments", json()).is_string() || !item.value("name", json()).is_string())) {
      return "a function_call without string call_id/name/arguments";
    }
  }
  const json usage = body.value("usage", json());
  if (!usage.is_object() || !usage.value("input_tokens", json()).is_number_integer() ||
      !usage.value("output_tokens", json()).is_number_integer() ||
      !usage.value("total_tokens", json()).is_number_integer()) {
    return "usage lacks integer input/output/total tokens";
  }
  if (usage["total_tokens"] != usage["input_tokens"].get<int>() + usage["output_tokens"].get<int>())
    return "total_tokens is not input + output";
  if (usage["output_tokens"].get<int>() > max_tokens)
    return "output_tokens above max_output_tokens";
  return "";
}

// The message items' output_text, concatenated.
std::string OutputText(const json& body) {
  std::string text;
  for (const auto& item : body["output"]) {
    if (item["type"] != "message" || !item.value("content", json()).is_array()) continue;
    for (const auto& part : item["content"]) {
      if (part.value("type", json()) == "output_text") text += StringField(part, "text");
    }
  }
  return text;
}

std::string Ask(const CheckContext& ctx, const json& body, json* response) {
  const Reply reply = ctx.client->Post("/v1/responses", body);
  if (auto e = ExpectOkJson(reply); !e.empty()) return e;
  if (auto e = ResponseShapeError(reply.json, body["max_output_tokens"]); !e.empty()) {
    return e + ": " + Describe(reply);
  }
  *response = reply.json;
  return "";
}

std::string ShapeError(const CheckContext& ctx) {
  json response;
  return Ask(ctx, ResponsesBody(ctx, "Say hello."), &response);
}

// The stream rules of the header comment; *final is the terminal event's response.
std::string StreamError(const std::vector<SseEvent>& events, json* final) {
  std::map<std::string, std::string> deltas;  // item id -> text / arguments / summary deltas
  std::set<std::string> open;
  for (size_t i = 0; i < events.size(); ++i) {
    const json e = json::parse(events[i].data, nullptr, false);
    if (!e.is_object()) return "event " + std::to_string(i) + " is not JSON";
    const std::string type = StringField(e, "type");
    if (e.value("sequence_number", json()) != i) return "sequence_number gap at event " + type;
    if (!events[i].event.empty() && events[i].event != type) return "event name != data.type";
    if (i == 0 && type != "response.created") return "first event is " + type;
    const bool terminal = type == "response.completed" || type == "response.incomplete";
    if (terminal != (i + 1 == events.size())) return "terminal event misplaced: " + type;
    const std::string id =
        e.contains("item") ? StringField(e["item"], "id") : StringField(e, "item_id");
    if (type == "response.output_item.added" && !open.insert(id).second) return "item added twice";
    if (type.ends_with(".delta")) {
      if (!open.count(id)) return type + " outside its item";
      deltas[id] += StringField(e, "delta");
    }
    if (type == "response.output_item.done" && !open.erase(id)) return "done for an unopened item";
    if (terminal) *final = e.value("response", json());
  }
  if (!open.empty()) return "an item was never done";
  if (final->is_null()) return "no terminal event";
  for (const auto& item : final->value("output", json::array())) {
    std::string whole = StringField(item, "arguments");
    if (item.value("type", json()) == "message")
      whole = OutputText({{"output", json::array({item})}});
    if (item.value("type", json()) == "reasoning" && item.value("summary", json()).is_array()) {
      whole.clear();
      for (const auto& part : item["summary"]) whole += StringField(part, "text");
    }
    if (deltas[StringField(item, "id")] != whole) return "deltas do not add up to the final item";
  }
  return "";
}

CheckResult StreamCheck(const CheckContext& ctx) {
  json body = ResponsesBody(ctx, "Count to five.");
  body["stream"] = true;
  const Reply reply = ctx.client->Post("/v1/responses", body);
  if (reply.status != 200 || !reply.streamed) {
    return Fail(kResponsesArea, "responses_stream_sequence",
                "not a 200 stream: " + Describe(reply));
  }
  json final;
  std::string error = StreamError(ParseSse(reply.events), &final);
  if (error.empty()) error = ResponseShapeError(final, ctx.max_tokens);
  return PassUnless(kResponsesArea, "responses_stream_sequence", error);
}

std::string RequiredError(const CheckContext& ctx) {
  json body = ResponsesBody(ctx, "What is the weather in Paris for the next 3 days?");
  body["tools"] = FlatTools();
  body["tool_choice"] = "required";
  body["temperature"] = 0;
  json response;
  if (auto e = Ask(ctx, body, &response); !e.empty()) return e;
  std::vector<StreamedToolCall> calls;
  for (const auto& item : response["output"]) {
    if (item["type"] != "function_call") continue;
    calls.push_back({StringField(item, "call_id"), "function", StringField(item, "name"),
                     StringField(item, "arguments")});
  }
  if (calls.empty()) return "no function_call item: " + response["output"].dump().substr(0, 200);
  return ValidateToolCalls(calls, WeatherTools());
}

// Bounded strings, so a schema-following answer always fits the budget.
json AnswerSchema() {
  return {{"type", "object"},
          {"properties",
           {{"answer", {{"type", "string"}, {"maxLength", 10}}},
            {"score", {{"type", "integer"}, {"minimum", 0}, {"maximum", 9}}}}},
          {"required", {"answer", "score"}},
          {"additionalProperties", false}};
}

std::string JsonSchemaError(const CheckContext& ctx) {
  const json schema = AnswerSchema();
  json body = ResponsesBody(ctx, "Rate the weather as JSON.");
  body["text"] = {
      {"format",
       {{"type", "json_schema"}, {"name", "rating"}, {"schema", schema}, {"strict", true}}}};
  body["temperature"] = 0;
  json response;
  if (auto e = Ask(ctx, body, &response); !e.empty()) return e;
  const std::string text = OutputText(response);
  const json value = json::parse(text, nullptr, false);
  if (value.is_discarded()) {
    return "output_text is not JSON (status " + response["status"].dump() +
           "): " + text.substr(0, 80);
  }
  return ValidateSchema(schema, value);
}

std::string RoundTripError(const CheckContext& ctx) {
  json body = ResponsesBody(ctx, "");
  body["tools"] = FlatTools();
  body["input"] =
      json::array({{{"role", "user"}, {"content", "Weather in Paris for 2 days?"}},
                   {{"type", "function_call"},
                    {"call_id", "call_1"},
                    {"name", "get_weather"},
                    {"arguments", R"({"city":"Paris","days":2})"}},
                   {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "sunny"}}});
  json response;
  return Ask(ctx, body, &response);
}

CheckResult RefusedCheck(const CheckContext& ctx, const char* name, const json& patch) {
  json body = ResponsesBody(ctx, "hi");
  body.merge_patch(patch);
  return PassUnless(kResponsesArea, name,
                    ExpectError(ctx.client->Post("/v1/responses", body), 400, ErrorShape::kOpenAI));
}

}  // namespace

CheckList RunResponsesChecks(const CheckContext& ctx) {
  return {
      PassUnless(kResponsesArea, "responses_object_shape", ShapeError(ctx)),
      StreamCheck(ctx),
      PassUnless(kResponsesArea, "responses_tool_choice_required", RequiredError(ctx)),
      PassUnless(kResponsesArea, "responses_text_format_json_schema", JsonSchemaError(ctx)),
      PassUnless(kResponsesArea, "responses_function_call_output_round_trip", RoundTripError(ctx)),
      RefusedCheck(ctx, "responses_unknown_previous_response_id_400",
                   {{"previous_response_id", "resp_k3verify_unknown"}}),
      RefusedCheck(ctx, "responses_unknown_input_item_400",
                   {{"input", json::array({{{"type", "k3verify_unknown_item"}}})}}),
  };
}

}  // namespace k3::verify
