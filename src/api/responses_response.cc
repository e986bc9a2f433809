#include "api/responses_response.h"

namespace k3::api {
namespace {

using text::output::OutputEvent;

std::string& MutableString(Json& json) { return json.get_ref<std::string&>(); }

}  // namespace

ResponsesBuilder::ResponsesBuilder(ResponseMeta meta, Json echo, bool stream)
    : meta_(std::move(meta)), echo_(std::move(echo)), stream_(stream) {}

std::string ResponsesBuilder::ItemId(const char* prefix) const {
  const std::string base = meta_.id.starts_with("resp_") ? meta_.id.substr(5) : meta_.id;
  return std::string(prefix) + base + "_" + std::to_string(output_.size());
}

Json ResponsesBuilder::Response() const {
  Json response = {{"id", meta_.id},
                   {"object", "response"},
                   {"created_at", meta_.created},
                   {"status", status_},
                   {"background", false},
                   {"error", error_},
                   {"incomplete_details", incomplete_details_},
                   {"model", meta_.model},
                   {"output", output_},
                   {"previous_response_id", nullptr},
                   {"top_logprobs", 0}};
  for (const auto& [key, value] : echo_.items()) response[key] = value;
  for (const char* key : {"temperature", "top_p"}) {
    if (!response.contains(key) || response[key].is_null()) response[key] = 1.0;
  }
  response["usage"] = nullptr;
  if (status_ == "in_progress") return response;
  response["usage"] = {{"input_tokens", usage_.prompt_tokens},
                       {"input_tokens_details", {{"cached_tokens", usage_.cached_tokens}}},
                       {"output_tokens", usage_.completion_tokens},
                       {"output_tokens_details", {{"reasoning_tokens", usage_.reasoning_tokens}}},
                       {"total_tokens", usage_.prompt_tokens + usage_.completion_tokens}};
  return response;
}

void ResponsesBuilder::Emit(const std::string& type, Json data, std::vector<std::string>* events) {
  if (!stream_) return;
  Json event = {{"type", type}};
  for (auto& [key, value] : data.items()) event[key] = std::move(value);
  event["sequence_number"] = sequence_++;
  events->push_back("event: " + type + "\ndata: " + Dump(event) + "\n\n");
}

void ResponsesBuilder::Start(int64_t input_tokens, std::vector<std::string>* events) {
  usage_.prompt_tokens = input_tokens;
  Emit("response.created", {{"response", Response()}}, events);
  Emit("response.in_progress", {{"response", Response()}}, events);
}

// Opens an output item; reasoning and message items open their first part with it.
void ResponsesBuilder::Open(Item kind, Json item, std::vector<std::string>* events) {
  Close(events);
  open_ = kind;
  output_.push_back(std::move(item));
  const int index = static_cast<int>(output_.size()) - 1;
  Json& open = output_.back();
  Emit("response.output_item.added", {{"output_index", index}, {"item", open}}, events);
  const Json where = {{"item_id", open["id"]}, {"output_index", index}};
  if (kind == Item::kReasoning) {
    open["summary"].push_back({{"type", "summary_text"}, {"text", ""}});
    Json data = where;
    data["summary_index"] = 0;
    data["part"] = open["summary"][0];
    Emit("response.reasoning_summary_part.added", std::move(data), events);
  } else if (kind == Item::kMessage) {
    open["content"].push_back(
        {{"type", "output_text"}, {"text", ""}, {"annotations", Json::array()}});
    Json data = where;
    data["content_index"] = 0;
    data["part"] = open["content"][0];
    Emit("response.content_part.added", std::move(data), events);
  }
}

// Closes the open item: its done events, then output_item.done with the whole item.
void ResponsesBuilder::Close(std::vector<std::string>* events) {
  if (open_ == Item::kNone) return;
  Json& item = output_.back();
  const int index = static_cast<int>(output_.size()) - 1;
  Json data = {{"item_id", item["id"]}, {"output_index", index}};
  if (open_ == Item::kReasoning) {
    data["summary_index"] = 0;
    data["text"] = item["summary"][0]["text"];
    Emit("response.reasoning_summary_text.done", data, events);
    data.erase("text");
    data["part"] = item["summary"][0];
    Emit("response.reasoning_summary_part.done", std::move(data), events);
  } else if (open_ == Item::kMessage) {
    data["content_index"] = 0;
    data["text"] = item["content"][0]["text"];
    Emit("response.output_text.done", data, events);
    data.erase("text");
    data["part"] = item["content"][0];
    Emit("response.content_part.done", std::move(data), events);
    item["status"] = "completed";
  } else {
    data["name"] = item["name"];
    data["arguments"] = item["arguments"];
    Emit("response.function_call_arguments.done", std::move(data), events);
    if (item["status"] == "in_progress") item["status"] = "completed";
  }
  open_ = Item::kNone;
  Emit("response.output_item.done", {{"output_index", index}, {"item", item}}, events);
}

void ResponsesBuilder::Text(Item kind, const std::string& text, std::vector<std::string>* events) {
  if (text.empty()) return;
  if (open_ != kind) {
    if (kind == Item::kReasoning) {
      Open(kind, {{"id", ItemId("rs_")}, {"type", "reasoning"}, {"summary", Json::array()}},
           events);
    } else {
      Open(kind,
           {{"id", ItemId("msg_")},
            {"type", "message"},
            {"status", "in_progress"},
            {"role", "assistant"},
            {"content", Json::array()}},
           events);
    }
  }
  Json& item = output_.back();
  Json data = {{"item_id", item["id"]}, {"output_index", static_cast<int>(output_.size()) - 1}};
  if (kind == Item::kReasoning) {
    MutableString(item["summary"][0]["text"]) += text;
    data["summary_index"] = 0;
    data["delta"] = text;
    Emit("response.reasoning_summary_text.delta", std::move(data), events);
  } else {
    MutableString(item["content"][0]["text"]) += text;
    data["content_index"] = 0;
    data["delta"] = text;
    Emit("response.output_text.delta", std::move(data), events);
  }
}

void ResponsesBuilder::Arguments(const std::string& text, std::vector<std::string>* events) {
  if (open_ != Item::kFunctionCall || text.empty()) return;
  Json& item = output_.back();
  MutableString(item["arguments"]) += text;
  Emit("response.function_call_arguments.delta",
       {{"item_id", item["id"]},
        {"output_index", static_cast<int>(output_.size()) - 1},
        {"delta", text}},
       events);
}

bool ResponsesBuilder::Add(const serve::ChoiceUpdate& update, std::vector<std::string>* events) {
  if (done_ || update.index != 0) return done_;
  usage_.completion_tokens = update.usage.completion_tokens;
  usage_.cached_tokens = update.usage.cached_tokens;
  usage_.reasoning_tokens = update.usage.reasoning_tokens;
  for (const OutputEvent& e : update.events) {
    switch (e.kind) {
      case OutputEvent::kReasoning:
        Text(Item::kReasoning, e.text, events);
        break;
      case OutputEvent::kContent:
        Text(Item::kMessage, e.text, events);
        break;
      case OutputEvent::kToolCallBegin:
        Open(Item::kFunctionCall,
             {{"id", ItemId("fc_")},
              {"type", "function_call"},
              {"status", "in_progress"},
              {"arguments", ""},
              {"call_id", e.id},
              {"name", e.name}},
             events);
        break;
      case OutputEvent::kToolCallArguments:
        Arguments(e.text, events);
        break;
      case OutputEvent::kToolCallEnd:
        if (open_ == Item::kFunctionCall && !e.complete) output_.back()["status"] = "incomplete";
        Close(events);
        break;
    }
  }
  Text(Item::kMessage, update.text, events);  // unparsed output (chat formats that do not parse)
  if (!update.finish_reason) return false;
  Finish(update, events);
  return true;
}

// The terminal status and event: completed, incomplete (max_output_tokens; a cancelled client,
// who reads nothing more) or failed.
void ResponsesBuilder::Finish(const serve::ChoiceUpdate& update, std::vector<std::string>* events) {
  done_ = true;
  if (open_ == Item::kFunctionCall) output_.back()["status"] = "incomplete";
  Close(events);
  const std::string& reason = *update.finish_reason;
  std::string event = "response.completed";
  status_ = "completed";
  if (reason == "length" || reason == "cancelled") {
    status_ = "incomplete";
    event = "response.incomplete";
    incomplete_details_ = {{"reason", reason == "length" ? "max_output_tokens" : "cancelled"}};
  } else if (reason == "error") {
    status_ = "failed";
    event = "response.failed";
    error_ = {{"code", "server_error"}, {"message", update.error}};
  }
  Emit(event, {{"response", Response()}}, events);
  if (on_done_) on_done_(Response());
}

}  // namespace k3::api
