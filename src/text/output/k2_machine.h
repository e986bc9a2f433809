// Internal: the K2-family output machine (<think>, tool-call sections). Semantics are documented
// in output_parser.h.
#pragma once

#include <string>

#include "text/output/event_sink.h"
#include "text/output/format_machine.h"
#include "text/output/output_parser.h"
#include "text/output/tool_names.h"

namespace k3::text::output {

class K2Machine : public FormatMachine {
 public:
  K2Machine(const ParserOptions& options, EventSink* sink);

  std::span<const std::string_view> Markers() const override;
  void OnText(std::string_view text) override;
  void OnMarker(std::string_view marker) override;
  void OnFinish(bool truncated) override;

 private:
  enum class State {
    kStart,           // may still see a leading <think> (after whitespace only)
    kReasoningStart,  // starts in reasoning; may still see a redundant leading <think>
    kReasoning,
    kContent,
    kSection,  // inside a tool section, between calls
    kCallId,   // after <|tool_call_begin|>, reading the id
    kArgs,     // after <|tool_call_argument_begin|>
    kDone,     // after <|im_end|>: everything is discarded
  };

  void OnStartText(std::string_view text);
  void OnArgsText(std::string_view text);
  void LeaveStart();
  void EnterSection();
  void BeginArgs();
  // Ends the current call at a terminator other than <|tool_call_end|>.
  void EndCallImplicitly();
  void DropId();

  EventSink* sink_;
  ToolNames names_;
  State state_;
  std::string start_space_;  // kStart: leading whitespace held until we know it is content
  std::string id_;           // kCallId: the id text so far (capped)
  bool id_overflow_ = false;
  bool call_dropped_ = false;  // kArgs: the call is not streamed
  bool args_started_ = false;  // kArgs: a non-space argument character was seen
  std::string args_space_;     // kArgs: trailing whitespace held back
};

}  // namespace k3::text::output
