// Incremental parsers for Kimi model OUTPUT text: generated text in, reasoning / content / tool
// calls out. The input is detokenized text (control tokens appear as their names, e.g.
// "<|tool_calls_section_begin|>", "<|open|>") fed in arbitrary chunks; a chunk may end inside a
// marker or inside a UTF-8 sequence. Not thread-safe: one parser per generated sequence.
//
// Invariants (tested for random chunkings and fuzzed):
//  * Streaming equals one-shot: for any chunking of the same text, the events concatenate (per
//    kind and tool index) to the same ParsedOutput, and that equals ParseAll(text).
//  * A partial marker is held back until it is decided; markers never leak into reasoning,
//    content or arguments. A partial UTF-8 sequence is held back too; invalid UTF-8 becomes U+FFFD
//    (one per maximal invalid subpart), so every emitted string is valid UTF-8.
//  * Tool-call ids are re-issued as "functions.{name}:{first_tool_index + i}", i = the 0-based
//    index of the call among the calls kept in this response; the model's own id or index
//    attribute is ignored (it is only used to recover the name).
//  * A call whose name is not declared (ParserOptions::tool_names) is dropped: never streamed,
//    counted in dropped_calls. With no declared tools every call is dropped (tool markup is
//    swallowed, not shown as content) unless accept_undeclared_tools is set.
//  * kToolCallBegin is emitted only once the full name is known (K2: at
//    <|tool_call_argument_begin|>; K3: at the end of the call's opening tag).
//
// K2 family (K2-Instruct, K2-Thinking, K2.5/K2.6, Kimi-Linear):
//  * thinking_enabled && !starts_in_reasoning: a leading "<think>" (optionally after whitespace)
//    opens reasoning; without it everything is content. starts_in_reasoning: output starts in
//    reasoning (a redundant leading "<think>" is skipped). thinking_enabled=false (identity
//    mode): everything outside tool sections is content, "<think>"/"</think>" are plain text.
//  * "</think>" ends reasoning; so does a tool-section marker (implicit end, engine bug #7).
//  * No whitespace is stripped from reasoning or content (as vLLM: content is the text before the
//    section verbatim). Text after a section end is content again; another section may follow.
//  * Section markers: "<|tool_calls_section_begin|>" / "<|tool_call_section_begin|>" and the
//    matching "_end|>" pair. A bare "<|tool_call_begin|>" outside a section opens one implicitly.
//  * Call: <|tool_call_begin|>ID<|tool_call_argument_begin|>ARGS<|tool_call_end|>. ARGS are
//    streamed verbatim minus leading/trailing whitespace (as vLLM's \s* does), not validated.
//    Name from ID: see tool_names.h (tolerates "functions.x:0", "x:0", "functions.x",
//    "functions_x_1", "functionsx1", whitespace/newlines; names may contain '-' and '.').
//  * A call cut by <|tool_call_begin|>, a section end, <|im_end|> or Finish(false) before its
//    <|tool_call_end|> ends there; it is complete iff its arguments parse as JSON. A call without
//    <|tool_call_argument_begin|> is malformed (dropped).
//  * "<|im_end|>" ends the output: it and everything after it are discarded.
//
// K3 XTML: output starts inside the generation opener's block: think when
// thinking_enabled && starts_in_reasoning, else response. Tags <|open|>NAME k="v"…<|sep|> and
// <|close|>NAME<|sep|> (whitespace inside a tag is tolerated; attribute values are unescaped).
//  * think -> reasoning, response -> content; other text between blocks is content unless it is
//    whitespace only (then dropped). Text inside tools/call but outside argument is dropped.
//  * An open tag that is not a valid child of the current block implicitly closes blocks until
//    it is (so <|open|>tools<|sep|> inside think ends reasoning). A close tag closes up to the
//    matching open block; an unmatched one is ignored. Unknown blocks' text is dropped.
//  * call tool="NAME": arguments are a JSON object built from argument blocks: type="string" ->
//    a JSON string of the raw text, streamed as it arrives; any other type -> the raw text
//    (trimmed) if it parses as JSON, else a JSON string of it (emitted at the block's close).
//    Keys are emitted in order, duplicates kept. A <|open|>json …<|sep|>RAW<|close|>json<|sep|>
//    block (how the renderer writes non-object arguments) gives the raw text as the arguments.
//    No argument blocks -> "{}".
//  * <|close|>message<|sep|> or <|end_of_msg|> ends the output; the rest is discarded. Closing a
//    call implicitly (or by Finish(false)) still completes it.
//
// Finish(truncated=true) (length cut): calls completed before the cut are kept; an open call is
// ended with complete=false and its arguments left as generated (the API layer drops it). A call
// whose name was not yet known produces nothing.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace k3::text::output {

