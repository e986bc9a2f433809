#include "verify/client.h"

namespace k3::verify {
namespace {

constexpr size_t kDescribeChars = 240;

}  // namespace

Reply Client::Send(const std::string& method, const std::string& path, std::string body,
                   Auth auth) {
  api::HttpRequest request{method, path, {}, std::move(body)};
  if (method == "POST") request.headers["content-type"] = "application/json";
  // Anthropic clients always send a version; servers may require it on /v1/messages.
  if (path.starts_with("/v1/messages")) request.headers["anthropic-version"] = "2023-06-01";
  const std::string key = auth == Auth::kWrong ? "k3-verify-wrong-key" : options_.api_key;
  if (auth != Auth::kNone && !key.empty()) {
    request.headers["authorization"] = "Bearer " + key;
    request.headers["x-api-key"] = key;
  }
  boost::asio::io_context io;
  Reply reply;
  gateway::CallOutcome outcome = gateway::CallOutcome::kUnreachable;
  gateway::CallSink sink;
  sink.on_response = [&](int status, std::string text, std::string) {
    reply.status = status;
    reply.body = std::move(text);
    return true;
  };
  sink.on_stream_start = [&] {
    reply.status = 200;
    reply.streamed = true;
  };
  sink.on_event = [&](std::string framed) { reply.events.push_back(std::move(framed)); };
  sink.on_finish = [&](gateway::CallOutcome o) { outcome = o; };
  auto call = gateway::StartUpstreamCall(io, options_.server, request, std::move(sink),
                                         {options_.timeout, options_.timeout});
  io.run();
  if (outcome != gateway::CallOutcome::kDone) {
    reply.error = method + " " + path + ": " + gateway::CallOutcomeName(outcome);
    if (!reply.streamed) reply.status = 0;
  }
  if (!reply.streamed) {
    reply.json = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    reply.is_json = !reply.json.is_discarded();
  }
  return reply;
}

std::string Describe(const Reply& reply) {
  if (reply.status == 0) return "no answer (" + reply.error + ")";
  std::string text = "HTTP " + std::to_string(reply.status);
  if (reply.streamed) return text + " stream of " + std::to_string(reply.events.size()) + " events";
  std::string body = reply.body.size() > kDescribeChars
                         ? reply.body.substr(0, kDescribeChars) + "..."
                         : reply.body;
  return body.empty() ? text : text + " " + body;
}

}  // namespace k3::verify
