// Anthropic Messages request bodies -> the typed chat request (serve::ChatRequest): system blocks
// -> a system message (role:"system" entries inside messages stay where they stand), thinking
// enabled/adaptive/disabled and output_config.effort -> the thinking options, tool_result blocks ->
// tool messages (before the rest of their user turn), thinking blocks -> reasoning, tool_use ->
// tool calls, input_schema -> parameters. Client tool ids (toolu_…) are renamed to Kimi's
// functions.{name}:{n} (n counted over the conversation), because the model relies on that format;
// tool_result ids follow the rename. The converted request is held to the OpenAI validator's rules
// (non-empty conversation, valid unique tool names, a tool_choice that fits), with its messages and
// params.
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
// A thinking block sent back must carry a signature `signer` issued (400 otherwise); a null signer
// checks none. redacted_thinking blocks (never issued here) are dropped.
bool ParseCountTokensRequest(const Json& body, serve::ChatRequest* chat, ApiError* error,
                             const ThinkingSigner* signer = nullptr);

}  // namespace k3::api