enum class OutputFormat { kK2, kK3 };

struct ParserOptions {
  OutputFormat format = OutputFormat::kK2;
  bool starts_in_reasoning = false;  // the prompt ends inside reasoning (K2.5 thinking; K3 think)
  bool thinking_enabled = true;      // false: identity mode, no reasoning is recognized
  std::vector<std::string> tool_names;   // declared tools; calls to other names are dropped
  bool accept_undeclared_tools = false;  // keep calls to any well-formed name (raw/testing use)
  int first_tool_index = 0;  // conversation-global count of earlier tool calls (for ids)
};

struct OutputEvent {
  enum Kind { kReasoning, kContent, kToolCallBegin, kToolCallArguments, kToolCallEnd };
  Kind kind = kContent;
  std::string text;       // kReasoning, kContent, kToolCallArguments: the new text
  int tool_index = -1;    // kToolCall*: 0-based among the calls kept in this response
  std::string id;         // kToolCallBegin: "functions.{name}:{first_tool_index + tool_index}"
  std::string name;       // kToolCallBegin
  bool complete = false;  // kToolCallEnd: the call was closed (see header comment)
};

struct ParsedToolCall {
  std::string id, name, arguments;
  bool complete = false;
  bool operator==(const ParsedToolCall&) const = default;
};

struct ParsedOutput {
  std::string reasoning, content;
  std::vector<ParsedToolCall> tool_calls;
  int dropped_calls = 0;  // calls to undeclared names or malformed calls
  // True when at least one complete call was parsed (finish_reason "tool_calls" / "tool_use").
  bool has_tool_calls() const;
  bool operator==(const ParsedOutput&) const = default;
};

class FormatMachine;
class MarkerScanner;
class EventSink;

class OutputParser {
 public:
  explicit OutputParser(ParserOptions options);
  ~OutputParser();
  OutputParser(const OutputParser&) = delete;
  OutputParser& operator=(const OutputParser&) = delete;

  // Parses `chunk` and appends the resulting events to *events (may be null). Adjacent text
  // events of the same kind (and tool index) within one call are merged.
  void Feed(std::string_view chunk, std::vector<OutputEvent>* events);
  // Flushes held-back text and closes open structures; truncated = the generation hit its length
  // limit. Feed/Finish must not be called afterwards.
  void Finish(bool truncated, std::vector<OutputEvent>* events);
  // Everything parsed so far (the fold of all events emitted).
  const ParsedOutput& result() const;

 private:
  std::unique_ptr<EventSink> sink_;
  std::unique_ptr<FormatMachine> machine_;
  std::unique_ptr<MarkerScanner> scanner_;
  bool finished_ = false;
};

// Feeds `text` whole, then Finish(truncated).
// Whether a control token's name is markup the parser of `format` reads (tool-call sections,
// XTML tags, think tags, the end markers). Generation keeps only these among special tokens when
// skip_special_tokens is on; every other special token (e.g. <|media_content|>) is dropped.
bool IsParserMarkup(OutputFormat format, std::string_view token_name);

ParsedOutput ParseAll(std::string_view text, const ParserOptions& options, bool truncated = false);

// Folds events into a ParsedOutput (dropped_calls stays 0): what a streaming client rebuilds.
void ApplyEvents(const std::vector<OutputEvent>& events, ParsedOutput* out);

}  // namespace k3::text::output
