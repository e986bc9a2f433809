// Anthropic Messages responses from the frontend's updates: the message object, and the SSE event
// stream in the documented order: message_start, then per block content_block_start / _delta /
// _stop (thinking, text, tool_use with input_json_delta), message_delta with stop_reason and
// usage, message_stop. Nothing is sent after message_stop; no empty leading text block. A thinking
// block carries its signature (thinking_signature.h; a signature_delta before its
// content_block_stop when streamed); tool_use ids are re-issued as toolu_ + 24 base62 characters,
// unique within the message (the parser's functions.{name}:{n} has '.' and ':', which Anthropic
// clients refuse).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/openai_response.h"
#include "api/thinking_signature.h"

namespace k3::api {

class AnthropicResponseBuilder {
 public:
  AnthropicResponseBuilder(ResponseMeta meta, bool stream,
                           std::shared_ptr<const ThinkingSigner> signer = nullptr);

  // message_start (streaming), once the prompt's token count is known.
  void Start(int64_t input_tokens, int64_t cached_tokens, std::vector<std::string>* events);
  // Returns true when the message is complete.
  bool Add(const serve::ChoiceUpdate& update, std::vector<std::string>* events);
  std::string Body() const;

 private:
  enum class Block { kNone, kThinking, kText, kToolUse };
  void Open(Block type, const Json& content_block, std::vector<std::string>* events);
  void Close(std::vector<std::string>* events);
  void Delta(const Json& delta, std::vector<std::string>* events) const;
  std::string StopReason() const;
  Json UsageJson() const;
  std::string Signature(const std::string& thinking) const;
  const std::string& ToolId(const std::string& parser_id);

  ResponseMeta meta_;
  bool stream_;
  std::shared_ptr<const ThinkingSigner> signer_;
  std::string open_thinking_;                    // streaming: the open thinking block's text so far
  std::map<std::string, std::string> tool_ids_;  // parser id -> toolu_ id
  bool done_ = false;
  Block open_ = Block::kNone;
  int block_index_ = -1;
  std::string finish_reason_;
  std::optional<std::string> stop_sequence_;
  std::optional<text::output::ParsedOutput> parsed_;
  // The content blocks in the order the events opened them (the non-streamed body keeps the
  // streamed order, e.g. text after a tool call).
  struct BodyBlock {
    Block type;
    std::string text;  // thinking / text, or the tool call's argument JSON
    std::string id, name;
    bool complete = false;  // tool_use: closed with parseable arguments
  };
  void Record(const text::output::OutputEvent& event);
  std::vector<BodyBlock> blocks_;
  std::string text_;  // unparsed output (not used by chat formats that parse)
  serve::Usage usage_;
};

}  // namespace k3::api
