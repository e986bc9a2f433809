// Helpers the check files share: request bodies, the error-shape contracts, and reading a
// non-streamed chat answer into the same form the stream validator rebuilds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/check.h"
#include "verify/client.h"
#include "verify/sse.h"

namespace k3::verify {

// {"model", "messages": [{"role": "user", "content": user_text}], "max_tokens"}.
nlohmann::json ChatBody(const CheckContext& ctx, const std::string& user_text, int max_tokens);
// {"model", "max_tokens", "messages": [{"role": "user", "content": user_text}]}.
nlohmann::json MessagesBody(const CheckContext& ctx, const std::string& user_text, int max_tokens);

enum class ErrorShape {
  kOpenAI,     // {"error": {"message", "type", "param", "code"}}
  kAnthropic,  // {"type": "error", "error": {"type", "message"}}
  kAny,        // either of the two
};
// "" when `reply` is HTTP `status` with a body of `shape`, else what came back instead.
std::string ExpectError(const Reply& reply, int status, ErrorShape shape);

// "" when `reply` is HTTP 200 with a JSON body, else a description of what came back.
std::string ExpectOkJson(const Reply& reply);

// Choice 0 of a non-streamed chat.completion, in the stream summary's form. "" or a violation
// of the response shape (object, choices[0].message.role, tool call shape).
std::string ReadChatCompletion(const nlohmann::json& body, ChatStreamSummary* answer);

// Tool calls against the request's tools: every name declared, arguments a JSON object valid
// for that tool's parameters (json_schema_lite). "" or the first violation.
std::string ValidateToolCalls(const std::vector<StreamedToolCall>& calls,
                              const nlohmann::json& tools);

// "" when a chat usage object has integer prompt/completion/total tokens, prompt > 0,
// total = prompt + completion and completion <= max_tokens; else the violation.
std::string ChatUsageError(const nlohmann::json& usage, int max_tokens);

// A strict weather tool (two required properties of different types, no extras) and a
// second tool with an enum, used by the tool checks.
nlohmann::json WeatherTools();

}  // namespace k3::verify
