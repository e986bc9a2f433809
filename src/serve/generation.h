// One running request on the engine: turns each engine output (token ids, log-probabilities,
// finish) into per-choice text updates. Per choice: ids -> streaming detokenizer (complete UTF-8
// only) -> stop strings (held back until they cannot match) -> output parser (reasoning, content,
// tool calls; partial markers held back). All of it runs on the engine thread, inside the
// engine's callback, so the per-choice state needs no lock; the sink must hand off quickly.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/engine.h"
#include "serve/generate_request.h"
#include "serve/metrics.h"
#include "serve/stop_strings.h"
#include "text/tokenizer/stream_detokenizer.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::serve {

using UpdateSink = std::function<void(const ChoiceUpdate&)>;

class Generation : public std::enable_shared_from_this<Generation> {
 public:
  using Clock = std::chrono::steady_clock;

  Generation(const text::Tokenizer& tokenizer, engine::Engine* engine, ServeMetrics* metrics,
             const GenerateRequest& request, const PreparedPrompt& prompt, UpdateSink sink,
             std::function<void()> on_done, Clock::time_point arrival);
  ~Generation();

  // Submits to the engine; the sink starts receiving updates on the engine thread.
  base::Status Submit();
  // Stops generation at the next step (client gone); choices finish as "cancelled".
  void Cancel();
  uint64_t engine_id() const { return engine_id_; }

 private:
  struct Choice;
  void OnOutput(const engine::RequestOutput& output);
  void AppendTokens(Choice& choice, const engine::RequestOutput& output, ChoiceUpdate* update);
  void FinishChoice(Choice& choice, const engine::RequestOutput& output, ChoiceUpdate* update);
  // Whether a control token the model emitted becomes text (see skip_special_tokens).
  bool KeepSpecial(const Choice& choice, const std::string& name) const;
  // parallel_tool_calls: false: drops the events of calls past the first.
  void LimitToolCalls(std::vector<text::output::OutputEvent>* events) const;
  TokenInfo DescribeToken(const engine::SampledToken& sampled) const;
  void RecordTiming(int64_t new_tokens);

  const text::Tokenizer& tokenizer_;
  engine::Engine* engine_;
  ServeMetrics* metrics_;
  PreparedPrompt prompt_;
  std::vector<std::string> stops_;
  bool include_stop_;
  bool skip_special_tokens_;
  bool want_logprobs_;
  std::vector<std::unique_ptr<Choice>> choices_;
  int unfinished_;
  UpdateSink sink_;
  std::function<void()> on_done_;
  Clock::time_point arrival_;
  std::optional<Clock::time_point> last_token_time_;
  std::atomic<uint64_t> engine_id_{0};
  std::atomic<bool> cancelled_{false};
};

}  // namespace k3::serve
