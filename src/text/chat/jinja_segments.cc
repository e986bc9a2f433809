#include "text/chat/jinja_segments.h"

#include <string_view>

namespace k3::text::chat {
namespace {

// STX "k3:" N ETX: control characters no tokenizer special, template or client text carries in
// this form (a client string that contains one only makes the check below fail, never leaks).
constexpr char kOpen = '\x02';
constexpr char kClose = '\x03';

class Marker {
 public:
  // Replaces `text` by a marker (empty strings are left alone: nothing to isolate).
  void Mark(std::string* text) {
    if (text->empty()) return;
    originals_.push_back(std::move(*text));
    *text = std::string(1, kOpen) + "k3:" + std::to_string(originals_.size() - 1) + kClose;
  }
  void Mark(Content* content) {
    if (content->form == Content::Form::kText) Mark(&content->text);
    for (ContentPart& part : content->parts) {
      if (part.kind == ContentPart::Kind::kText) Mark(&part.text);
    }
  }
  const std::vector<std::string>& originals() const { return originals_; }

 private:
  std::vector<std::string> originals_;
};

Conversation MarkClientText(Conversation conversation, Marker* marker) {
  for (Message& message : conversation.messages) {
    marker->Mark(&message.content);
    marker->Mark(&message.reasoning);
    for (ToolCall& call : message.tool_calls) {
      if (call.arguments && call.arguments->is_string()) {
        std::string text = call.arguments->get<std::string>();
        marker->Mark(&text);
        *call.arguments = text;
      }
    }
  }
  return conversation;
}

// Splits the marked render; false when a marker is malformed or unknown.
bool Split(std::string_view marked, const std::vector<std::string>& originals, ChatSegments* out) {
  size_t pos = 0;
  while (pos < marked.size()) {
    const size_t open = marked.find(kOpen, pos);
    if (open == std::string_view::npos) {
      out->push_back({std::string(marked.substr(pos)), true});
      break;
    }
    if (open > pos) out->push_back({std::string(marked.substr(pos, open - pos)), true});
    const size_t close = marked.find(kClose, open);
    if (close == std::string_view::npos || marked.substr(open + 1, 3) != "k3:") return false;
    size_t index = 0;
    for (char c : marked.substr(open + 4, close - open - 4)) {
      if (c < '0' || c > '9') return false;
      index = index * 10 + static_cast<size_t>(c - '0');
      if (index >= originals.size()) return false;
    }
    if (close == open + 4) return false;
    out->push_back({originals[index], false});
    pos = close + 1;
  }
  return true;
}

}  // namespace

base::Result<JinjaSegments> RenderJinjaSegments(const JinjaChatTemplate& chat_template,
                                                const Conversation& conversation,
                                                const nlohmann::ordered_json& kwargs) {
  K3_ASSIGN_OR_RETURN(std::string real, chat_template.Render(conversation, kwargs));
  Marker marker;
  const Conversation marked_conversation = MarkClientText(conversation, &marker);
  JinjaSegments out;
  if (!marker.originals().empty()) {
    auto marked = chat_template.Render(marked_conversation, kwargs);
    if (marked.ok() && Split(*marked, marker.originals(), &out.segments) &&
        JoinSegments(out.segments) == real) {
      out.client_text_isolated = true;
      return out;
    }
  }
  out.segments.assign(1, ChatSegment{std::move(real), true});
  out.client_text_isolated = marker.originals().empty();
  return out;
}

}  // namespace k3::text::chat
