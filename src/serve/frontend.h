// The text-space frontend of one model: renders chat requests with the checkpoint's chat format,
// tokenizes, checks the context limit, submits to the engine and streams per-choice updates.
// Protocol converters (src/api) build GenerateRequests and read ChoiceUpdates; they never see
// token ids of prompts or the engine.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "base/result.h"
#include "engine/engine.h"
#include "serve/chat_format.h"
#include "serve/constraints.h"
#include "serve/context_limit.h"
#include "serve/generate_request.h"
#include "serve/generation.h"
#include "serve/metrics.h"
#include "serve/output_script.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::serve {

struct FrontendConfig {
  std::string model_name = "k3-demo";
  // Requests admitted and not finished; more are refused with RESOURCE_EXHAUSTED (HTTP 429),
  // so an overloaded server answers at once instead of hanging.
  int64_t max_pending_requests = 4096;
  // `k3 serve --script-file`: chat requests a rule matches get its scripted output (testing aid).
  std::shared_ptr<const OutputScript> script;
};

class Frontend {
 public:
  Frontend(std::unique_ptr<text::Tokenizer> tokenizer, ChatFormat format, engine::Engine* engine,
           FrontendConfig config);

  // Renders/tokenizes and validates against the context and the sampling rules.
  // INVALID_ARGUMENT (HTTP 400) naming the field or the limit; a request over the context limit
  // also fills *overflow (when given), for protocols that word it their own way.
  base::Result<PreparedPrompt> Prepare(const GenerateRequest& request,
                                       ContextOverflow* overflow = nullptr) const;
  // Admits and submits. RESOURCE_EXHAUSTED when max_pending_requests are running.
  base::Result<std::shared_ptr<Generation>> Start(const GenerateRequest& request,
                                                  const PreparedPrompt& prompt, UpdateSink sink,
                                                  Generation::Clock::time_point arrival);

  // Prompt tokens a chat request renders to, as usage.prompt_tokens would report them.
  base::Result<int64_t> CountChatTokens(const ChatRequest& request) const;

  const text::Tokenizer& tokenizer() const { return *tokenizer_; }
  const ChatFormat& format() const { return format_; }
  const FrontendConfig& config() const { return config_; }
  int64_t max_model_len() const { return engine_->layout().max_model_len; }
  int64_t pending() const { return pending_.load(); }
  ServeMetrics& metrics() { return metrics_; }
  engine::EngineMetrics engine_metrics() const { return engine_->metrics(); }

 private:
  base::Status PrepareChat(const ChatRequest& request, PreparedPrompt* out,
                           std::shared_ptr<const structured::Grammar>* grammar) const;
  base::Status PrepareCompletion(const GenerateRequest& request, PreparedPrompt* out) const;
  // `forced`: text that replaces sampling (k3_forced_output or a script rule); "" = none.
  base::Status FitContext(const GenerateRequest& request, const std::string& forced,
                          PreparedPrompt* out, ContextOverflow* overflow) const;

  std::unique_ptr<text::Tokenizer> tokenizer_;
  ChatFormat format_;
  engine::Engine* engine_;
  FrontendConfig config_;
  mutable ChatConstraints constraints_;
  ServeMetrics metrics_;
  std::atomic<int64_t> pending_{0};
};

}  // namespace k3::serve
