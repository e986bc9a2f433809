#include "serve/chat_format.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "serve/effort.h"
#include "text/chat/jinja_segments.h"
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

base::Result<RenderedChat> ChatFormat::Render(const ChatRequest& request) const {
  return family_ == ChatFamily::kK3 ? RenderK3(request) : RenderJinja(request);
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

base::Result<RenderedChat> ChatFormat::RenderJinja(const ChatRequest& request) const {
  Json kwargs = request.template_kwargs.is_object() ? request.template_kwargs : Json::object();
  // Kimi API form {"thinking": {"type": "disabled"}} (or effort "none") maps onto the template's
  // thinking kwarg; the templates have no effort levels.
  const ResolvedThinking thinking = ResolveThinking(request.thinking);
  if (thinking.explicit_flag) kwargs["thinking"] = *thinking.explicit_flag;
  if (!kwargs.contains("add_generation_prompt")) kwargs["add_generation_prompt"] = true;
  // Client text is encoded with special tokens off (text/chat/jinja_segments.h).
  K3_ASSIGN_OR_RETURN(auto rendered,
                      text::chat::RenderJinjaSegments(*jinja_, request.conversation, kwargs));
  RenderedChat out;
  out.thinking = !(kwargs.contains("thinking") && kwargs["thinking"] == false);
  out.starts_in_reasoning = EndsWith(text::chat::JoinSegments(rendered.segments), "<think>");
  out.segments = std::move(rendered.segments);
  out.client_text_isolated = rendered.client_text_isolated;
  out.join_segments = true;
  return out;
}

}  // namespace k3::serve
