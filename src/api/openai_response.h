// OpenAI response bodies built from the frontend's per-choice updates: chat.completion and
// text_completion objects (non-streaming), and their SSE chunk streams. Updates arrive in order
// per choice; a builder is used from one thread at a time.
#pragma once

#include <string>
#include <vector>

#include "api/api_error.h"
#include "serve/generate_request.h"

namespace k3::api {

struct ResponseMeta {
  std::string id;  // chatcmpl-… / cmpl-… / msg_…
  int64_t created = 0;
  std::string model;
};

// JSON text with invalid UTF-8 (partial tokens in logprobs) replaced by U+FFFD.
std::string Dump(const Json& json);
std::string SseData(const Json& json);  // "data: {...}\n\n"

class OpenAiResponseBuilder {
 public:
  enum class Kind { kChat, kCompletion };
  OpenAiResponseBuilder(Kind kind, ResponseMeta meta, int n, bool stream, bool include_usage,
                        std::string echo_prefix = "");

  // Streaming: appends framed SSE events (incl. the final usage chunk and [DONE]). Both modes:
  // returns true once every choice has finished.
  bool Add(const serve::ChoiceUpdate& update, std::vector<std::string>* events);
  // Non-streaming: the whole response (after Add returned true).
  std::string Body() const;

 private:
  struct Choice {
    bool started = false, finished = false;
    std::string text;  // completions
    std::string finish_reason;
    std::optional<text::output::ParsedOutput> parsed;
    Json logprobs = Json::array();  // chat: content[]; completions: per-token entries
    int64_t generated = 0;
    int64_t reasoning = 0;
  };
  Json Chunk() const;
  Json StreamChoice(int index) const;
  void StreamChat(const serve::ChoiceUpdate& update, Choice& choice,
                  std::vector<std::string>* events) const;
  void StreamCompletion(const serve::ChoiceUpdate& update, std::vector<std::string>* events) const;
  Json ChatLogprobs(const serve::ChoiceUpdate& update) const;
  Json CompletionLogprobs(const Json& entries) const;
  Json ChatMessage(const Choice& choice) const;
  Json UsageJson() const;

  Kind kind_;
  ResponseMeta meta_;
  bool stream_, include_usage_;
  std::string echo_prefix_;
  std::vector<Choice> choices_;
  int unfinished_;
  serve::Usage usage_;
};

}  // namespace k3::api
