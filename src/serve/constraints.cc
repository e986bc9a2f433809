#include "serve/constraints.h"

#include "structured/output_grammar.h"

namespace k3::serve {
namespace {

using structured::ContentMode;
using structured::OutputGrammarSpec;
using structured::ToolMode;
using text::chat::ResponseFormat;
using text::chat::ToolChoice;

// Fills the tool part of the spec; returns whether the tools alone call for a grammar.
bool ToolPart(const ChatRequest& request, OutputGrammarSpec* spec) {
  // Global tools and the dynamic ones (K3: declared in system messages) alike.
  std::vector<text::chat::Tool> tools = request.conversation.tools;
  for (const auto& message : request.conversation.messages) {
    tools.insert(tools.end(), message.tools.begin(), message.tools.end());
  }
  bool any_strict = false;
  for (const text::chat::Tool& tool : tools) {
    structured::ToolSpec t;
    t.name = tool.name;
    t.strict = tool.strict.value_or(false);
    any_strict |= t.strict;
    if (tool.parameters && !tool.parameters->is_null()) {
      t.parameters = nlohmann::json::parse(tool.parameters->dump());
    }
    spec->tools.push_back(std::move(t));
  }
  if (!request.parallel_tool_calls) spec->parallel_tool_calls = false;
  if (tools.empty()) {
    spec->tool_mode = ToolMode::kNone;
    return false;
  }
  switch (request.tool_choice.mode) {
    case ToolChoice::Mode::kNone:
      spec->tool_mode = ToolMode::kNone;
      return true;  // tool syntax must be impossible
    case ToolChoice::Mode::kRequired:
      spec->tool_mode = ToolMode::kRequired;
      return true;
    case ToolChoice::Mode::kFunction:
      spec->tool_mode = ToolMode::kNamed;
      spec->named_tool = request.tool_choice.function;
      return true;
    case ToolChoice::Mode::kAuto:
      break;
  }
  spec->tool_mode = ToolMode::kAuto;
  return any_strict;
}

// Fills the content part; returns whether response_format calls for a grammar.
bool ContentPart(const ResponseFormat& format, OutputGrammarSpec* spec) {
  if (format.type == ResponseFormat::Type::kJsonObject) {
    spec->content = ContentMode::kJsonObject;
    return true;
  }
  if (format.type != ResponseFormat::Type::kJsonSchema) return false;
  if (format.strict && !format.schema.is_null()) {
    spec->content = ContentMode::kJsonSchema;
    spec->schema = nlohmann::json::parse(format.schema.dump());
  } else {
    spec->content = ContentMode::kJsonObject;  // strict: false -> valid JSON, not the schema
  }
  return true;
}

}  // namespace

ChatConstraints::ChatConstraints(const text::Tokenizer* tokenizer, int64_t logits_width,
                                 int32_t eos_token_id)
    : tokenizer_(tokenizer), logits_width_(logits_width), eos_(eos_token_id) {}

std::shared_ptr<const structured::Vocabulary> StructuredVocabulary(const text::Tokenizer& tokenizer,
                                                                   int64_t logits_width) {
  std::vector<structured::SpecialToken> specials;
  for (const text::SpecialToken& s : tokenizer.specials().tokens()) {
    if (static_cast<int64_t>(s.id) < logits_width) {
      specials.push_back({static_cast<int32_t>(s.id), s.name});
    }
  }
  return structured::Vocabulary::FromRanks(tokenizer.ranks(), static_cast<size_t>(logits_width),
                                           std::move(specials));
}

std::shared_ptr<const structured::Vocabulary> ChatConstraints::vocabulary() {
  std::call_once(vocab_once_,
                 [this] { vocab_ = StructuredVocabulary(*tokenizer_, logits_width_); });
  return vocab_;
}

base::Result<std::shared_ptr<const structured::Grammar>> ChatConstraints::ForChat(
    const ChatRequest& request, const RenderedChat& rendered, text::output::OutputFormat format,
    const std::vector<int32_t>& stop_token_ids) {
  OutputGrammarSpec spec;
  const bool tools = ToolPart(request, &spec);
  const bool content = ContentPart(request.response_format, &spec);
  if (!tools && !content) return std::shared_ptr<const structured::Grammar>();
  spec.syntax = format == text::output::OutputFormat::kK3 ? structured::ChatSyntax::kK3
                                                          : structured::ChatSyntax::kK2;
  spec.thinking = rendered.thinking;
  spec.starts_in_reasoning = rendered.starts_in_reasoning;
  if (eos_ >= 0) spec.end_tokens.push_back(eos_);
  for (int32_t id : stop_token_ids) spec.end_tokens.push_back(id);
  // The key: everything the grammar depends on.
  std::string key = std::to_string(int(spec.syntax)) + "|" + std::to_string(spec.thinking) +
                    std::to_string(spec.starts_in_reasoning) + "|" +
                    std::to_string(int(spec.content)) + spec.schema.dump() + "|" +
                    std::to_string(int(spec.tool_mode)) + spec.named_tool + "|" +
                    std::to_string(spec.parallel_tool_calls) + "|";
  for (const auto& t : spec.tools)
    key += t.name + (t.strict ? "!" : "?") + t.parameters.dump() + ";";
  for (int32_t id : spec.end_tokens) key += std::to_string(id) + ",";
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
  }
  K3_ASSIGN_OR_RETURN(std::shared_ptr<structured::Grammar> grammar,
                      structured::BuildOutputGrammar(vocabulary(), spec));
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kCacheCapacity) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(key);
  cache_[key] = {grammar, lru_.begin()};
  return std::shared_ptr<const structured::Grammar>(grammar);
}

size_t ChatConstraints::cached_grammars() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

}  // namespace k3::serve
