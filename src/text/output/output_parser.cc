#include "text/output/output_parser.h"

#include <span>
#include <utility>

#include "base/check.h"
#include "text/output/event_sink.h"
#include "text/output/format_machine.h"
#include "text/output/k2_machine.h"
#include "text/output/k3_machine.h"

namespace k3::text::output {

bool ParsedOutput::has_tool_calls() const {
  for (const ParsedToolCall& call : tool_calls) {
    if (call.complete) return true;
  }
  return false;
}

void EventSink::AppendText(OutputEvent::Kind kind, std::string_view text, int tool_index) {
  if (text.empty() || events_ == nullptr) return;
  if (!events_->empty() && events_->back().kind == kind &&
      events_->back().tool_index == tool_index) {
    events_->back().text.append(text);
    return;
  }
  OutputEvent event;
  event.kind = kind;
  event.text = std::string(text);
  event.tool_index = tool_index;
  events_->push_back(std::move(event));
}

void EventSink::Reasoning(std::string_view text) {
  result_.reasoning.append(text);
  AppendText(OutputEvent::kReasoning, text, -1);
}

void EventSink::Content(std::string_view text) {
  result_.content.append(text);
  AppendText(OutputEvent::kContent, text, -1);
}

void EventSink::BeginCall(const std::string& name) {
  K3_CHECK(!in_call_);
  int index = static_cast<int>(result_.tool_calls.size());
  ParsedToolCall call;
  call.name = name;
  call.id = "functions." + name + ":" + std::to_string(first_tool_index_ + index);
  if (events_ != nullptr) {
    OutputEvent event;
    event.kind = OutputEvent::kToolCallBegin;
    event.tool_index = index;
    event.id = call.id;
    event.name = call.name;
    events_->push_back(std::move(event));
  }
  result_.tool_calls.push_back(std::move(call));
  in_call_ = true;
}

void EventSink::Arguments(std::string_view text) {
  K3_CHECK(in_call_);
  result_.tool_calls.back().arguments.append(text);
  AppendText(OutputEvent::kToolCallArguments, text,
             static_cast<int>(result_.tool_calls.size()) - 1);
}

void EventSink::EndCall(bool complete) {
  K3_CHECK(in_call_);
  result_.tool_calls.back().complete = complete;
  in_call_ = false;
  if (events_ == nullptr) return;
  OutputEvent event;
  event.kind = OutputEvent::kToolCallEnd;
  event.tool_index = static_cast<int>(result_.tool_calls.size()) - 1;
  event.complete = complete;
  events_->push_back(std::move(event));
}

OutputParser::OutputParser(ParserOptions options)
    : sink_(std::make_unique<EventSink>(options.first_tool_index)),
      scanner_(std::make_unique<MarkerScanner>()) {
  if (options.format == OutputFormat::kK2) {
    machine_ = std::make_unique<K2Machine>(options, sink_.get());
  } else {
    machine_ = std::make_unique<K3Machine>(options, sink_.get());
  }
}

OutputParser::~OutputParser() = default;

void OutputParser::Feed(std::string_view chunk, std::vector<OutputEvent>* events) {
  K3_CHECK(!finished_) << "Feed after Finish";
  sink_->set_events(events);
  scanner_->Feed(chunk, *machine_);
  sink_->set_events(nullptr);
}

void OutputParser::Finish(bool truncated, std::vector<OutputEvent>* events) {
  K3_CHECK(!finished_) << "Finish called twice";
  finished_ = true;
  sink_->set_events(events);
  scanner_->Finish(truncated, *machine_);
  sink_->set_events(nullptr);
}

const ParsedOutput& OutputParser::result() const { return sink_->result(); }

ParsedOutput ParseAll(std::string_view text, const ParserOptions& options, bool truncated) {
  OutputParser parser(options);
  parser.Feed(text, nullptr);
  parser.Finish(truncated, nullptr);
  return parser.result();
}

void ApplyEvents(const std::vector<OutputEvent>& events, ParsedOutput* out) {
  for (const OutputEvent& e : events) {
    switch (e.kind) {
      case OutputEvent::kReasoning:
        out->reasoning += e.text;
        break;
      case OutputEvent::kContent:
        out->content += e.text;
        break;
      case OutputEvent::kToolCallBegin:
        K3_CHECK(e.tool_index == static_cast<int>(out->tool_calls.size()));
        out->tool_calls.push_back({e.id, e.name, "", false});
        break;
      case OutputEvent::kToolCallArguments:
        K3_CHECK(e.tool_index >= 0 && e.tool_index < static_cast<int>(out->tool_calls.size()));
        out->tool_calls[e.tool_index].arguments += e.text;
        break;
      case OutputEvent::kToolCallEnd:
        K3_CHECK(e.tool_index >= 0 && e.tool_index < static_cast<int>(out->tool_calls.size()));
        out->tool_calls[e.tool_index].complete = e.complete;
        break;
    }
  }
}

bool IsParserMarkup(OutputFormat format, std::string_view token_name) {
  static constexpr std::string_view kK2[] = {"<|tool_calls_section_begin|>",
                                             "<|tool_call_section_begin|>",
                                             "<|tool_calls_section_end|>",
                                             "<|tool_call_section_end|>",
                                             "<|tool_call_begin|>",
                                             "<|tool_call_argument_begin|>",
                                             "<|tool_call_end|>",
                                             "<|im_end|>",
                                             "<think>",
                                             "</think>"};
  static constexpr std::string_view kK3[] = {"<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"};
  const auto& names = format == OutputFormat::kK2 ? std::span<const std::string_view>(kK2)
                                                  : std::span<const std::string_view>(kK3);
  for (std::string_view name : names) {
    if (name == token_name) return true;
  }
  return false;
}

}  // namespace k3::text::output
