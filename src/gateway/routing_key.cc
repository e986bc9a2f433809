#include "gateway/routing_key.h"

#include "api/anthropic_request.h"
#include "serve/prompt_ids.h"

namespace k3::gateway {
namespace {

bool ParseGenerate(const std::string& path, const serve::Json& body, const api::ApiOptions& options,
                   serve::GenerateRequest* out, api::ApiError* error) {
  if (path == "/v1/messages") {
    api::AnthropicRequest parsed;
    if (!api::ParseMessagesRequest(body, options, &parsed, error)) return false;
    *out = std::move(parsed.generate);
    return true;
  }
  api::OpenAiRequest parsed;
  const bool ok = path == "/v1/completions"
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
  if (!ParseGenerate(request.path, body, context.api, &generate, &error)) {
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
