// CheckSoakResponse: what each soak request kind must get back (soak_requests.h).
#include <nlohmann/json.hpp>

#include "loadgen/soak_requests.h"

namespace k3::loadgen {
namespace {

using Json = nlohmann::json;

std::string Snippet(const std::string& text) {
  return text.size() <= 160 ? text : text.substr(0, 160) + "...";
}

// Total accessors: a missing member, a non-object or a member of another type reads as null / "".
const Json& Get(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
std::string Str(const Json& j, const char* key) {
  const Json& v = Get(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}
bool IsString(const Json& j, const char* key) { return Get(j, key).is_string(); }

// A 4xx in the protocol's own error shape.
std::string CheckError(const SoakRequest& request, const Json& body) {
  const bool anthropic = request.path == "/v1/messages";
  if (!Get(body, "error").is_object() || !IsString(Get(body, "error"), "message")) {
    return "error body without error.message";
  }
  if (anthropic && (Str(body, "type") != "error" || !IsString(Get(body, "error"), "type"))) {
    return "not Anthropic's error shape";
  }
  if (request.kind == SoakKind::kOversize &&
      Str(Get(body, "error"), "message").find("context") == std::string::npos) {
    return "an over-long prompt refused without naming the context limit";
  }
  return "";
}

std::string CheckToolCall(const Json& choice) {
  if (Str(choice, "finish_reason") != "tool_calls") {
    return "forced tool call ended with finish_reason " + Get(choice, "finish_reason").dump();
  }
  const Json& calls = Get(Get(choice, "message"), "tool_calls");
  if (!calls.is_array() || calls.empty()) return "forced tool call: no tool_calls";
  for (const Json& call : calls) {
    if (Str(Get(call, "function"), "name") != "get_weather") return "tool call of an unknown tool";
    const Json args = Json::parse(Str(Get(call, "function"), "arguments"), nullptr, false);
    if (!args.is_object()) return "tool call arguments are not a JSON object";
  }
  return "";
}

std::string CheckStructured(const Json& choice) {
  const Json& content = Get(Get(choice, "message"), "content");
  if (!content.is_string()) return "structured output without content";
  const Json value = Json::parse(content.get<std::string>(), nullptr, false);
  if (!Get(value, "ok").is_boolean() || !Get(value, "n").is_number_integer()) {
    return "structured output does not match its schema: " + Snippet(content.get<std::string>());
  }
  return "";
}

std::string CheckBody(const SoakRequest& request, const Json& body) {
  const bool completion = request.path == "/v1/completions";
  if (!Get(body, "choices").is_array()) return "no choices";
  const size_t want = request.kind == SoakKind::kMultiChoice ? 3 : 1;
  if (body["choices"].size() != want) {
    return std::to_string(body["choices"].size()) + " choices, want " + std::to_string(want);
  }
  if (Str(body, "object") != (completion ? "text_completion" : "chat.completion")) {
    return "object is " + Get(body, "object").dump();
  }
  for (const Json& choice : body["choices"]) {
    if (!choice.is_object() || !IsString(choice, "finish_reason")) return "choice without finish";
    if (completion ? !IsString(choice, "text") : !Get(choice, "message").is_object()) {
      return "choice without text/message";
    }
  }
  if (!Get(body, "usage").is_object()) return "no usage";
  if (request.kind == SoakKind::kToolCall) return CheckToolCall(body["choices"][0]);
  if (request.kind == SoakKind::kStructured) return CheckStructured(body["choices"][0]);
  return "";
}

// Every `data:` payload of a stream, in order ([DONE] as the string "[DONE]"), plus event names.
struct Events {
  std::vector<Json> data;
  std::vector<std::string> names;
  bool bad = false;
};

Events SplitEvents(const std::string& text) {
  Events out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find("\n\n", at);
    if (end == std::string::npos) end = text.size();
    const std::string event = text.substr(at, end - at);
    at = end + 2;
    size_t line_at = 0;
    while (line_at < event.size()) {
      size_t nl = event.find('\n', line_at);
      if (nl == std::string::npos) nl = event.size();
      const std::string line = event.substr(line_at, nl - line_at);
      line_at = nl + 1;
      if (line.starts_with("event:")) {
        out.names.push_back(line.substr(std::min(line.size(), line.find_first_not_of(' ', 6))));
      }
      if (!line.starts_with("data:")) continue;
      const std::string data = line.substr(std::min(line.size(), line.find_first_not_of(' ', 5)));
      if (data == "[DONE]") {
        out.data.emplace_back("[DONE]");
        continue;
      }
      out.data.push_back(Json::parse(data, nullptr, false));
      if (out.data.back().is_discarded()) out.bad = true;
    }
  }
  return out;
}

std::string CheckStream(const SoakRequest& request, const SoakResponse& response) {
  const Events events = SplitEvents(response.body);
  if (events.bad) return "a stream event is not JSON";
  for (const Json& d : events.data) {
    if (!Get(d, "error").is_null()) return "error event: " + Snippet(d.dump());
  }
  if (response.cancelled) return "";  // abandoned on purpose: what came so far was well-formed
  if (request.path == "/v1/messages") {
    if (events.names.empty() || events.names.front() != "message_start") return "no message_start";
    if (events.names.back() != "message_stop") return "stream did not end with message_stop";
    return "";
  }
  if (events.data.empty() || events.data.back() != Json("[DONE]")) return "stream without [DONE]";
  bool finished = false, usage = false;
  for (const Json& d : events.data) {
    if (!d.is_object()) continue;
    if (Get(d, "usage").is_object()) usage = true;
    const Json& choices = Get(d, "choices");
    for (const Json& choice : choices.is_array() ? choices : Json::array()) {
      if (IsString(choice, "finish_reason")) finished = true;
    }
  }
  if (!finished) return "stream without a finish_reason";
  if (request.kind == SoakKind::kChatStream && !usage) return "stream without usage";
  return "";
}

}  // namespace

std::string CheckSoakResponse(const SoakRequest& request, const SoakResponse& response) {
  if (response.status != request.expect_status) {
    return "HTTP " + std::to_string(response.status) + ", want " +
           std::to_string(request.expect_status) + ": " + Snippet(response.body);
  }
  if (response.streamed) return CheckStream(request, response);
  const Json body = Json::parse(response.body, nullptr, false);
  if (body.is_discarded()) return "body is not JSON: " + Snippet(response.body);
  if (request.expect_status != 200) return CheckError(request, body);
  if (request.stream) return "a stream answered as one body";
  return CheckBody(request, body);
}

}  // namespace k3::loadgen
