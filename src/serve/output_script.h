// Scripted model outputs for end-to-end tests of agent clients on a model that cannot call tools
// by itself (the random-weight demo): `k3 serve --script-file FILE`. A script is a JSON array of
// rules (or JSONL, one rule a line); the first rule whose conditions all hold for a chat request
// gives the output, written in the checkpoint's own output syntax (K3 XTML or K2 tool-call
// markers) and forced token by token through the engine, so detokenizing, output parsing,
// streaming and the protocol converters run as for sampled text. No rule matches: the model
// samples as usual. Completions requests are never scripted.
//
// A rule: {"tool_results": N, "has_tool": "name", "last_user_contains": "text",   (conditions)
//          "reasoning": "...", "text": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}
// tool_results counts the tool-role messages (OpenAI role "tool", Anthropic tool_result blocks,
// Responses function_call_output items), so a tool loop selects its next step by how far it got.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "serve/generate_request.h"
#include "text/output/output_parser.h"

namespace k3::serve {

struct ScriptedCall {
  std::string name;
  Json arguments = Json::object();
};

struct ScriptRule {
  std::optional<int> tool_results;
  std::optional<std::string> has_tool;
  std::optional<std::string> last_user_contains;
  std::string reasoning;
  std::string text;
  std::vector<ScriptedCall> tool_calls;
};

class OutputScript {
 public:
  // Parses a JSON array of rules, or JSONL (one rule object a line). INVALID_ARGUMENT naming the
  // rule and the field otherwise.
  static base::Result<OutputScript> Parse(const std::string& text);
  static base::Result<OutputScript> FromFile(const std::string& path);

  // The first matching rule, or nullptr.
  const ScriptRule* Select(const ChatRequest& request) const;
  // The rule's output as the model would write it after the rendered prompt: reasoning only when
  // the prompt ends inside reasoning, then content, then the tool calls, then the end marker (the
  // stop token itself is appended by the caller).
  static std::string Render(const ScriptRule& rule, const text::output::ParserOptions& parser);

  size_t size() const { return rules_.size(); }

 private:
  std::vector<ScriptRule> rules_;
};

}  // namespace k3::serve
