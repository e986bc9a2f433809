#include "api/openai_response.h"

namespace k3::api {
namespace {

using text::output::OutputEvent;

Json Bytes(const std::string& bytes) {
  Json list = Json::array();
  for (unsigned char c : bytes) list.push_back(static_cast<int>(c));
  return list;
}

Json TokenEntry(const serve::TokenLogprob& t) {
  return {{"token", t.bytes}, {"logprob", t.logprob}, {"bytes", Bytes(t.bytes)}};
}

// The chosen token with its alternatives (chat's logprobs.content[] entry shape).
Json LogprobEntry(const serve::TokenInfo& t) {
  Json entry = TokenEntry(t.chosen);
  entry["top_logprobs"] = Json::array();
  for (const auto& alt : t.top) entry["top_logprobs"].push_back(TokenEntry(alt));
  return entry;
}

// Consecutive events of one kind (and one tool call) merge into one delta.
bool SameGroup(const OutputEvent& a, const OutputEvent& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == OutputEvent::kToolCallArguments) return a.tool_index == b.tool_index;
  return a.kind == OutputEvent::kReasoning || a.kind == OutputEvent::kContent;
}

}  // namespace

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string SseData(const Json& json) { return "data: " + Dump(json) + "\n\n"; }

OpenAiResponseBuilder::OpenAiResponseBuilder(Kind kind, ResponseMeta meta, int n, bool stream,
                                             bool include_usage, std::string echo_prefix)
    : kind_(kind),
      meta_(std::move(meta)),
      stream_(stream),
      include_usage_(include_usage),
      echo_prefix_(std::move(echo_prefix)),
      choices_(static_cast<size_t>(n)),
      unfinished_(n) {}

Json OpenAiResponseBuilder::Chunk() const {
  Json chunk = {{"id", meta_.id},
                {"object", kind_ == Kind::kChat ? "chat.completion.chunk" : "text_completion"},
                {"created", meta_.created},
                {"model", meta_.model},
                {"system_fingerprint", "k3serve"},
                {"choices", Json::array()}};
  if (include_usage_) chunk["usage"] = nullptr;
  return chunk;
}

Json OpenAiResponseBuilder::StreamChoice(int index) const {
  Json choice = {{"index", index}};
  if (kind_ == Kind::kChat) choice["delta"] = Json::object();
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = nullptr;
  return choice;
}

bool OpenAiResponseBuilder::Add(const serve::ChoiceUpdate& update,
                                std::vector<std::string>* events) {
  if (update.index < 0 || update.index >= static_cast<int>(choices_.size())) return false;
  Choice& choice = choices_[static_cast<size_t>(update.index)];
  if (choice.finished) return unfinished_ == 0;
  if (update.index == 0) usage_.cached_tokens = update.usage.cached_tokens;
  usage_.prompt_tokens = update.usage.prompt_tokens;
  choice.generated = update.usage.completion_tokens;
  choice.reasoning = update.usage.reasoning_tokens;
  choice.text += update.text;
  for (const auto& t : update.logprobs) choice.logprobs.push_back(LogprobEntry(t));
  if (stream_) {
    if (kind_ == Kind::kChat) {
      StreamChat(update, choice, events);
    } else {
      StreamCompletion(update, events);
    }
  }
  if (update.finish_reason) {
    choice.finished = true;
    choice.finish_reason = *update.finish_reason;
    choice.parsed = update.parsed;
    --unfinished_;
  }
  if (unfinished_ == 0 && stream_) {
    if (include_usage_) {
      Json chunk = Chunk();
      chunk["usage"] = UsageJson();
      events->push_back(SseData(chunk));
    }
    events->push_back("data: [DONE]\n\n");
  }
  return unfinished_ == 0;
}

void OpenAiResponseBuilder::StreamChat(const serve::ChoiceUpdate& update, Choice& choice,
                                       std::vector<std::string>* events) const {
  std::vector<Json> deltas;
  if (!choice.started) {
    choice.started = true;
    deltas.push_back({{"role", "assistant"}, {"content", ""}});
  }
  const auto& list = update.events;
  for (size_t i = 0; i < list.size();) {
    size_t j = i + 1;
    while (j < list.size() && SameGroup(list[i], list[j])) ++j;
    std::string text;
    for (size_t k = i; k < j; ++k) text += list[k].text;
    const OutputEvent& e = list[i];
    switch (e.kind) {
      case OutputEvent::kReasoning:
        deltas.push_back({{"reasoning_content", text}});
        break;
      case OutputEvent::kContent:
        deltas.push_back({{"content", text}});
        break;
      case OutputEvent::kToolCallBegin:
        deltas.push_back({{"tool_calls",
                           {{{"index", e.tool_index},
                             {"id", e.id},
                             {"type", "function"},
                             {"function", {{"name", e.name}, {"arguments", ""}}}}}}});
        break;
      case OutputEvent::kToolCallArguments:
        deltas.push_back(
            {{"tool_calls", {{{"index", e.tool_index}, {"function", {{"arguments", text}}}}}}});
        break;
      default:
        break;
    }
    i = j;
  }
  if (update.text.size() > 0) deltas.push_back({{"content", update.text}});
  if (deltas.empty() && !update.logprobs.empty()) deltas.push_back(Json::object());
  Json logprobs = update.logprobs.empty() ? Json(nullptr) : ChatLogprobs(update);
  for (size_t i = 0; i < deltas.size(); ++i) {
    Json chunk = Chunk();
    Json c = StreamChoice(update.index);
    c["delta"] = std::move(deltas[i]);
    if (i == 0 && !logprobs.is_null()) c["logprobs"] = logprobs;
    chunk["choices"].push_back(std::move(c));
    events->push_back(SseData(chunk));
  }
  if (update.finish_reason) {
    Json chunk = Chunk();
    Json c = StreamChoice(update.index);
    c["finish_reason"] = *update.finish_reason;
    chunk["choices"].push_back(std::move(c));
    events->push_back(SseData(chunk));
  }
}

