#include "text/output/k2_machine.h"

#include <array>

#include "text/output/text_util.h"

namespace k3::text::output {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kSectionBegin = "<|tool_calls_section_begin|>";
constexpr std::string_view kSectionBeginAlt = "<|tool_call_section_begin|>";
constexpr std::string_view kSectionEnd = "<|tool_calls_section_end|>";
constexpr std::string_view kSectionEndAlt = "<|tool_call_section_end|>";
constexpr std::string_view kCallBegin = "<|tool_call_begin|>";
constexpr std::string_view kArgBegin = "<|tool_call_argument_begin|>";
constexpr std::string_view kCallEnd = "<|tool_call_end|>";
constexpr std::string_view kImEnd = "<|im_end|>";

// Marker sets per state (distinct arrays: the scanner tells states apart by address).
constexpr std::array kStartMarkers = {kThinkOpen, kSectionBegin, kSectionBeginAlt, kCallBegin,
                                      kImEnd};
constexpr std::array kReasoningStartMarkers = {kThinkOpen,       kThinkClose, kSectionBegin,
                                               kSectionBeginAlt, kCallBegin,  kImEnd};
constexpr std::array kReasoningMarkers = {kThinkClose, kSectionBegin, kSectionBeginAlt, kCallBegin,
                                          kImEnd};
constexpr std::array kContentMarkers = {kSectionBegin, kSectionBeginAlt, kCallBegin, kImEnd};
constexpr std::array kSectionMarkers = {kCallBegin,    kSectionEnd,      kSectionEndAlt,
                                        kSectionBegin, kSectionBeginAlt, kImEnd};
constexpr std::array kCallIdMarkers = {kArgBegin,   kCallEnd,       kCallBegin,
                                       kSectionEnd, kSectionEndAlt, kImEnd};
constexpr std::array kArgsMarkers = {kCallEnd, kCallBegin, kSectionEnd, kSectionEndAlt, kImEnd};

// Longer ids are malformed (a model that never writes <|tool_call_argument_begin|>).
constexpr size_t kMaxIdBytes = 512;

}  // namespace

K2Machine::K2Machine(const ParserOptions& options, EventSink* sink)
    : sink_(sink), names_(options.tool_names, options.accept_undeclared_tools) {
  if (!options.thinking_enabled) {
    state_ = State::kContent;
  } else {
    state_ = options.starts_in_reasoning ? State::kReasoningStart : State::kStart;
  }
}

std::span<const std::string_view> K2Machine::Markers() const {
  switch (state_) {
    case State::kStart:
      return kStartMarkers;
    case State::kReasoningStart:
      return kReasoningStartMarkers;
    case State::kReasoning:
      return kReasoningMarkers;
    case State::kContent:
      return kContentMarkers;
    case State::kSection:
      return kSectionMarkers;
    case State::kCallId:
      return kCallIdMarkers;
    case State::kArgs:
      return kArgsMarkers;
    case State::kDone:
      break;
  }
  return {};
}

void K2Machine::OnText(std::string_view text) {
  if (text.empty()) return;
  switch (state_) {
    case State::kStart:
      OnStartText(text);
      break;
    case State::kReasoningStart:
      state_ = State::kReasoning;
      sink_->Reasoning(text);
      break;
    case State::kReasoning:
      sink_->Reasoning(text);
      break;
    case State::kContent:
      sink_->Content(text);
      break;
    case State::kCallId:
      if (!id_overflow_) id_.append(text);
      if (id_.size() > kMaxIdBytes) id_overflow_ = true;
      break;
    case State::kArgs:
      OnArgsText(text);
      break;
    case State::kSection:  // between calls: separators or junk, dropped
    case State::kDone:
      break;
  }
}

// Leading whitespace is held until a non-space character (content) or <think> (reasoning).
void K2Machine::OnStartText(std::string_view text) {
  if (IsAllSpace(text)) {
    start_space_.append(text);
    return;
  }
  state_ = State::kContent;
  sink_->Content(start_space_);
  sink_->Content(text);
  start_space_.clear();
}

// Arguments are streamed without leading and trailing whitespace: trailing whitespace is held
// until more non-space text follows, and dropped at the end of the call.
void K2Machine::OnArgsText(std::string_view text) {
  if (call_dropped_) return;
  if (!args_started_) {
    size_t first = 0;
    while (first < text.size() && IsAsciiSpace(text[first])) ++first;
    text.remove_prefix(first);
    if (text.empty()) return;
    args_started_ = true;
  }
  size_t end = text.size();
  while (end > 0 && IsAsciiSpace(text[end - 1])) --end;
  if (end == 0) {
    args_space_.append(text);
    return;
  }
  sink_->Arguments(args_space_);
  sink_->Arguments(text.substr(0, end));
  args_space_.assign(text.substr(end));
}

void K2Machine::LeaveStart() {
  if (state_ != State::kStart) return;
  sink_->Content(start_space_);
  start_space_.clear();
}

void K2Machine::EnterSection() {
  LeaveStart();
  state_ = State::kSection;
}

void K2Machine::DropId() {
  sink_->DropCall();
  id_.clear();
  id_overflow_ = false;
}

void K2Machine::BeginArgs() {
  std::optional<std::string> name;
  if (!id_overflow_) name = names_.FromK2Id(id_);
  id_.clear();
  id_overflow_ = false;
  call_dropped_ = !name.has_value();
  if (call_dropped_) {
    sink_->DropCall();
  } else {
    sink_->BeginCall(*name);
  }
  args_started_ = false;
  args_space_.clear();
  state_ = State::kArgs;
}

void K2Machine::EndCallImplicitly() {
  if (call_dropped_) return;
  const std::string& args = sink_->call_arguments();
  sink_->EndCall(!args.empty() && IsJson(args));
}

void K2Machine::OnMarker(std::string_view m) {
  if (m == kThinkOpen) {
    start_space_.clear();
    state_ = State::kReasoning;
  } else if (m == kThinkClose) {
    state_ = State::kContent;
  } else if (m == kSectionBegin || m == kSectionBeginAlt) {
    if (state_ != State::kSection) EnterSection();
  } else if (m == kCallBegin) {
    if (state_ == State::kCallId) DropId();
    if (state_ == State::kArgs) EndCallImplicitly();
    EnterSection();
    state_ = State::kCallId;
  } else if (m == kArgBegin) {
    BeginArgs();
  } else if (m == kCallEnd) {
    if (state_ == State::kCallId) DropId();
    if (state_ == State::kArgs && !call_dropped_) sink_->EndCall(true);
    state_ = State::kSection;
  } else if (m == kSectionEnd || m == kSectionEndAlt) {
    if (state_ == State::kCallId) DropId();
    if (state_ == State::kArgs) EndCallImplicitly();
    state_ = State::kContent;
  } else if (m == kImEnd) {
    LeaveStart();
    if (state_ == State::kCallId) DropId();
    if (state_ == State::kArgs) EndCallImplicitly();
    state_ = State::kDone;
  }
}

void K2Machine::OnFinish(bool truncated) {
  LeaveStart();
  if (state_ == State::kArgs && !call_dropped_) {
    if (truncated) {
      sink_->EndCall(false);
    } else {
      EndCallImplicitly();
    }
  }
  state_ = State::kDone;
}

}  // namespace k3::text::output
