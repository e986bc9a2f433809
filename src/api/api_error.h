// Errors as each protocol shapes them. OpenAI: {"error": {"message", "type", "param", "code"}};
// Anthropic: {"type": "error", "error": {"type", "message"}}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "serve/context_limit.h"

namespace k3::api {

using Json = nlohmann::ordered_json;

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string param;  // the offending field, when one is to blame
};

inline ApiError BadRequest(std::string message, std::string param = "") {
  return {400, std::move(message), std::move(param)};
}

// INVALID_ARGUMENT/OUT_OF_RANGE/FAILED_PRECONDITION -> 400, NOT_FOUND -> 404,
// RESOURCE_EXHAUSTED -> 429, UNAVAILABLE -> 503, anything else -> 500.
ApiError FromStatus(const base::Status& status);

// A context-limit 400 in Anthropic's wordings, which clients parse to recover (Claude Code lowers
// max_tokens on the first, compacts on the second):
//   "input length and max_tokens exceed context limit: P + C > L, decrease input length or
//    max_tokens and try again"  (the prompt fits, prompt + max_tokens does not)
//   "prompt is too long: N tokens > L maximum"  (the prompt alone leaves no room)
ApiError AnthropicContextError(const serve::ContextOverflow& overflow);

std::string OpenAiErrorBody(const ApiError& error);
std::string AnthropicErrorBody(const ApiError& error);

// Which protocol's shape an endpoint answers errors in.
enum class Dialect { kOpenAi, kAnthropic };
std::string ErrorBody(Dialect dialect, const ApiError& error);
// The Anthropic error type for an HTTP status ("invalid_request_error", "overloaded_error", ...).
std::string AnthropicErrorType(int http_status);

}  // namespace k3::api
