#include "loadgen/stub_endpoint.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace k3::loadgen {

void StubEndpoint::Handle(const api::HttpRequest& request,
                          std::shared_ptr<api::Responder> responder) {
  ++requests_;
  const auto body = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (request.method != "POST" || !body.is_object()) {
    return responder->Send(400, R"({"error":{"message":"stub: POST a JSON body"}})");
  }
  const auto max_tokens = body.find("max_tokens");
  const int tokens = max_tokens != body.end() && max_tokens->is_number_integer()
                         ? std::clamp(max_tokens->get<int>(), 1, 1 << 16)
                         : 16;
  const bool chat = request.path == "/v1/chat/completions";
  const std::string head = std::string(R"({"id":"stub-1","object":")") +
                           (chat ? "chat.completion.chunk" : "text_completion") +
                           R"(","created":0,"model":"stub","choices":[{"index":0,)";
  responder->StartEventStream();
  for (int i = 0; i < tokens; ++i) {
    responder->SendEvent("data: " + head +
                         (chat ? R"("delta":{"content":" tok"},"finish_reason":null}]})"
                               : R"("text":" tok","finish_reason":null}]})") +
                         "\n\n");
  }
  responder->SendEvent(R"(data: {"id":"stub-1","choices":[],"usage":{"prompt_tokens":8,)"
                       R"("completion_tokens":)" +
                       std::to_string(tokens) + R"(,"total_tokens":)" + std::to_string(tokens + 8) +
                       "}}\n\n");
  responder->SendEvent("data: [DONE]\n\n");
  responder->EndEventStream();
}

}  // namespace k3::loadgen
