// The one internal request type every protocol converts onto (OpenAI chat/completions, Anthropic
// messages), and the per-choice updates the frontend streams back. Text-space: prompts are typed
// chat conversations or raw text; the frontend turns them into token ids for the engine.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling_params.h"
#include "text/chat/conversation.h"
#include "text/output/output_parser.h"

namespace k3::serve {

using Json = nlohmann::ordered_json;

// Thinking / reasoning as requested; each chat family maps it (K3: render settings, on unless
// disabled, effort mapped by serve/effort.h; Jinja: the template's `thinking` variable when set).
struct ThinkingOptions {
  std::optional<bool> enabled;        // thinking.type enabled / disabled; nullopt: not given
  std::optional<std::string> effort;  // thinking.effort, else reasoning_effort
  bool operator==(const ThinkingOptions&) const = default;
};

// A chat request: the conversation, and what the reply must look like.
struct ChatRequest {
  text::chat::Conversation conversation;
  text::chat::ToolChoice tool_choice;
  bool parallel_tool_calls = true;  // false: at most one call (see PreparedPrompt)
  text::chat::ResponseFormat response_format;
  ThinkingOptions thinking;
  Json template_kwargs = Json::object();  // chat_template_kwargs (Jinja templates only)
  bool operator==(const ChatRequest&) const = default;
};

struct GenerateRequest {
  // Chat: the typed request every chat protocol (OpenAI Chat, Anthropic Messages) converts onto.
  std::optional<ChatRequest> chat;
  // Completions: raw prompt text (special-token names recognised, as a completion prompt is
  // trusted template output) or token ids. Used when chat is empty.
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  bool echo = false;  // completions: prepend the prompt to the text

  engine::SamplingParams sampling;
  bool max_tokens_given = false;  // else: whatever the context leaves after the prompt
  std::vector<std::string> stop;  // stop strings, matched on the visible text
  bool include_stop_string = false;
  // vLLM's skip_special_tokens: control tokens the model emits never reach the text (the output
  // parser still reads its own markup); false: every token's name is text.
  bool skip_special_tokens = true;
  bool want_logprobs = false;
  // Scripted output (tests and demos, `k3 serve --scripted-output`): this text, tokenized with
  // specials recognised and followed by the stop token, replaces sampling; the model still runs.
  std::string forced_output;  // per-token logprobs in the updates (sampling.logprobs >= 0)
};

// What the prompt became, known before generation starts.
struct PreparedPrompt {
  std::vector<int32_t> ids;
  engine::SamplingParams sampling;     // final: max_tokens and stop ids filled in
  int64_t reported_prompt_tokens = 0;  // usage.prompt_tokens (K3 excludes the 3-token opener)
  text::output::ParserOptions parser;  // how to read the output (format, reasoning start, tools)
  bool parse_output = false;           // chat: split reasoning / content / tool calls
  // parallel_tool_calls: false -> 1: later calls are dropped (not streamed, not returned). When
  // the request has a grammar (serve/constraints.h) the model cannot write them at all; without
  // one (tool_choice auto, no strict tool) it still may. -1 = no limit.
  int max_tool_calls = -1;
};

struct TokenLogprob {
  int32_t id = 0;
  std::string bytes;  // the token's bytes (may be a partial UTF-8 character)
  float logprob = 0.0f;
};

struct TokenInfo {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  // Generated tokens whose text went to reasoning (steps that produced only reasoning text;
  // a step that mixes reasoning and other text counts as not reasoning).
  int64_t reasoning_tokens = 0;
};

// One step's worth of output for one choice. Runs through the sink on the engine thread.
struct ChoiceUpdate {
  int index = 0;
  std::string text;  // completions (and chat without parsing): visible text delta
  std::vector<text::output::OutputEvent> events;  // chat: reasoning / content / tool calls
  std::vector<TokenInfo> logprobs;                // one per token of this update, if asked
  // Set on the last update of the choice: "stop", "length", "tool_calls", "cancelled", "error".
  std::optional<std::string> finish_reason;
  std::string error;                        // with finish_reason "error"
  std::optional<std::string> matched_stop;  // the stop string that ended it
  Usage usage;                              // running totals for this choice
  // Final parse (chat only, with the last update): complete tool calls, reasoning, content.
  std::optional<text::output::ParsedOutput> parsed;
};

}  // namespace k3::serve
