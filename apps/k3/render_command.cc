// k3 render: chat requests -> the token ids `k3 serve` would run the model on, for scripts (the
// demo model's training data, tools/train/). Each stdin line is {"request": <OpenAI chat
// completions body>, "completion": <assistant message>?}; each stdout line is {"prompt_ids": [...]}
// plus, with a completion, "completion_ids": the tokens the model should generate after that prompt
// (the assistant message's rendering after the generation opener, through <|end_of_msg|>).
//
// The prompt goes through the serving path itself (api::ParseChatRequest, serve::ChatFormat,
// serve::PromptIds). The completion is the K3 renderer's own bytes: the conversation with the
// message appended, rendered without the tool-choice / response-format notes (which follow the
// conversation) and without an opener, minus the same conversation rendered with its opener.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/openai_request.h"
#include "apps/k3/commands.h"
#include "apps/k3/demo_checkpoint.h"
#include "base/log.h"
#include "serve/chat_format.h"
#include "serve/effort.h"
#include "serve/prompt_ids.h"
#include "text/chat/conversation_json.h"
#include "text/chat/k3_xtml.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {
namespace {

using OrderedJson = nlohmann::ordered_json;

struct RenderFlags {
  std::string model;
  std::string write_demo;
};

// The completion's segments: render(conversation + message) without notes or opener, after the
// prefix render(conversation) with the opener. The prefix must match segment for segment.
base::Result<text::chat::ChatSegments> CompletionSegments(const serve::ChatRequest& chat,
                                                          const OrderedJson& message) {
  K3_ASSIGN_OR_RETURN(auto messages, text::chat::MessagesFromJson(OrderedJson::array({message})));
  if (messages[0].role != text::chat::Role::kAssistant) {
    return base::InvalidArgument("completion must be an assistant message");
  }
  const serve::ResolvedThinking thinking = serve::ResolveThinking(chat.thinking);
  text::chat::K3RenderSettings settings;
  settings.thinking = thinking.enabled;
  settings.thinking_effort = thinking.k3_effort;
  K3_ASSIGN_OR_RETURN(auto prefix, text::chat::RenderK3(chat.conversation, settings));
  text::chat::Conversation whole = chat.conversation;
  whole.messages.push_back(std::move(messages[0]));
  settings.add_generation_prompt = false;
  K3_ASSIGN_OR_RETURN(auto full, text::chat::RenderK3(whole, settings));
  bool is_prefix = full.size() > prefix.size();
  for (size_t i = 0; is_prefix && i < prefix.size(); ++i) {
    is_prefix = full[i].text == prefix[i].text && full[i].allow_special == prefix[i].allow_special;
  }
  if (!is_prefix) {
    return base::Internal("the rendered message does not start with the generation opener");
  }
  return text::chat::ChatSegments(full.begin() + static_cast<long>(prefix.size()), full.end());
}

base::Result<OrderedJson> RenderLine(const text::Tokenizer& tokenizer,
                                     const serve::ChatFormat& format, const OrderedJson& line) {
  if (!line.is_object() || !line.contains("request")) {
    return base::InvalidArgument("each line must be an object with a \"request\"");
  }
  api::OpenAiRequest parsed;
  api::ApiError error;
  if (!api::ParseChatRequest(line["request"], api::ApiOptions{}, &parsed, &error)) {
    return base::InvalidArgument("request: " + error.message);
  }
  K3_ASSIGN_OR_RETURN(auto prompt, serve::PromptIds(tokenizer, format, parsed.generate));
  OrderedJson out = {{"prompt_ids", prompt}};
  if (line.contains("completion")) {
    if (format.family() != serve::ChatFamily::kK3) {
      return base::InvalidArgument("completion needs a kimi_k3 checkpoint");
    }
    K3_ASSIGN_OR_RETURN(auto segments,
                        CompletionSegments(*parsed.generate.chat, line["completion"]));
    std::vector<text::Segment> pieces;
    for (const auto& s : segments) pieces.push_back({s.text, s.allow_special});
    K3_ASSIGN_OR_RETURN(auto ids, tokenizer.EncodeSegments(pieces));
    out["completion_ids"] = serve::ToEngineIds(ids);
  }
  return out;
}

int RunRender(const RenderFlags& f) {
  if (!f.write_demo.empty()) {
    base::Status written = model::testing::WriteDemoCheckpoint(f.write_demo);
    if (!written.ok()) K3_LOG(kError) << written.ToString();
    return written.ok() ? 0 : 1;
  }
  auto dir = FolderOrDemo(f.model);
  if (!dir.ok()) {
    K3_LOG(kError) << dir.status().ToString();
    return 1;
  }
  auto tokenizer = text::Tokenizer::FromKimiDirectory(*dir);
  auto format = serve::ChatFormat::FromCheckpoint(*dir);
  if (!tokenizer.ok() || !format.ok()) {
    K3_LOG(kError) << (tokenizer.ok() ? format.status() : tokenizer.status()).ToString();
    return 1;
  }
  std::ios::sync_with_stdio(false);
  std::string text;
  for (int line_no = 1; std::getline(std::cin, text); ++line_no) {
    if (text.empty()) continue;
    auto line = OrderedJson::parse(text, nullptr, /*allow_exceptions=*/false);
    auto out = RenderLine(**tokenizer, *format, line);
    if (!out.ok()) {
      K3_LOG(kError) << "line " << line_no << ": " << out.status().ToString();
      return 1;
    }
    std::string dumped = out->dump() + "\n";
    std::fwrite(dumped.data(), 1, dumped.size(), stdout);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

CommandFn AddRenderCommand(CLI::App& app) {
  auto f = std::make_shared<RenderFlags>();
  app.add_option("--model", f->model,
                 "Checkpoint folder whose chat format and tokenizer to use (default: the "
                 "embedded demo checkpoint)");
  app.add_option(
      "--write-demo", f->write_demo,
      "Write the embedded demo checkpoint (weights, tokenizer) into this folder and exit");
  app.footer(
      "stdin: one JSON object per line, {\"request\": CHAT_COMPLETIONS_BODY, \"completion\": "
      "ASSISTANT_MESSAGE (optional)}\nstdout: one line each, {\"prompt_ids\": [...], "
      "\"completion_ids\": [...]}");
  return [f] { return RunRender(*f); };
}

}  // namespace k3::app
