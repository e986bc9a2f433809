// OpenAI Responses API request bodies (POST /v1/responses) -> the typed internal request. The
// body is rewritten into its Chat Completions equivalent (input items via responses_input.h,
// flat function tools, tool_choice, text.format -> response_format, reasoning.effort,
// max_output_tokens) and read by the chat parser, so both protocols share one validator and one
// conversion onto serve::ChatRequest. Stateless: previous_response_id / conversation are a 400
// (no response is stored; store:true is accepted and nothing kept). Hosted tool types this
// server cannot run (web_search, file_search, code_interpreter, computer_use, mcp, ...) are
// ignored and echoed; an unknown tool type is a 400. See docs/frontend.md, "Responses API".
#pragma once

#include "api/api_error.h"
#include "api/openai_request.h"

namespace k3::api {

struct ResponsesRequest {
  serve::GenerateRequest generate;
  bool stream = false;
  // The request's settings as the response object repeats them (instructions, tools,
  // tool_choice, parallel_tool_calls, reasoning, text, max_output_tokens, temperature, top_p,
  // store, metadata, user, truncation, ...).
  Json echo = Json::object();
};

bool ParseResponsesRequest(const Json& body, const ApiOptions& options, ResponsesRequest* out,
                           ApiError* error);

}  // namespace k3::api
