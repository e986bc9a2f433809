// A checkpoint's Jinja chat template (Kimi K2-Instruct, K2-Thinking, K2.5/K2.6 and relatives),
// rendered the way Moonshot's tokenizer (KVV tokenization_kimi.apply_chat_template) and Hugging
// Face transformers render it:
//  - tools are key-sorted (deep_sort_dict); for templates that mention `tools_ts_str`, it is
//    EncodeToolsTypescript(tools), left undefined where the Python encoder raises (the template
//    then falls back to JSON);
//  - variables: the tokenizer's special-token map (bos_token, eos_token, ..., from
//    tokenizer_config.json), then add_generation_prompt=true, thinking=true,
//    preserve_thinking=false, then the caller's kwargs (which override all of these), then
//    messages, tools (None when absent) and tools_ts_str.
// Immutable after construction; Render is const and thread-safe. Errors are values: malformed
// requests or templates are INVALID_ARGUMENT, exceeded render limits RESOURCE_EXHAUSTED.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"
#include "text/chat/conversation.h"
#include "text/jinja/template.h"

namespace k3::text::chat {

class JinjaChatTemplate {
 public:
  // From a checkpoint folder: chat_template.jinja if present, else tokenizer_config.json's
  // "chat_template" (a string, or HF's list of {name, template} where "default" is used). The
  // special-token map comes from tokenizer_config.json when there is one.
  static base::Result<JinjaChatTemplate> FromDirectory(const std::string& dir);
  // From template text; `special_tokens` is the variables object of the special-token map.
  static base::Result<JinjaChatTemplate> FromSource(
      std::string source, nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object());

  // Whether the template reads `tools_ts_str` (the K2.5/K2.6 TypeScript tool declaration).
  bool uses_tools_ts() const { return uses_tools_ts_; }
  const std::string& source() const { return source_; }
  const nlohmann::ordered_json& special_tokens() const { return special_tokens_; }

  // messages: the request's array; tools: the request's tools or nullptr; kwargs: an object
  // (chat_template_kwargs merged with add_generation_prompt etc.) or null.
  base::Result<std::string> Render(const nlohmann::ordered_json& messages,
                                   const nlohmann::ordered_json* tools,
                                   const nlohmann::ordered_json& kwargs,
                                   const jinja::RenderOptions& options = {}) const;
  // A typed conversation, in the template's data model: messages as MessagesToJson writes them
  // and tools as ToolsToJson (None when there are none); kwargs as above.
  base::Result<std::string> Render(const Conversation& conversation,
                                   const nlohmann::ordered_json& kwargs,
                                   const jinja::RenderOptions& options = {}) const;

 private:
  base::Result<std::string> RenderContext(nlohmann::ordered_json messages,
                                          const nlohmann::ordered_json* tools,
                                          const nlohmann::ordered_json& kwargs,
                                          const jinja::RenderOptions& options) const;

  JinjaChatTemplate(jinja::Template tmpl, std::string source,
                    nlohmann::ordered_json special_tokens);

  jinja::Template template_;
  std::string source_;
  nlohmann::ordered_json special_tokens_;
  bool uses_tools_ts_ = false;
};

}  // namespace k3::text::chat