Json OpenAiResponseBuilder::ChatLogprobs(const serve::ChoiceUpdate& update) const {
  Json content = Json::array();
  for (const auto& t : update.logprobs) content.push_back(LogprobEntry(t));
  return {{"content", std::move(content)}};
}

Json OpenAiResponseBuilder::CompletionLogprobs(const Json& entries) const {
  // Legacy completions shape: parallel lists; top_logprobs holds one {token: logprob} object
  // per position (null when no alternatives were asked for).
  Json tokens = Json::array(), values = Json::array(), offsets = Json::array();
  Json top = Json::array();
  bool any_top = false;
  size_t offset = echo_prefix_.size();
  for (const Json& e : entries) {
    tokens.push_back(e["token"]);
    values.push_back(e["logprob"]);
    offsets.push_back(offset);
    offset += e["token"].get_ref<const std::string&>().size();
    Json alternatives = Json::object();
    for (const Json& alt : e["top_logprobs"]) {
      any_top = true;
      alternatives[alt["token"].get<std::string>()] = alt["logprob"];
    }
    top.push_back(std::move(alternatives));
  }
  return {{"tokens", tokens},
          {"token_logprobs", values},
          {"top_logprobs", any_top ? top : Json(nullptr)},
          {"text_offset", offsets}};
}

void OpenAiResponseBuilder::StreamCompletion(const serve::ChoiceUpdate& update,
                                             std::vector<std::string>* events) const {
  const Choice& choice = choices_[static_cast<size_t>(update.index)];
  std::string text = update.text;
  if (!echo_prefix_.empty() && choice.text.size() == update.text.size()) {
    text = echo_prefix_ + text;  // the first update of this choice carries the echo
  }
  if (text.empty() && update.logprobs.empty() && !update.finish_reason) return;
  Json chunk = Chunk();
  Json c = StreamChoice(update.index);
  c["text"] = text;
  if (!update.logprobs.empty()) {
    Json entries = Json::array();
    for (const auto& t : update.logprobs) entries.push_back(LogprobEntry(t));
    c["logprobs"] = CompletionLogprobs(entries);
  }
  if (update.finish_reason) c["finish_reason"] = *update.finish_reason;
  chunk["choices"].push_back(std::move(c));
  events->push_back(SseData(chunk));
}

Json OpenAiResponseBuilder::ChatMessage(const Choice& choice) const {
  Json message = {{"role", "assistant"}};
  Json calls = Json::array();
  std::string content = choice.text, reasoning;
  if (choice.parsed) {
    content += choice.parsed->content;
    reasoning = choice.parsed->reasoning;
    for (const auto& call : choice.parsed->tool_calls) {
      if (!call.complete) continue;
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
  }
  message["content"] = content.empty() && !calls.empty() ? Json(nullptr) : Json(content);
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  return message;
}

Json OpenAiResponseBuilder::UsageJson() const {
  int64_t generated = 0, reasoning = 0;
  for (const Choice& c : choices_) {
    generated += c.generated;
    reasoning += c.reasoning;
  }
  Json usage = {{"prompt_tokens", usage_.prompt_tokens},
                {"completion_tokens", generated},
                {"total_tokens", usage_.prompt_tokens + generated},
                {"prompt_tokens_details", {{"cached_tokens", usage_.cached_tokens}}}};
  if (kind_ == Kind::kChat) usage["completion_tokens_details"] = {{"reasoning_tokens", reasoning}};
  return usage;
}

std::string OpenAiResponseBuilder::Body() const {
  Json body = {{"id", meta_.id},
               {"object", kind_ == Kind::kChat ? "chat.completion" : "text_completion"},
               {"created", meta_.created},
               {"model", meta_.model},
               {"system_fingerprint", "k3serve"},
               {"choices", Json::array()}};
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& choice = choices_[i];
    Json c = {{"index", i}};
    const bool with_logprobs = !choice.logprobs.empty();
    if (kind_ == Kind::kChat) {
      c["message"] = ChatMessage(choice);
      c["logprobs"] = with_logprobs ? Json{{"content", choice.logprobs}} : Json(nullptr);
    } else {
      c["text"] = echo_prefix_ + choice.text;
      c["logprobs"] = with_logprobs ? CompletionLogprobs(choice.logprobs) : Json(nullptr);
    }
    c["finish_reason"] = choice.finish_reason;
    body["choices"].push_back(std::move(c));
  }
  body["usage"] = UsageJson();
  return Dump(body);
}

}  // namespace k3::api
