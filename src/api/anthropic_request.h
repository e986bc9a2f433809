// Anthropic Messages request bodies -> the internal chat shape (OpenAI-style messages):
// system blocks -> a system message, tool_result blocks -> tool messages, thinking blocks ->
// reasoning_content, tool_use -> tool_calls. Client tool ids (toolu_…) are renamed to Kimi's
// functions.{name}:{n} (n counted over the conversation), because the model relies on that format;
// tool_result ids follow the rename.
#pragma once

#include "api/api_error.h"
#include "api/openai_request.h"

namespace k3::api {

struct AnthropicRequest {
  serve::GenerateRequest generate;
  bool stream = false;
};

bool ParseMessagesRequest(const Json& body, const ApiOptions& options, AnthropicRequest* out,
                          ApiError* error);
// count_tokens: the same conversion, no sampling fields required.
bool ParseCountTokensRequest(const Json& body, Json* chat, ApiError* error);

}  // namespace k3::api
