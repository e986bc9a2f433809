#include "serve/generation.h"

#include <algorithm>

#include "base/log.h"

namespace k3::serve {

struct Generation::Choice {
  Choice(const text::Tokenizer& tokenizer, const std::vector<std::string>& stops, bool include,
         const PreparedPrompt& prompt)
      : detokenizer(tokenizer), stop(stops, include) {
    if (prompt.parse_output) parser.emplace(prompt.parser);
  }
  text::StreamDetokenizer detokenizer;
  StopStringMatcher stop;
  std::optional<text::output::OutputParser> parser;
  int64_t generated = 0;
  int64_t reasoning = 0;
  bool done = false;
};

Generation::Generation(const text::Tokenizer& tokenizer, engine::Engine* engine,
                       ServeMetrics* metrics, const GenerateRequest& request,
                       const PreparedPrompt& prompt, UpdateSink sink, std::function<void()> on_done,
                       Clock::time_point arrival)
    : tokenizer_(tokenizer),
      engine_(engine),
      metrics_(metrics),
      prompt_(prompt),
      stops_(request.stop),
      include_stop_(request.include_stop_string),
      skip_special_tokens_(request.skip_special_tokens),
      want_logprobs_(request.want_logprobs),
      unfinished_(request.sampling.n),
      sink_(std::move(sink)),
      on_done_(std::move(on_done)),
      arrival_(arrival) {
  for (int i = 0; i < request.sampling.n; ++i) {
    choices_.push_back(std::make_unique<Choice>(tokenizer_, stops_, include_stop_, prompt_));
  }
}

Generation::~Generation() = default;

base::Status Generation::Submit() {
  engine::EngineRequest request;
  request.prompt = prompt_.ids;
  request.params = prompt_.sampling;
  // The callback keeps this object alive until the engine's last output.
  std::shared_ptr<Generation> self = shared_from_this();
  request.on_output = [self](const engine::RequestOutput& output) { self->OnOutput(output); };
  K3_ASSIGN_OR_RETURN(uint64_t id, engine_->Submit(std::move(request)));
  engine_id_ = id;
  if (cancelled_) engine_->Cancel(id);
  return base::Status::Ok();
}

void Generation::Cancel() {
  if (cancelled_.exchange(true)) return;
  if (const uint64_t id = engine_id_; id != 0) engine_->Cancel(id);
}

void Generation::OnOutput(const engine::RequestOutput& output) {
  if (output.index < 0 || output.index >= static_cast<int>(choices_.size())) return;
  Choice& choice = *choices_[static_cast<size_t>(output.index)];
  if (choice.done) return;  // ended by a stop string; the engine may still be finishing it
  ChoiceUpdate update;
  update.index = output.index;
  AppendTokens(choice, output, &update);
  RecordTiming(static_cast<int64_t>(output.tokens.size()));
  if (output.finished() || choice.stop.stopped()) FinishChoice(choice, output, &update);
  const bool only_reasoning =
      !update.events.empty() &&
      std::all_of(update.events.begin(), update.events.end(),
                  [](const auto& e) { return e.kind == text::output::OutputEvent::kReasoning; });
  if (only_reasoning) choice.reasoning += static_cast<int64_t>(output.tokens.size());
  update.usage = {prompt_.reported_prompt_tokens, choice.generated, output.cached_tokens,
                  choice.reasoning};
  const bool all_done = choice.done && --unfinished_ == 0;
  if (all_done) {
    // Counted before the last event leaves: a client that scrapes /metrics after reading it
    // sees this request's prompt tokens next to the engine's cached-token count for it.
    int64_t generated = 0;
    for (const auto& c : choices_) generated += c->generated;
    metrics_->AddTokens(prompt_.reported_prompt_tokens, generated);
    metrics_->RecordEndToEnd(std::chrono::duration<double>(Clock::now() - arrival_).count());
  }
  sink_(update);
  if (all_done) {
    // All choices have ended; stop the engine if stop strings ended them early.
    if (!output.finished()) engine_->Cancel(output.request_id);
    if (on_done_) on_done_();
  }
}

void Generation::AppendTokens(Choice& choice, const engine::RequestOutput& output,
                              ChoiceUpdate* update) {
  std::string raw;
  for (size_t i = 0; i < output.tokens.size() && !choice.stop.stopped(); ++i) {
    const int32_t token = output.tokens[i];
    ++choice.generated;
    if (want_logprobs_ && i < output.logprobs.size()) {
      update->logprobs.push_back(DescribeToken(output.logprobs[i]));
    }
    // The stop token that ends a completion is not part of the text.
    const bool last = i + 1 == output.tokens.size();
    // (Also after a grammar output that max_tokens made end early: complete, finished as length.)
    if (last && (output.finish_reason == engine::FinishReason::kStop || output.grammar_complete) &&
        token == engine_->info().eos_token_id) {
      continue;
    }
    if (const std::string* special =
            tokenizer_.specials().NameOf(static_cast<text::TokenId>(token));
        special != nullptr && !KeepSpecial(choice, *special)) {
      continue;
    }
    if (!choice.detokenizer.Push(token, &raw).ok()) raw += "\xEF\xBF\xBD";
  }
  if (output.finished()) choice.detokenizer.Finish(&raw);
  std::string visible;
  choice.stop.Feed(raw, &visible);
  if (output.finished() && !choice.stop.stopped()) choice.stop.Finish(&visible);
  if (choice.parser) {
    choice.parser->Feed(visible, &update->events);
    LimitToolCalls(&update->events);
  } else {
    update->text = std::move(visible);
  }
}

bool Generation::KeepSpecial(const Choice& choice, const std::string& name) const {
  if (!skip_special_tokens_) return true;
  return choice.parser && text::output::IsParserMarkup(prompt_.parser.format, name);
}

void Generation::FinishChoice(Choice& choice, const engine::RequestOutput& output,
                              ChoiceUpdate* update) {
  choice.done = true;
  const bool by_stop_string = choice.stop.stopped();
  const bool truncated = !by_stop_string && output.finish_reason == engine::FinishReason::kLength;
  // A grammar output the budget made end early is complete (finish_reason still "length").
  const bool complete = output.grammar_complete;
  if (choice.parser) {
    choice.parser->Finish(truncated && !complete, &update->events);
    LimitToolCalls(&update->events);
    update->parsed = choice.parser->result();
    if (prompt_.max_tool_calls >= 0 &&
        update->parsed->tool_calls.size() > static_cast<size_t>(prompt_.max_tool_calls)) {
      update->parsed->tool_calls.resize(static_cast<size_t>(prompt_.max_tool_calls));
    }
  }
  if (by_stop_string) {
    update->finish_reason = "stop";
    update->matched_stop = choice.stop.matched();
    return;
  }
  switch (output.finish_reason) {
    case engine::FinishReason::kStop:
    case engine::FinishReason::kLength: {
      // Complete tool calls count even when the length limit cut the section after them.
      const bool calls = update->parsed && update->parsed->has_tool_calls();
      update->finish_reason = calls ? "tool_calls" : (truncated ? "length" : "stop");
      break;
    }
    case engine::FinishReason::kCancelled:
      update->finish_reason = "cancelled";
      break;
    default:
      update->finish_reason = "error";
      update->error = output.error.ok() ? "generation failed" : output.error.message();
  }
}

void Generation::LimitToolCalls(std::vector<text::output::OutputEvent>* events) const {
  if (prompt_.max_tool_calls < 0) return;
  std::erase_if(*events, [this](const text::output::OutputEvent& e) {
    return e.tool_index >= prompt_.max_tool_calls &&
           (e.kind == text::output::OutputEvent::kToolCallBegin ||
            e.kind == text::output::OutputEvent::kToolCallArguments ||
            e.kind == text::output::OutputEvent::kToolCallEnd);
  });
}

TokenInfo Generation::DescribeToken(const engine::SampledToken& sampled) const {
  auto describe = [this](int32_t id, float logprob) {
    TokenLogprob t;
    t.id = id;
    t.logprob = logprob;
    if (auto bytes = tokenizer_.TokenBytes(id); bytes.ok()) t.bytes = std::string(*bytes);
    return t;
  };
  TokenInfo info;
  info.chosen = describe(sampled.token, sampled.logprob);
  for (const auto& alt : sampled.top) info.top.push_back(describe(alt.token, alt.logprob));
  return info;
}

void Generation::RecordTiming(int64_t new_tokens) {
  if (new_tokens <= 0) return;
  const Clock::time_point now = Clock::now();
  if (!last_token_time_) {
    metrics_->RecordTimeToFirstToken(std::chrono::duration<double>(now - arrival_).count());
  } else {
    const double gap = std::chrono::duration<double>(now - *last_token_time_).count();
    metrics_->RecordInterTokenLatency(gap / static_cast<double>(new_tokens));
  }
  last_token_time_ = now;
}

}  // namespace k3::serve
