// OpenAI Responses API response objects from the frontend's updates: the `response` object
// (output items: reasoning with its text as a summary_text part, message with output_text,
// function_call with call_id/name/arguments; usage; the request's settings echoed), and the SSE
// stream: response.created, response.in_progress, per item output_item.added, its part / delta
// / done events, output_item.done, then response.completed (response.incomplete when cut by
// max_output_tokens, response.failed on an error). Every event carries a sequence_number,
// counted from 0. Nothing is sent after the last one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/openai_response.h"

namespace k3::api {

class ResponsesBuilder {
 public:
  // `echo`: the request's settings (ResponsesRequest::echo).
  ResponsesBuilder(ResponseMeta meta, Json echo, bool stream);

  // response.created and response.in_progress (streaming), once the prompt's size is known.
  void Start(int64_t input_tokens, std::vector<std::string>* events);
  // Returns true when the response is complete.
  bool Add(const serve::ChoiceUpdate& update, std::vector<std::string>* events);
  std::string Body() const { return Dump(Response()); }
  // Called once with the finished response object (engine thread), e.g. to keep it.
  void OnDone(std::function<void(const Json& response)> done) { on_done_ = std::move(done); }

 private:
  enum class Item { kNone, kReasoning, kMessage, kFunctionCall };
  Json Response() const;
  void Emit(const std::string& type, Json data, std::vector<std::string>* events);
  void Open(Item kind, Json item, std::vector<std::string>* events);
  void Close(std::vector<std::string>* events);
  void Text(Item kind, const std::string& text, std::vector<std::string>* events);
  void Arguments(const std::string& text, std::vector<std::string>* events);
  void Finish(const serve::ChoiceUpdate& update, std::vector<std::string>* events);
  std::string ItemId(const char* prefix) const;

  ResponseMeta meta_;
  Json echo_;
  bool stream_;
  bool done_ = false;
  int64_t sequence_ = 0;
  std::string status_ = "in_progress";
  Json incomplete_details_ = nullptr;
  Json error_ = nullptr;
  Item open_ = Item::kNone;
  Json output_ = Json::array();  // the items, the open one last (its text filled in as it grows)
  serve::Usage usage_;
  std::function<void(const Json&)> on_done_;
};

}  // namespace k3::api
