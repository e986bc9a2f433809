#include "serve/chat_format.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "serve/effort.h"
#include "serve/special_guard.h"
#include "text/chat/conversation_json.h"
#include "text/chat/k3_xtml.h"

namespace k3::serve {
namespace {

base::Result<std::string> ReadModelType(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / "config.json");
  if (!in) return std::string();  // a tokenizer-only folder: the chat template decides
  std::stringstream text;
  text << in.rdbuf();
  Json config = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return base::DataLoss(dir + "/config.json is not a JSON object");
  auto type = config.find("model_type");
  if (type == config.end() || !type->is_string()) return std::string();
  return type->get<std::string>();
}

// Placeholder nonces for SpecialGuard: random per process, distinct per render.
uint64_t NextGuardNonce() {
  static std::atomic<uint64_t> next{std::random_device{}() * 0x9E3779B97F4A7C15ull};
  return next.fetch_add(0x9E3779B97F4A7C15ull);
}

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         std::string_view(text).substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

base::Result<ChatFormat> ChatFormat::FromCheckpoint(const std::string& dir) {
  K3_ASSIGN_OR_RETURN(std::string model_type, ReadModelType(dir));
  if (model_type == "kimi_k3") return ChatFormat(ChatFamily::kK3);
  K3_ASSIGN_OR_RETURN(auto tmpl, text::chat::JinjaChatTemplate::FromDirectory(dir));
  ChatFormat format(ChatFamily::kJinja);
  format.jinja_ = std::make_shared<const text::chat::JinjaChatTemplate>(std::move(tmpl));
  return format;
}

text::output::OutputFormat ChatFormat::output_format() const {
  return family_ == ChatFamily::kK3 ? text::output::OutputFormat::kK3
                                    : text::output::OutputFormat::kK2;
}

base::Result<RenderedChat> ChatFormat::Render(const ChatRequest& request,
                                              const text::SpecialTokens* specials) const {
  return family_ == ChatFamily::kK3 ? RenderK3(request) : RenderJinja(request, specials);
}

base::Result<RenderedChat> ChatFormat::RenderK3(const ChatRequest& request) const {
  text::chat::K3RenderSettings settings;
  const ResolvedThinking thinking = ResolveThinking(request.thinking);
  settings.thinking = thinking.enabled;
  settings.thinking_effort = thinking.k3_effort;
  settings.tool_choice = request.tool_choice;
  settings.response_format = request.response_format;
  RenderedChat out;
  K3_ASSIGN_OR_RETURN(out.segments, text::chat::RenderK3(request.conversation, settings));
  out.opener_tokens = text::chat::kK3GenerationOpenerTokens;
  out.thinking = settings.thinking;
  out.starts_in_reasoning = settings.thinking;
  return out;
}

base::Result<RenderedChat> ChatFormat::RenderJinja(const ChatRequest& request,
                                                   const text::SpecialTokens* specials) const {
  Json kwargs = request.template_kwargs.is_object() ? request.template_kwargs : Json::object();
  // Kimi API form {"thinking": {"type": "disabled"}} (or effort "none") maps onto the template's
  // thinking kwarg; the templates have no effort levels.
  const ResolvedThinking thinking = ResolveThinking(request.thinking);
  if (thinking.explicit_flag) kwargs["thinking"] = *thinking.explicit_flag;
  if (!kwargs.contains("add_generation_prompt")) kwargs["add_generation_prompt"] = true;
  RenderedChat out;
  out.thinking = !(kwargs.contains("thinking") && kwargs["thinking"] == false);
  out.join_segments = true;
  if (specials == nullptr) {
    K3_ASSIGN_OR_RETURN(std::string text, jinja_->Render(request.conversation, kwargs));
    out.starts_in_reasoning = EndsWith(text, "<think>");
    out.segments.push_back({std::move(text), /*allow_special=*/true});
    return out;
  }
  // Special-token strings anywhere in the request (messages, tools, kwargs) stay text.
  SpecialGuard guard(*specials, NextGuardNonce());
  const Json messages = guard.Shield(text::chat::MessagesToJson(request.conversation.messages));
  const Json tools = request.conversation.tools.empty()
                         ? Json()
                         : guard.Shield(text::chat::ToolsToJson(request.conversation.tools));
  K3_ASSIGN_OR_RETURN(std::string text, jinja_->Render(messages, tools.is_null() ? nullptr : &tools,
                                                       guard.Shield(kwargs)));
  out.starts_in_reasoning = EndsWith(text, "<think>");
  out.segments = guard.Split(text);
  return out;
}

}  // namespace k3::serve
