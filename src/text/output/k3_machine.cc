#include "text/output/k3_machine.h"

#include <array>

#include "text/output/text_util.h"

namespace k3::text::output {
namespace {

constexpr std::string_view kOpen = "<|open|>";
constexpr std::string_view kClose = "<|close|>";
constexpr std::string_view kSep = "<|sep|>";
constexpr std::string_view kEndOfMsg = "<|end_of_msg|>";
constexpr std::array kMarkers = {kOpen, kClose, kSep, kEndOfMsg};

// A tag header longer than this is malformed and ignored.
constexpr size_t kMaxHeaderBytes = 4096;

}  // namespace

K3Machine::K3Machine(const ParserOptions& options, EventSink* sink)
    : sink_(sink), names_(options.tool_names, options.accept_undeclared_tools) {
  XtmlTag opener;
  bool think = options.thinking_enabled && options.starts_in_reasoning;
  Push(think ? Block::kThink : Block::kResponse, opener);
}

std::span<const std::string_view> K3Machine::Markers() const {
  if (done_) return {};
  return kMarkers;
}

K3Machine::Frame* K3Machine::TextFrame() {
  for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
    if (it->block != Block::kUnknown) return &*it;
  }
  return nullptr;
}

void K3Machine::OnText(std::string_view text) {
  if (done_ || text.empty()) return;
  if (header_ != Header::kNone) {
    if (!header_overflow_) header_text_.append(text);
    if (header_text_.size() > kMaxHeaderBytes) header_overflow_ = true;
    return;
  }
  Frame* frame = TextFrame();
  if (frame == nullptr) {
    OnBodyText(text);
    return;
  }
  switch (frame->block) {
    case Block::kThink:
      sink_->Reasoning(text);
      break;
    case Block::kResponse:
      sink_->Content(text);
      break;
    case Block::kArgument: {
      if (!frame->active) break;
      if (!frame->is_string) {
        frame->value.append(text);
        break;
      }
      std::string escaped;
      AppendJsonEscaped(text, &escaped);
      sink_->Arguments(escaped);
      break;
    }
    case Block::kJson:
      if (frame->active) sink_->Arguments(text);
      break;
    default:  // tools, call, unknown: dropped
      break;
  }
}

// Text outside any block is content unless it is whitespace only (kept back until decided).
void K3Machine::OnBodyText(std::string_view text) {
  if (body_streaming_) {
    sink_->Content(text);
    return;
  }
  if (IsAllSpace(text)) {
    body_space_.append(text);
    return;
  }
  body_streaming_ = true;
  sink_->Content(body_space_);
  sink_->Content(text);
  body_space_.clear();
}

void K3Machine::OnMarker(std::string_view m) {
  body_streaming_ = false;
  body_space_.clear();
  if (m == kOpen || m == kClose) {
    // A header cut by another tag marker is malformed: it is abandoned.
    header_ = m == kOpen ? Header::kOpen : Header::kClose;
    header_text_.clear();
    header_overflow_ = false;
  } else if (m == kSep) {
    if (header_ != Header::kNone) OnTagEnd();  // a stray <|sep|> is ignored
  } else if (m == kEndOfMsg) {
    header_ = Header::kNone;
    CloseAll();
    done_ = true;
  }
}

void K3Machine::OnTagEnd() {
  Header kind = header_;
  header_ = Header::kNone;
  if (header_overflow_) return;
  std::optional<XtmlTag> tag = ParseXtmlTag(header_text_);
  header_text_.clear();
  if (!tag) return;
  if (kind == Header::kOpen) {
    OpenTag(*tag);
  } else {
    CloseTag(tag->name);
  }
}

void K3Machine::CloseAll() {
  while (!stack_.empty()) Pop();
}

void K3Machine::OnFinish(bool truncated) {
  header_ = Header::kNone;
  if (truncated) {
    // Length cut: the open call stays as generated, marked incomplete; nothing is closed.
    if (call_active_) sink_->EndCall(false);
    call_active_ = false;
    stack_.clear();
  } else {
    CloseAll();
  }
  done_ = true;
}

}  // namespace k3::text::output
