// Server-Sent Events as the verifier reads them, and the two stream contracts it checks:
// OpenAI chat.completion.chunk streams (frontend spec §5.1 "Streaming SSE") and Anthropic
// Messages event streams (§5.3 "Streaming event order"). The validators also rebuild what the
// stream said, so a check can compare it with the non-streamed answer. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3::verify {

// object[key] when it is a string, else "" (stream chunks are untrusted JSON).
std::string StringField(const nlohmann::json& object, const char* key);
// object[key] when it is an integer that fits an int, else `fallback`.
int IntField(const nlohmann::json& object, const char* key, int fallback);

struct SseEvent {
  std::string event;  // the "event:" field ("" when absent)
  std::string data;   // the "data:" lines joined with "\n"
};

// Each element is one framed event ("...\n\n") as the server sent it.
std::vector<SseEvent> ParseSse(const std::vector<std::string>& framed);

struct StreamedToolCall {
  std::string id, type, name, arguments;  // arguments concatenated over the deltas
};

// What an OpenAI chat stream said, choice 0.
struct ChatStreamSummary {
  std::string id;
  std::string content, reasoning_content;
  std::vector<StreamedToolCall> tool_calls;  // by delta index
  std::string finish_reason;
  nlohmann::json usage;  // the usage chunk's usage (null when none)
  size_t num_chunks = 0;
};

struct ChatStreamExpectations {
  bool include_usage = false;                    // stream_options.include_usage was set
  std::string object = "chat.completion.chunk";  // "text_completion" for /v1/completions
};

// "" when the events form a well-formed stream, else the first violation. Rules: every data is
// a JSON chunk of `object` with one id and one created throughout, choices an array; the first
// choice delta has role "assistant"; finish_reason appears once per choice, in its last chunk;
// a new tool call's first delta has id, type "function" and a name; with include_usage exactly
// one chunk has usage, it has choices [] and is the last (the others have usage null or none);
// "data: [DONE]" ends the stream and nothing follows it.
std::string ValidateChatStream(const std::vector<SseEvent>& events,
                               const ChatStreamExpectations& expect, ChatStreamSummary* summary);

struct MessageBlock {
  std::string type;  // text, thinking, tool_use, ...
  std::string text;  // text / thinking concatenated
  std::string id, name;
  std::string input_json;  // tool_use: the partial_json deltas concatenated
};

struct MessageStreamSummary {
  std::vector<MessageBlock> blocks;
  std::string stop_reason;
  nlohmann::json start_usage, final_usage;
};

// "" when the events follow the Messages streaming order, else the first violation: one
// message_start first (type message, role assistant, content [], usage); per block
// content_block_start (indices 0, 1, ... in order), deltas of the block's kind for the open block
// only, content_block_stop; then message_delta with stop_reason and usage.output_tokens, then
// message_stop last. ping may appear anywhere; an "event:" name must match data.type.
std::string ValidateMessageStream(const std::vector<SseEvent>& events,
                                  MessageStreamSummary* summary);

}  // namespace k3::verify
