#include "api/api_error.h"

namespace k3::api {
namespace {

std::string OpenAiErrorType(int status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 413:
      return "invalid_request_error";
    case 429:
      return "rate_limit_exceeded";
    case 503:
      return "service_unavailable";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

ApiError FromStatus(const base::Status& status) {
  switch (status.code()) {
    case base::StatusCode::kInvalidArgument:
    case base::StatusCode::kOutOfRange:
    case base::StatusCode::kFailedPrecondition:
    case base::StatusCode::kUnimplemented:
      return {400, status.message(), ""};
    case base::StatusCode::kNotFound:
      return {404, status.message(), ""};
    case base::StatusCode::kResourceExhausted:
      return {429, status.message(), ""};
    case base::StatusCode::kUnavailable:
      return {503, status.message(), ""};
    default:
      return {500, status.message(), ""};
  }
}

ApiError AnthropicContextError(const serve::ContextOverflow& overflow) {
  const std::string limit = std::to_string(overflow.limit);
  // A prompt exactly at the limit with max_tokens given: "P + C > L" stays true, "N > L" would not.
  if (overflow.max_tokens && overflow.prompt <= overflow.limit) {
    return BadRequest(
        "input length and max_tokens exceed context limit: " + std::to_string(overflow.prompt) +
        " + " + std::to_string(*overflow.max_tokens) + " > " + limit +
        ", decrease input length or max_tokens and try again");
  }
  return BadRequest("prompt is too long: " + std::to_string(overflow.prompt) + " tokens > " +
                    limit + " maximum");
}

std::string OpenAiErrorBody(const ApiError& error) {
  Json body = {{"error",
                {{"message", error.message},
                 {"type", OpenAiErrorType(error.http_status)},
                 {"param", error.param.empty() ? Json(nullptr) : Json(error.param)},
                 {"code", error.http_status}}}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string AnthropicErrorType(int http_status) {
  switch (http_status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

std::string AnthropicErrorBody(const ApiError& error) {
  std::string message = error.message;
  if (!error.param.empty()) message = error.param + ": " + message;
  Json body = {{"type", "error"},
               {"error", {{"type", AnthropicErrorType(error.http_status)}, {"message", message}}}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ErrorBody(Dialect dialect, const ApiError& error) {
  return dialect == Dialect::kAnthropic ? AnthropicErrorBody(error) : OpenAiErrorBody(error);
}

}  // namespace k3::api
