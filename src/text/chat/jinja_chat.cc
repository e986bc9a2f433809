#include "text/chat/jinja_chat.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "text/chat/conversation_json.h"
#include "text/chat/tool_ts.h"
#include "text/chat/tool_ts_internal.h"
#include "text/jinja/json_value.h"

namespace k3::text::chat {
namespace {

using Json = nlohmann::ordered_json;

base::Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::NotFound("cannot open " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (!in.good() && !in.eof()) return base::DataLoss("cannot read " + path);
  return contents.str();
}

// A special token's text: a string, or an AddedToken object {"content": ...}.
const Json* TokenText(const Json& value) {
  if (value.is_string()) return &value;
  if (value.is_object()) {
    auto it = value.find("content");
    if (it != value.end() && it->is_string()) return &*it;
  }
  return nullptr;
}

// transformers' special_tokens_map: the named special tokens that are set, as strings.
Json SpecialTokensMap(const Json& config) {
  Json map = Json::object();
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                          "cls_token", "mask_token"}) {
    auto it = config.find(key);
    if (it == config.end()) continue;
    if (const Json* text = TokenText(*it)) map[key] = *text;
  }
  auto extra = config.find("additional_special_tokens");
  if (extra != config.end() && extra->is_array()) {
    Json list = Json::array();
    for (const Json& token : *extra) {
      if (const Json* text = TokenText(token)) list.push_back(*text);
    }
    map["additional_special_tokens"] = std::move(list);
  }
  return map;
}

// tokenizer_config.json's "chat_template": a string, or [{name, template}] (the "default" one).
base::Result<std::string> ConfigTemplate(const Json& config, const std::string& path) {
  auto it = config.find("chat_template");
  if (it == config.end())
    return base::NotFound("no chat_template.jinja and no chat_template in " + path);
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    for (const Json& entry : *it) {
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string()) {
        return entry["template"].get<std::string>();
      }
    }
  }
  return base::InvalidArgument(path + ": chat_template is neither a string nor has a default");
}

}  // namespace

JinjaChatTemplate::JinjaChatTemplate(jinja::Template tmpl, std::string source, Json special_tokens)
    : template_(std::move(tmpl)),
      source_(std::move(source)),
      special_tokens_(std::move(special_tokens)),
      uses_tools_ts_(source_.find("tools_ts_str") != std::string::npos) {}

base::Result<JinjaChatTemplate> JinjaChatTemplate::FromSource(std::string source,
                                                              Json special_tokens) {
  if (!special_tokens.is_object()) {
    return base::InvalidArgument("the special-token map must be a JSON object");
  }
  K3_ASSIGN_OR_RETURN(jinja::Template tmpl, jinja::Template::Parse(source));
  return JinjaChatTemplate(std::move(tmpl), std::move(source), std::move(special_tokens));
}

base::Result<JinjaChatTemplate> JinjaChatTemplate::FromDirectory(const std::string& dir) {
  std::string config_path = dir + "/tokenizer_config.json";
  Json config = Json::object();
  if (auto text = ReadFile(config_path); text.ok()) {
    config = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) return base::DataLoss(config_path + " is not a JSON object");
  }
  auto source = ReadFile(dir + "/chat_template.jinja");
  if (!source.ok()) {
    if (source.status().code() != base::StatusCode::kNotFound) return source.status();
    source = ConfigTemplate(config, config_path);
    if (!source.ok()) return source.status();
  }
  auto result = FromSource(std::move(*source), SpecialTokensMap(config));
  if (!result.ok()) return result.status().WithContext(dir + "/chat template");
  return result;
}

base::Result<std::string> JinjaChatTemplate::Render(const Json& messages, const Json* tools,
                                                    const Json& kwargs,
                                                    const jinja::RenderOptions& options) const {
  if (!messages.is_array()) return base::InvalidArgument("'messages' must be an array");
  return RenderContext(messages, tools, kwargs, options);
}

base::Result<std::string> JinjaChatTemplate::Render(const Conversation& conversation,
                                                    const Json& kwargs,
                                                    const jinja::RenderOptions& options) const {
  Json messages = MessagesToJson(conversation.messages);
  if (conversation.tools.empty())
    return RenderContext(std::move(messages), nullptr, kwargs, options);
  const Json tools = ToolsToJson(conversation.tools);
  return RenderContext(std::move(messages), &tools, kwargs, options);
}

// `messages` is an array.
base::Result<std::string> JinjaChatTemplate::RenderContext(
    Json messages, const Json* tools, const Json& kwargs,
    const jinja::RenderOptions& options) const {
  if (!kwargs.is_null() && !kwargs.is_object()) {
    return base::InvalidArgument("chat template kwargs must be a JSON object");
  }
  Json context = special_tokens_;
  context["add_generation_prompt"] = true;
  context["thinking"] = true;
  context["preserve_thinking"] = false;
  if (kwargs.is_object()) {
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
      if (it.key() == "messages" || it.key() == "tools") {  // Python: "multiple values" TypeError
        return base::InvalidArgument("chat template kwargs may not set '" + it.key() + "'");
      }
      context[it.key()] = it.value();
    }
  }
  context["messages"] = std::move(messages);
  context["tools"] = nullptr;
  if (tools != nullptr && !tools->is_null()) {
    Json sorted = DeepSortKeys(*tools);
    if (uses_tools_ts_ && PyTruthy(sorted)) {
      // None (the Python encoder raised) leaves any caller-given tools_ts_str in place.
      if (auto ts = EncodeToolsTypescript(sorted)) context["tools_ts_str"] = std::move(*ts);
    }
    context["tools"] = std::move(sorted);
  }
  auto value = jinja::FromJson(context);
  if (!value.ok()) return value.status();
  return template_.Render(*value, options);
}

}  // namespace k3::text::chat
