#include "serve/frontend.h"

#include <span>

#include "serve/prompt_ids.h"

namespace k3::serve {
namespace {

// Conversation-global count of earlier tool calls: ids continue as functions.{name}:{n}.
int CountHistoryToolCalls(const std::vector<text::chat::Message>& messages) {
  int count = 0;
  for (const text::chat::Message& message : messages) {
    count += static_cast<int>(message.tool_calls.size());
  }
  return count;
}

std::vector<std::string> DeclaredToolNames(const ChatRequest& request) {
  std::vector<std::string> names;
  if (request.tool_choice.mode == text::chat::ToolChoice::Mode::kNone) return names;
  for (const text::chat::Tool& tool : request.conversation.tools) names.push_back(tool.name);
  // K3 dynamic tools (declared in system messages) are callable too.
  for (const text::chat::Message& message : request.conversation.messages) {
    for (const text::chat::Tool& tool : message.tools) names.push_back(tool.name);
  }
  return names;
}

}  // namespace

Frontend::Frontend(std::unique_ptr<text::Tokenizer> tokenizer, ChatFormat format,
                   engine::Engine* engine, FrontendConfig config)
    : tokenizer_(std::move(tokenizer)),
      format_(std::move(format)),
      engine_(engine),
      config_(std::move(config)),
      constraints_(tokenizer_.get(), engine_->info().vocab_size, engine_->info().eos_token_id) {}

base::Result<PreparedPrompt> Frontend::Prepare(const GenerateRequest& request,
                                               ContextOverflow* overflow) const {
  PreparedPrompt out;
  std::shared_ptr<const structured::Grammar> grammar;
  if (request.chat) {
    K3_RETURN_IF_ERROR(PrepareChat(*request.chat, &out, &grammar));
  } else {
    K3_RETURN_IF_ERROR(PrepareCompletion(request, &out));
  }
  std::string forced = request.forced_output;
  if (config_.script && request.chat && forced.empty()) {
    if (const ScriptRule* rule = config_.script->Select(*request.chat)) {
      forced = OutputScript::Render(*rule, out.parser);
      grammar = nullptr;  // the script is the output; a grammar could not follow it
    }
  }
  K3_RETURN_IF_ERROR(FitContext(request, forced, &out, overflow));
  out.sampling.grammar = std::move(grammar);
  return out;
}

base::Status Frontend::PrepareChat(const ChatRequest& request, PreparedPrompt* out,
                                   std::shared_ptr<const structured::Grammar>* grammar) const {
  K3_ASSIGN_OR_RETURN(RenderedChat rendered, format_.Render(request, &tokenizer_->specials()));
  K3_ASSIGN_OR_RETURN(out->ids, EncodeRenderedChat(*tokenizer_, rendered));
  out->reported_prompt_tokens =
      std::max<int64_t>(0, static_cast<int64_t>(out->ids.size()) - rendered.opener_tokens);
  out->parse_output = true;
  out->parser.format = format_.output_format();
  out->parser.starts_in_reasoning = rendered.starts_in_reasoning;
  out->parser.thinking_enabled = rendered.thinking;
  out->parser.tool_names = DeclaredToolNames(request);
  out->parser.first_tool_index = CountHistoryToolCalls(request.conversation.messages);
  if (!request.parallel_tool_calls) out->max_tool_calls = 1;
  if (grammar != nullptr) {
    K3_ASSIGN_OR_RETURN(*grammar, constraints_.ForChat(request, rendered, out->parser.format, {}));
  }
  return base::Status::Ok();
}

base::Status Frontend::PrepareCompletion(const GenerateRequest& request,
                                         PreparedPrompt* out) const {
  K3_ASSIGN_OR_RETURN(out->ids, EncodeCompletionPrompt(*tokenizer_, request));
  out->reported_prompt_tokens = static_cast<int64_t>(out->ids.size());
  return base::Status::Ok();
}

base::Status Frontend::FitContext(const GenerateRequest& request, const std::string& forced,
                                  PreparedPrompt* out, ContextOverflow* overflow) const {
  const int64_t limit = max_model_len();
  const auto prompt = static_cast<int64_t>(out->ids.size());
  if (prompt == 0) return base::InvalidArgument("the prompt is empty");
  const std::optional<int64_t> max_tokens =
      request.max_tokens_given ? std::optional<int64_t>(request.sampling.max_tokens) : std::nullopt;
  if (auto over = CheckContext(prompt, max_tokens, limit)) {
    if (overflow != nullptr) *overflow = *over;
    return base::InvalidArgument(OpenAiContextMessage(*over));
  }
  out->sampling = request.sampling;
  if (!forced.empty()) {
    K3_ASSIGN_OR_RETURN(auto forced_ids, tokenizer_->Encode(forced, text::SpecialMode::kAll));
    out->sampling.forced_tokens = ToEngineIds(forced_ids);
    const int32_t eos = engine_->info().eos_token_id;
    if (eos >= 0) out->sampling.forced_tokens.push_back(eos);
  }
  if (!max_tokens) out->sampling.max_tokens = limit - prompt;
  return out->sampling.Validate(engine_->info().vocab_size);
}

base::Result<std::shared_ptr<Generation>> Frontend::Start(const GenerateRequest& request,
                                                          const PreparedPrompt& prompt,
                                                          UpdateSink sink,
                                                          Generation::Clock::time_point arrival) {
  if (pending_.fetch_add(1) >= config_.max_pending_requests) {
    pending_.fetch_sub(1);
    return base::ResourceExhausted("the server is at its limit of " +
                                   std::to_string(config_.max_pending_requests) +
                                   " concurrent requests; retry later");
  }
  metrics_.SetPending(pending_.load());
  auto on_done = [this] { metrics_.SetPending(pending_.fetch_sub(1) - 1); };
  auto generation = std::make_shared<Generation>(*tokenizer_, engine_, &metrics_, request, prompt,
                                                 std::move(sink), on_done, arrival);
  if (base::Status status = generation->Submit(); !status.ok()) {
    metrics_.SetPending(pending_.fetch_sub(1) - 1);
    return status;
  }
  return generation;
}

base::Result<int64_t> Frontend::CountChatTokens(const ChatRequest& request) const {
  PreparedPrompt out;
  K3_RETURN_IF_ERROR(PrepareChat(request, &out, nullptr));
  return out.reported_prompt_tokens;
}

}  // namespace k3::serve
