// OpenAI Responses API request bodies (POST /v1/responses) -> the typed internal request. The
// body is rewritten into its Chat Completions equivalent (input items via responses_input.h,
// flat function tools, tool_choice, text.format -> response_format, reasoning.effort,
// max_output_tokens) and read by the chat parser, so both protocols share one validator and one
// conversion onto serve::ChatRequest. Stateless unless `k3 serve --responses-store N`
// (responses_store.h): previous_response_id and item_reference are then resolved from the kept
// responses, else a 400; `conversation` is always a 400. Hosted tool types this
// server cannot run (web_search, file_search, code_interpreter, computer_use, mcp, ...) are
// ignored and echoed; an unknown tool type is a 400. See docs/frontend.md, "Responses API".
#pragma once

#include "api/api_error.h"
#include "api/openai_request.h"
#include "api/responses_store.h"

namespace k3::api {

struct ResponsesRequest {
  serve::GenerateRequest generate;
  bool stream = false;
  // The request's settings as the response object repeats them (instructions, tools,
  // tool_choice, parallel_tool_calls, reasoning, text, max_output_tokens, temperature, top_p,
  // store, metadata, user, truncation, ...).
  Json echo = Json::object();
  // The conversation's input items, resolved (what a kept response stores before its output).
  Json input_items = Json::array();
  bool store = true;  // the request's `store` (false: never kept)
};

// `store`: the kept responses (null: none; previous_response_id / item_reference are a 400).
bool ParseResponsesRequest(const Json& body, const ApiOptions& options, ResponsesRequest* out,
                           ApiError* error, const ResponsesStore* store = nullptr);

}  // namespace k3::api
