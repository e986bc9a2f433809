#include "gateway/routing_key.h"

#include "api/anthropic_request.h"
#include "api/responses_request.h"
#include "api/route_table.h"
#include "serve/prompt_ids.h"

namespace k3::gateway {
namespace {

// The server's own converter for the route's protocol.
bool ParseGenerate(const api::HttpRequest& request, const serve::Json& body,
                   const api::ApiOptions& options, serve::GenerateRequest* out,
                   api::ApiError* error) {
  const api::Route* route = api::FindRoute(request.method, request.path);
  const api::Endpoint endpoint = route ? route->endpoint : api::Endpoint::kChatCompletions;
  if (endpoint == api::Endpoint::kMessages) {
    api::AnthropicRequest parsed;
    if (!api::ParseMessagesRequest(body, options, &parsed, error)) return false;
    *out = std::move(parsed.generate);
    return true;
  }
  if (endpoint == api::Endpoint::kResponses) {
    api::ResponsesRequest parsed;
    if (!api::ParseResponsesRequest(body, options, &parsed, error)) return false;
    *out = std::move(parsed.generate);
    return true;
  }
  api::OpenAiRequest parsed;
  const bool ok = endpoint == api::Endpoint::kCompletions
                      ? api::ParseCompletionRequest(body, options, &parsed, error)
                      : api::ParseChatRequest(body, options, &parsed, error);
  if (ok) *out = std::move(parsed.generate);
  return ok;
}

}  // namespace

RoutingKey KeyFor(const api::HttpRequest& request, const KeyContext& context) {
  RoutingKey key;
  if (auto session = request.headers.find(context.session_header);
      session != request.headers.end()) {
    key.session = session->second;
  }
  const serve::Json body = serve::Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    key.error = "the body is not JSON";
    return key;
  }
  serve::GenerateRequest generate;
  api::ApiError error;
  if (!ParseGenerate(request, body, context.api, &generate, &error)) {
    key.error = error.message;
    return key;
  }
  auto ids = serve::PromptIds(*context.tokenizer, *context.format, generate);
  if (!ids.ok()) {
    key.error = ids.status().ToString();
    return key;
  }
  key.parsed = true;
  key.prompt_tokens = static_cast<int64_t>(ids->size());
  key.chain = cache::HashBlocks(*ids, context.block_size).chain;
  return key;
}

}  // namespace k3::gateway
