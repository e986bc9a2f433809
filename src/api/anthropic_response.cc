#include "api/anthropic_response.h"

namespace k3::api {
namespace {

using text::output::OutputEvent;

std::string Event(const std::string& name, const Json& data) {
  return "event: " + name + "\ndata: " + Dump(data) + "\n\n";
}

}  // namespace

AnthropicResponseBuilder::AnthropicResponseBuilder(ResponseMeta meta, bool stream,
                                                   std::shared_ptr<const ThinkingSigner> signer)
    : meta_(std::move(meta)), stream_(stream), signer_(std::move(signer)) {}

std::string AnthropicResponseBuilder::Signature(const std::string& thinking) const {
  return signer_ ? signer_->Sign(thinking) : std::string();
}

// toolu_01 + the call's number (base62) + 21 characters mixed from the message id and that
// number: unique within the message by the number, distinct across messages by their ids.
const std::string& AnthropicResponseBuilder::ToolId(const std::string& parser_id) {
  static constexpr char kBase62[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  auto [it, added] = tool_ids_.try_emplace(parser_id);
  if (!added) return it->second;
  const uint64_t number = tool_ids_.size() - 1;
  uint64_t state = 0xcbf29ce484222325ull ^ number;
  for (const char c : meta_.id) state = (state ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  std::string id = "toolu_01";
  id += kBase62[number % 62];
  for (int i = 0; i < 21; ++i) {
    state += 0x9e3779b97f4a7c15ull;  // splitmix64 steps
    uint64_t z = (state ^ (state >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    id += kBase62[(z ^ (z >> 31)) % 62];
  }
  it->second = std::move(id);
  return it->second;
}

Json AnthropicResponseBuilder::UsageJson() const {
  return {{"input_tokens", usage_.prompt_tokens - usage_.cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", usage_.cached_tokens},
          {"output_tokens", usage_.completion_tokens}};
}

void AnthropicResponseBuilder::Start(int64_t input_tokens, int64_t cached_tokens,
                                     std::vector<std::string>* events) {
  usage_.prompt_tokens = input_tokens;
  usage_.cached_tokens = cached_tokens;
  if (!stream_) return;
  Json message = {{"id", meta_.id},           {"type", "message"},        {"role", "assistant"},
                  {"model", meta_.model},     {"content", Json::array()}, {"stop_reason", nullptr},
                  {"stop_sequence", nullptr}, {"usage", UsageJson()}};
  events->push_back(Event("message_start", {{"type", "message_start"}, {"message", message}}));
  events->push_back(Event("ping", {{"type", "ping"}}));
}

void AnthropicResponseBuilder::Open(Block type, const Json& content_block,
                                    std::vector<std::string>* events) {
  Close(events);
  open_ = type;
  ++block_index_;
  events->push_back(Event("content_block_start", {{"type", "content_block_start"},
                                                  {"index", block_index_},
                                                  {"content_block", content_block}}));
}

void AnthropicResponseBuilder::Close(std::vector<std::string>* events) {
  if (open_ == Block::kNone) return;
  if (open_ == Block::kThinking) {
    Delta({{"type", "signature_delta"}, {"signature", Signature(open_thinking_)}}, events);
    open_thinking_.clear();
  }
  open_ = Block::kNone;
  events->push_back(
      Event("content_block_stop", {{"type", "content_block_stop"}, {"index", block_index_}}));
}

void AnthropicResponseBuilder::Delta(const Json& delta, std::vector<std::string>* events) const {
  events->push_back(
      Event("content_block_delta",
            {{"type", "content_block_delta"}, {"index", block_index_}, {"delta", delta}}));
}

bool AnthropicResponseBuilder::Add(const serve::ChoiceUpdate& update,
                                   std::vector<std::string>* events) {
  if (done_ || update.index != 0) return done_;
  usage_.completion_tokens = update.usage.completion_tokens;
  usage_.cached_tokens = update.usage.cached_tokens;
  for (const OutputEvent& e : update.events) Record(e);
  if (stream_) {
    for (const OutputEvent& e : update.events) {
      switch (e.kind) {
        case OutputEvent::kReasoning:
          if (e.text.empty()) break;
          if (open_ != Block::kThinking) {
            Open(Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}},
                 events);
          }
          open_thinking_ += e.text;
          Delta({{"type", "thinking_delta"}, {"thinking", e.text}}, events);
          break;
        case OutputEvent::kContent:
          if (e.text.empty()) break;
          if (open_ != Block::kText) Open(Block::kText, {{"type", "text"}, {"text", ""}}, events);
          Delta({{"type", "text_delta"}, {"text", e.text}}, events);
          break;
        case OutputEvent::kToolCallBegin:
          Open(Block::kToolUse,
               {{"type", "tool_use"},
                {"id", ToolId(e.id)},
                {"name", e.name},
                {"input", Json::object()}},
               events);
          break;
        case OutputEvent::kToolCallArguments:
          if (open_ == Block::kToolUse && !e.text.empty()) {
            Delta({{"type", "input_json_delta"}, {"partial_json", e.text}}, events);
          }
          break;
        case OutputEvent::kToolCallEnd:
          Close(events);
          break;
      }
    }
  }
  text_ += update.text;
  if (!update.finish_reason) return false;
  done_ = true;
  finish_reason_ = *update.finish_reason;
  stop_sequence_ = update.matched_stop;
  parsed_ = update.parsed;
  if (stream_) {
    Close(events);
    events->push_back(
        Event("message_delta",
              {{"type", "message_delta"},
               {"delta",
                {{"stop_reason", StopReason()},
                 {"stop_sequence", stop_sequence_ ? Json(*stop_sequence_) : Json(nullptr)}}},
               {"usage", UsageJson()}}));
    events->push_back(Event("message_stop", {{"type", "message_stop"}}));
  }
  return true;
}

void AnthropicResponseBuilder::Record(const OutputEvent& e) {
  auto open = [&](Block type) -> BodyBlock& {
    if (blocks_.empty() || blocks_.back().type != type || type == Block::kToolUse) {
      blocks_.push_back({type, "", "", "", false});
    }
    return blocks_.back();
  };
  switch (e.kind) {
    case OutputEvent::kReasoning:
      if (!e.text.empty()) open(Block::kThinking).text += e.text;
      break;
    case OutputEvent::kContent:
      if (!e.text.empty()) open(Block::kText).text += e.text;
      break;
    case OutputEvent::kToolCallBegin: {
      BodyBlock& block = open(Block::kToolUse);
      block.id = ToolId(e.id);
      block.name = e.name;
      break;
    }
    case OutputEvent::kToolCallArguments:
      if (!blocks_.empty() && blocks_.back().type == Block::kToolUse) {
        blocks_.back().text += e.text;
      }
      break;
    case OutputEvent::kToolCallEnd:
      if (!blocks_.empty() && blocks_.back().type == Block::kToolUse) {
        blocks_.back().complete = e.complete;
      }
      break;
  }
}

std::string AnthropicResponseBuilder::StopReason() const {
  if (stop_sequence_) return "stop_sequence";
  if (finish_reason_ == "tool_calls") return "tool_use";
  if (finish_reason_ == "length") return "max_tokens";
  return "end_turn";
}

std::string AnthropicResponseBuilder::Body() const {
  Json content = Json::array();
  for (const BodyBlock& block : blocks_) {
    switch (block.type) {
      case Block::kThinking:
        content.push_back(
            {{"type", "thinking"}, {"thinking", block.text}, {"signature", Signature(block.text)}});
        break;
      case Block::kText:
        content.push_back({{"type", "text"}, {"text", block.text}});
        break;
      case Block::kToolUse: {
        if (!block.complete) break;  // cut by the length limit: not a call
        Json input = Json::parse(block.text, nullptr, /*allow_exceptions=*/false);
        if (!input.is_object()) input = Json::object();
        content.push_back(
            {{"type", "tool_use"}, {"id", block.id}, {"name", block.name}, {"input", input}});
        break;
      }
      default:
        break;
    }
  }
  if (blocks_.empty() && !text_.empty()) content.push_back({{"type", "text"}, {"text", text_}});
  Json body = {{"id", meta_.id},
               {"type", "message"},
               {"role", "assistant"},
               {"model", meta_.model},
               {"content", content},
               {"stop_reason", StopReason()},
               {"stop_sequence", stop_sequence_ ? Json(*stop_sequence_) : Json(nullptr)},
               {"usage", UsageJson()}};
  return Dump(body);
}

}  // namespace k3::api
