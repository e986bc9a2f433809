// The request kinds of `k3 bench soak` (soak_runner.h): each kind's body, the status it must get,
// and the check of what came back. Checks judge the response as a client would (the JSON parses,
// the stream ends properly, a forced tool call is a call whose arguments are JSON, a structured
// output parses, n choices come back, a bad request gets a 4xx in the API's error shape), so a
// server bug shows as a failure with a reason, never as a pass.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace k3::loadgen {

enum class SoakKind {
  kChat,            // non-streamed chat completion
  kChatStream,      // streamed chat completion with usage
  kCompletion,      // /v1/completions, non-streamed
  kMessagesStream,  // Anthropic /v1/messages, streamed
  kCancel,          // streamed chat the client abandons (closes the socket) after two events
  kToolCall,        // tool_choice "required" with one tool: must end in a call
  kStructured,      // response_format json_schema: the content must parse as JSON
  kMultiChoice,     // n = 3: three choices
  kBadJson,         // malformed JSON body: 400
  kBadField,        // a field of the wrong type/range: 400
  kOversize,        // a prompt longer than the context: 400
  kBadMessages,     // Anthropic body without max_tokens: 400 in Anthropic's error shape
  kUnknownModel,    // a model name the server does not serve: answered (k3 serve has one model)
  kCount
};
const char* SoakKindName(SoakKind kind);

struct SoakContext {
  std::string model = "k3-demo";
  int max_tokens = 24;        // per generation (structured/tool kinds get more to finish)
  int64_t max_model_len = 0;  // from /v1/models; 0: no oversize requests
};

struct SoakRequest {
  SoakKind kind = SoakKind::kChat;
  std::string path;
  std::string body;
  bool stream = false;
  int expect_status = 200;
  int cancel_after_events = 0;  // > 0: close the connection after this many events
};

SoakRequest BuildSoakRequest(SoakKind kind, const SoakContext& context, std::mt19937_64& rng);

// What came back: a whole body (non-streamed or an error), or the stream's events concatenated.
struct SoakResponse {
  int status = 0;  // 200 for a stream
  std::string body;
  bool streamed = false;
  bool cancelled = false;  // the client closed it on purpose
};

// Empty when the response is what `request` must get; otherwise why not (one line).
std::string CheckSoakResponse(const SoakRequest& request, const SoakResponse& response);

}  // namespace k3::loadgen
