// The grammar of a whole model reply in Kimi's chat syntax: optional reasoning, then content
// (free text, or JSON for response_format), then tool calls — K2's section markers
// (<|tool_calls_section_begin|>… functions.NAME:IDX …) or K3's XTML tools/call/argument blocks —
// with names limited to the declared tools and arguments constrained by their schemas, then the
// end. Reasoning is never constrained (response_format applies after it).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "structured/grammar.h"
#include "structured/vocabulary.h"

namespace k3::structured {

enum class ChatSyntax { kBare, kK2, kK3 };  // kBare: just the content, no chat markup
enum class ContentMode { kText, kJsonObject, kJsonSchema };
enum class ToolMode { kNone, kAuto, kRequired, kNamed };

struct ToolSpec {
  std::string name;
  nlohmann::json parameters;  // null: any JSON object
  bool strict = true;         // false: arguments are any JSON object
};

struct OutputGrammarSpec {
  ChatSyntax syntax = ChatSyntax::kK2;
  bool thinking = false;             // reasoning may come first
  bool starts_in_reasoning = false;  // the prompt opened the reasoning block
  ContentMode content = ContentMode::kText;
  nlohmann::json schema;  // kJsonSchema
  ToolMode tool_mode = ToolMode::kNone;
  std::vector<ToolSpec> tools;
  std::string named_tool;  // kNamed
  bool parallel_tool_calls = true;
  std::vector<int32_t> end_tokens;  // EOS (and stop ids): where the reply may end
  bool closed_objects = true;       // see SchemaOptions
};

// INVALID_ARGUMENT (from the schema compiler, naming the keyword and where: "tools[2]..." or
// "response_format...") or UNIMPLEMENTED if the vocabulary lacks a needed special token.
base::Result<std::shared_ptr<Grammar>> BuildOutputGrammar(std::shared_ptr<const Vocabulary> vocab,
                                                          const OutputGrammarSpec& spec);

}  // namespace k3::structured
