// Internal: the K3 XTML output machine (think / response / tools blocks). Semantics are
// documented in output_parser.h.
#pragma once

#include <string>
#include <vector>

#include "text/output/event_sink.h"
#include "text/output/format_machine.h"
#include "text/output/output_parser.h"
#include "text/output/tool_names.h"
#include "text/output/xtml_tag.h"

namespace k3::text::output {

class K3Machine : public FormatMachine {
 public:
  K3Machine(const ParserOptions& options, EventSink* sink);

  std::span<const std::string_view> Markers() const override;
  void OnText(std::string_view text) override;
  void OnMarker(std::string_view marker) override;
  void OnFinish(bool truncated) override;

 private:
  enum class Block { kBody, kThink, kResponse, kTools, kCall, kArgument, kJson, kUnknown };
  struct Frame {
    Block block = Block::kUnknown;
    std::string name;        // the tag name close tags are matched against
    bool active = false;     // kCall: kept; kArgument/kJson: contributes to the arguments
    bool is_string = false;  // kArgument: type="string"
    std::string key;         // kArgument
    std::string value;       // kArgument, not a string: the raw value, emitted at the close
  };
  enum class Header { kNone, kOpen, kClose };
  enum class ArgsMode { kNone, kObject, kRaw };

  // The innermost block that is not kUnknown (unknown blocks are transparent for text), or null
  // in the message body.
  Frame* TextFrame();
  void OnBodyText(std::string_view text);
  void OnTagEnd();
  void OpenTag(const XtmlTag& tag);
  void CloseTag(std::string_view name);
  void Push(Block block, const XtmlTag& tag);
  void PushCall(Frame* frame, const XtmlTag& tag);
  void PushArgument(Frame* frame, const XtmlTag& tag);
  void Pop();  // closes the innermost block, running its close actions
  void CloseAll();
  // "{" before the first key, "," before the others, then "KEY":.
  std::string KeyPrefix(std::string_view key);

  EventSink* sink_;
  ToolNames names_;
  std::vector<Frame> stack_;  // open blocks; empty = the message body
  bool done_ = false;         // after </message> or <|end_of_msg|>: input is discarded
  Header header_ = Header::kNone;
  std::string header_text_;  // the tag text after <|open|>/<|close|> (capped)
  bool header_overflow_ = false;
  bool body_streaming_ = false;  // body text seen a non-space character since the last marker
  std::string body_space_;       // body text that is whitespace so far (dropped if it stays so)
  bool call_active_ = false;     // a kept call is open
  ArgsMode args_mode_ = ArgsMode::kNone;
};

}  // namespace k3::text::output
