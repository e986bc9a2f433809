#include "verify/sse.h"

#include <climits>
#include <cstdint>
#include <map>
#include <set>

namespace k3::verify {

std::string StringField(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : "";
}

int IntField(const nlohmann::json& object, const char* key, int fallback) {
  if (!object.is_object() || !object.contains(key)) return fallback;
  const nlohmann::json& value = object[key];
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    return v <= static_cast<uint64_t>(INT_MAX) ? static_cast<int>(v) : fallback;
  }
  if (value.is_number_integer()) {
    const auto v = value.get<int64_t>();
    return v >= INT_MIN && v <= INT_MAX ? static_cast<int>(v) : fallback;
  }
  return fallback;
}
namespace {

using nlohmann::json;

// Reads the OpenAI chunks in order; each method returns "" or the first violation.
class ChatStreamReader {
 public:
  ChatStreamReader(const ChatStreamExpectations& expect, ChatStreamSummary* out)
      : expect_(expect), out_(out) {}

  std::string Chunk(size_t chunk_idx, const json& chunk) {
    const std::string where = "chunk " + std::to_string(chunk_idx) + ": ";
    if (!chunk.is_object()) return where + "not a JSON object";
    if (StringField(chunk, "object") != expect_.object) {
      return where + "object is '" + StringField(chunk, "object") + "', expected '" +
             expect_.object + "'";
    }
    if (chunk_idx == 0) {
      out_->id = StringField(chunk, "id");
      created_ = chunk.value("created", json());
      if (out_->id.empty()) return where + "no id";
    } else if (StringField(chunk, "id") != out_->id || chunk.value("created", json()) != created_) {
      return where + "id/created changed from " + out_->id + " to " + StringField(chunk, "id");
    }
    if (usage_seen_) return where + "a chunk after the usage chunk";
    if (!chunk.contains("choices") || !chunk["choices"].is_array()) {
      return where + "choices is not an array (got " + chunk.value("choices", json()).dump() + ")";
    }
    const json usage = chunk.value("usage", json());
    if (!usage.is_null()) {
      if (!expect_.include_usage) return where + "usage without stream_options.include_usage";
      if (!chunk["choices"].empty()) return where + "the usage chunk has non-empty choices";
      usage_seen_ = true;
      out_->usage = usage;
    }
    for (const auto& choice : chunk["choices"]) {
      if (auto e = Choice(choice); !e.empty()) return where + e;
    }
    return "";
  }

  std::string End(bool saw_done) {
    if (!saw_done) return "the stream did not end with data: [DONE]";
    if (expect_.include_usage && !usage_seen_) return "no usage chunk (include_usage was set)";
    if (!first_delta_seen_) return "no choice chunk at all";
    if (finished_.empty()) return "no chunk carried a finish_reason";
    return "";
  }

 private:
  std::string Choice(const json& choice) {
    const int index = IntField(choice, "index", -1);
    if (index < 0) return "a choice without an index";
    if (finished_.count(index)) return "choice " + std::to_string(index) + " after its finish";
    if (expect_.object == "chat.completion.chunk") {
      const json delta = choice.value("delta", json());
      if (!delta.is_object()) return "delta is not an object";
      if (!first_delta_seen_ && StringField(delta, "role") != "assistant") {
        return "the first delta has role '" + StringField(delta, "role") +
               "', expected 'assistant'";
      }
      if (index == 0) {
        if (auto e = Delta(delta); !e.empty()) return e;
      }
    } else if (index == 0) {
      out_->content += StringField(choice, "text");
    }
    first_delta_seen_ = true;
    const json finish = choice.value("finish_reason", json());
    if (!finish.is_null()) {
      finished_.insert(index);
      if (index == 0) out_->finish_reason = finish.is_string() ? finish.get<std::string>() : "?";
    }
    return "";
  }

  std::string Delta(const json& delta) {
    out_->content += StringField(delta, "content");
    out_->reasoning_content += StringField(delta, "reasoning_content");
    if (!delta.contains("tool_calls") || delta["tool_calls"].is_null()) return "";
    if (!delta["tool_calls"].is_array()) return "delta.tool_calls is not an array";
    for (const auto& call : delta["tool_calls"]) {
      const int index = IntField(call, "index", -1);
      if (index < 0) return "a tool_calls delta without an index";
      const json function = call.value("function", json::object());
      if (static_cast<size_t>(index) == out_->tool_calls.size()) {
        StreamedToolCall started{StringField(call, "id"), StringField(call, "type"),
                                 StringField(function, "name"), ""};
        if (started.id.empty() || started.type != "function" || started.name.empty()) {
          return "tool call " + std::to_string(index) +
                 " starts without id, type \"function\" and a name: " + call.dump();
        }
        out_->tool_calls.push_back(started);
      } else if (static_cast<size_t>(index) > out_->tool_calls.size()) {
        return "tool call index " + std::to_string(index) + " skips an index";
      }
      out_->tool_calls[index].arguments += StringField(function, "arguments");
    }
    return "";
  }

  const ChatStreamExpectations& expect_;
  ChatStreamSummary* out_;
  json created_;
  bool usage_seen_ = false;
  bool first_delta_seen_ = false;
  std::set<int> finished_;
};

}  // namespace

std::vector<SseEvent> ParseSse(const std::vector<std::string>& framed) {
  std::vector<SseEvent> events;
  for (const std::string& text : framed) {
    SseEvent event;
    bool has_data = false;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      start = end + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const size_t colon = line.find(':');
      if (line.empty() || colon == 0) continue;  // blank or a comment
      const std::string field = line.substr(0, colon);
      std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
      if (field == "event") event.event = value;
      if (field == "data") {
        event.data += (has_data ? "\n" : "") + value;
        has_data = true;
      }
    }
    if (has_data || !event.event.empty()) events.push_back(std::move(event));
  }
  return events;
}

std::string ValidateChatStream(const std::vector<SseEvent>& events,
                               const ChatStreamExpectations& expect, ChatStreamSummary* summary) {
  *summary = ChatStreamSummary{};
  ChatStreamReader reader(expect, summary);
  bool saw_done = false;
  for (const SseEvent& event : events) {
    if (saw_done) return "an event after data: [DONE]";
    if (event.data == "[DONE]") {
      saw_done = true;
      continue;
    }
    const json chunk = json::parse(event.data, nullptr, /*allow_exceptions=*/false);
    if (chunk.is_discarded())
      return "chunk " + std::to_string(summary->num_chunks) + " is not JSON";
    if (auto e = reader.Chunk(summary->num_chunks++, chunk); !e.empty()) return e;
  }
  return reader.End(saw_done);
}

}  // namespace k3::verify
