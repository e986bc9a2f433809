// Internal: collects the events a format machine produces and folds them into the ParsedOutput,
// so result() is by construction the concatenation of the events.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "text/output/output_parser.h"

namespace k3::text::output {

class EventSink {
 public:
  explicit EventSink(int first_tool_index) : first_tool_index_(first_tool_index) {}

  void set_events(std::vector<OutputEvent>* events) { events_ = events; }
  void Reasoning(std::string_view text);
  void Content(std::string_view text);
  // Starts call number tool_calls.size() with a re-issued id. Requires !in_call().
  void BeginCall(const std::string& name);
  void Arguments(std::string_view text);  // requires in_call()
  void EndCall(bool complete);            // requires in_call()
  void DropCall() { ++result_.dropped_calls; }

  bool in_call() const { return in_call_; }
  // The arguments streamed so far for the open call (requires in_call()).
  const std::string& call_arguments() const { return result_.tool_calls.back().arguments; }
  const ParsedOutput& result() const { return result_; }

 private:
  void AppendText(OutputEvent::Kind kind, std::string_view text, int tool_index);

  int first_tool_index_;
  std::vector<OutputEvent>* events_ = nullptr;
  ParsedOutput result_;
  bool in_call_ = false;
};

}  // namespace k3::text::output
