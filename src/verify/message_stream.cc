// ValidateMessageStream (sse.h): the Anthropic Messages streaming order as a small state machine.
#include "verify/sse.h"

namespace k3::verify {
namespace {

using nlohmann::json;

enum class Phase {
  kBeforeStart,    // nothing yet: message_start must come first
  kBetweenBlocks,  // after message_start or a content_block_stop
  kInBlock,        // a content block is open
  kDelta,          // message_delta seen: only message_stop may follow
  kStopped,        // message_stop seen: nothing may follow
};

// The delta type each block kind takes.
bool DeltaFits(const std::string& block_type, const std::string& delta_type) {
  if (block_type == "text") return delta_type == "text_delta";
  if (block_type == "thinking")
    return delta_type == "thinking_delta" || delta_type == "signature_delta";
  if (block_type == "tool_use") return delta_type == "input_json_delta";
  return true;  // kinds this verifier does not know take any delta
}

class MessageStreamReader {
 public:
  explicit MessageStreamReader(MessageStreamSummary* out) : out_(out) {}

  std::string Event(const std::string& type, const json& data) {
    if (type == "ping") return "";
    if (type == "error") return "an error event: " + data.dump();
    if (phase_ == Phase::kStopped) return "'" + type + "' after message_stop";
    if (phase_ == Phase::kBeforeStart && type != "message_start") {
      return "the first event is '" + type + "', expected message_start";
    }
    if (type == "message_start") return Start(data);
    if (type == "content_block_start") return BlockStart(data);
    if (type == "content_block_delta") return BlockDelta(data);
    if (type == "content_block_stop") {
      if (phase_ != Phase::kInBlock) return "content_block_stop without an open block";
      if (IntField(data, "index", -1) != open_index_) return "content_block_stop for another index";
      phase_ = Phase::kBetweenBlocks;
      return "";
    }
    if (type == "message_delta") return Delta(data);
    if (type == "message_stop") {
      if (phase_ != Phase::kDelta) return "message_stop before message_delta";
      phase_ = Phase::kStopped;
      return "";
    }
    return "unknown event type '" + type + "'";
  }

  std::string End() const {
    return phase_ == Phase::kStopped ? "" : "the stream ended without message_stop";
  }

 private:
  std::string Start(const json& data) {
    if (phase_ != Phase::kBeforeStart) return "a second message_start";
    const json message = data.value("message", json());
    if (StringField(message, "type") != "message" || StringField(message, "role") != "assistant") {
      return "message_start.message is not {type: message, role: assistant}";
    }
    if (message.value("content", json()) != json::array()) {
      return "message_start.message.content is not []";
    }
    out_->start_usage = message.value("usage", json());
    if (!out_->start_usage.is_object() || !out_->start_usage.contains("input_tokens")) {
      return "message_start.message.usage lacks input_tokens";
    }
    phase_ = Phase::kBetweenBlocks;
    return "";
  }

  std::string BlockStart(const json& data) {
    if (phase_ != Phase::kBetweenBlocks)
      return "content_block_start while a block is open or after message_delta";
    const int index = IntField(data, "index", -1);
    if (index != static_cast<int>(out_->blocks.size())) {
      return "content_block_start index " + std::to_string(index) + ", expected " +
             std::to_string(out_->blocks.size());
    }
    const json block = data.value("content_block", json());
    MessageBlock started{StringField(block, "type"), "", StringField(block, "id"),
                         StringField(block, "name"), ""};
    if (started.type.empty()) return "content_block_start without content_block.type";
    if (started.type == "tool_use" && (started.id.empty() || started.name.empty())) {
      return "a tool_use block starts without id and name";
    }
    started.text = StringField(block, "text") + StringField(block, "thinking");
    out_->blocks.push_back(started);
    open_index_ = index;
    phase_ = Phase::kInBlock;
    return "";
  }

  std::string BlockDelta(const json& data) {
    if (phase_ != Phase::kInBlock) return "content_block_delta outside a block";
    if (IntField(data, "index", -1) != open_index_) return "content_block_delta for a closed index";
    const json delta = data.value("delta", json());
    MessageBlock& block = out_->blocks.back();
    const std::string type = StringField(delta, "type");
    if (!DeltaFits(block.type, type)) return "a " + type + " in a " + block.type + " block";
    block.text += StringField(delta, "text") + StringField(delta, "thinking");
    block.input_json += StringField(delta, "partial_json");
    return "";
  }

  std::string Delta(const json& data) {
    if (phase_ == Phase::kInBlock) return "message_delta while a block is open";
    if (phase_ != Phase::kBetweenBlocks) return "a second message_delta";
    out_->stop_reason = StringField(data.value("delta", json()), "stop_reason");
    if (out_->stop_reason.empty()) return "message_delta without delta.stop_reason";
    out_->final_usage = data.value("usage", json());
    if (!out_->final_usage.is_object() || !out_->final_usage.contains("output_tokens")) {
      return "message_delta without usage.output_tokens";
    }
    phase_ = Phase::kDelta;
    return "";
  }

  MessageStreamSummary* out_;
  Phase phase_ = Phase::kBeforeStart;
  int open_index_ = -1;
};

}  // namespace

std::string ValidateMessageStream(const std::vector<SseEvent>& events,
                                  MessageStreamSummary* summary) {
  *summary = MessageStreamSummary{};
  MessageStreamReader reader(summary);
  for (size_t event_idx = 0; event_idx < events.size(); ++event_idx) {
    const SseEvent& event = events[event_idx];
    const json data = json::parse(event.data, nullptr, /*allow_exceptions=*/false);
    const std::string where = "event " + std::to_string(event_idx) + ": ";
    if (data.is_discarded() || !data.is_object()) return where + "data is not a JSON object";
    const std::string type = StringField(data, "type");
    if (!event.event.empty() && event.event != type) {
      return where + "event name '" + event.event + "' but data.type '" + type + "'";
    }
    if (auto e = reader.Event(type, data); !e.empty()) return where + e;
  }
  return reader.End();
}

}  // namespace k3::verify
