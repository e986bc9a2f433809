// Fuzzes the request-body parsers that see user bytes first: the first byte picks the endpoint
// (chat completions, completions, messages, count_tokens, responses), the rest is parsed as JSON
// and converted onto the typed request. A valid chat request is then rendered with the K3 chat
// format. Nothing may crash or hang; a rejection must carry a 4xx status and a message; the typed
// conversation survives being written as template JSON and read back unchanged.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/anthropic_request.h"
#include "api/openai_request.h"
#include "api/responses_request.h"
#include "api/thinking_signature.h"
#include "base/check.h"
#include "serve/chat_format.h"
#include "text/chat/conversation_json.h"

namespace {

using k3::api::ApiError;
using k3::api::Json;

void CheckRejection(bool ok, const ApiError& error) {
  if (ok) return;
  K3_CHECK(error.http_status >= 400 && error.http_status < 500) << error.http_status;
  K3_CHECK(!error.message.empty());
}

// What chat templates are given (the typed conversation as JSON) reads back as the same
// conversation.
void CheckRoundTrip(const k3::text::chat::Conversation& conversation) {
  namespace chat = k3::text::chat;
  auto messages = chat::MessagesFromJson(chat::MessagesToJson(conversation.messages));
  K3_CHECK(messages.ok()) << messages.status().ToString();
  K3_CHECK(*messages == conversation.messages);
  auto tools = chat::ToolsFromJson(chat::ToolsToJson(conversation.tools), "tools");
  K3_CHECK(tools.ok()) << tools.status().ToString();
  K3_CHECK(*tools == conversation.tools);
}

void RenderIfChat(const k3::serve::GenerateRequest& request) {
  if (!request.chat) return;
  CheckRoundTrip(request.chat->conversation);
  static const k3::serve::ChatFormat format = k3::serve::ChatFormat::K3();
  auto rendered = format.Render(*request.chat);
  if (!rendered.ok()) K3_CHECK(!rendered.status().message().empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int endpoint = data[0] % 5;
  const Json body = Json::parse(reinterpret_cast<const char*>(data) + 1,
                                reinterpret_cast<const char*>(data) + size, nullptr, false);
  if (body.is_discarded()) return 0;
  k3::api::ApiOptions options;
  options.allow_forced_output = true;
  // Thinking blocks then go through signature verification (random bytes never forge one).
  static const auto signer = std::make_shared<const k3::api::ThinkingSigner>("fuzz signing key 16");
  options.signer = signer;
  ApiError error;
  if (endpoint == 0 || endpoint == 1) {
    k3::api::OpenAiRequest request;
    const bool ok = endpoint == 0
                        ? k3::api::ParseChatRequest(body, options, &request, &error)
                        : k3::api::ParseCompletionRequest(body, options, &request, &error);
    CheckRejection(ok, error);
    if (ok) RenderIfChat(request.generate);
  } else if (endpoint == 2) {
    k3::api::AnthropicRequest request;
    const bool ok = k3::api::ParseMessagesRequest(body, options, &request, &error);
    CheckRejection(ok, error);
    if (ok) RenderIfChat(request.generate);
  } else if (endpoint == 4) {
    k3::api::ResponsesRequest request;
    const bool ok = k3::api::ParseResponsesRequest(body, options, &request, &error);
    CheckRejection(ok, error);
    if (ok) RenderIfChat(request.generate);
  } else {
    k3::serve::ChatRequest chat;
    CheckRejection(k3::api::ParseCountTokensRequest(body, &chat, &error, signer.get()), error);
  }
  return 0;
}
