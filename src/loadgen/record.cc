#include "loadgen/record.h"

#include <nlohmann/json.hpp>

namespace k3::loadgen {

double RequestRecord::tpot() const {
  if (output_tokens < 2 || first_token_s < 0) return -1;
  return (end_s - first_token_s) / static_cast<double>(output_tokens - 1);
}

bool ReadChunk(const std::string& framed, double now_s, RequestRecord* r) {
  // An event is "data: {...}\n\n" (comments and other fields are ignored).
  size_t at = framed.find("data:");
  if (at == std::string::npos) return true;
  at += 5;
  if (at < framed.size() && framed[at] == ' ') ++at;
  const std::string_view data(framed.data() + at, framed.size() - at);
  if (data.starts_with("[DONE]")) return true;
  const auto chunk = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!chunk.is_object()) {
    r->error = "bad_chunk";
    return false;
  }
  if (chunk.contains("error")) {
    r->error = "stream_error";
    return false;
  }
  std::string text;
  if (const auto choices = chunk.find("choices"); choices != chunk.end() && choices->is_array()) {
    for (const auto& choice : *choices) {
      if (!choice.is_object()) continue;
      if (const auto t = choice.find("text"); t != choice.end() && t->is_string()) {
        text += t->get<std::string>();
      }
      const auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object()) continue;
      for (const char* field : {"content", "reasoning_content"}) {
        const auto piece = delta->find(field);
        if (piece == delta->end() || !piece->is_string()) continue;
        text += piece->get<std::string>();
        if (field[0] == 'c') r->reply += piece->get<std::string>();
      }
      if (delta->contains("tool_calls")) text += " ";  // a tool-call delta is output too
    }
  }
  if (!text.empty()) {
    if (r->first_token_s < 0) {
      r->first_token_s = now_s;
    } else {
      r->gaps_s.push_back(now_s - r->end_s);
    }
    r->end_s = now_s;  // the last text event so far
    ++r->text_events;
  }
  auto count = [](const nlohmann::json& object, const char* name) -> int64_t {
    const auto it = object.find(name);
    return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  if (const auto usage = chunk.find("usage"); usage != chunk.end() && usage->is_object()) {
    r->prompt_tokens = count(*usage, "prompt_tokens");
    r->output_tokens = count(*usage, "completion_tokens");
    if (const auto details = usage->find("prompt_tokens_details");
        details != usage->end() && details->is_object()) {
      r->cached_tokens = count(*details, "cached_tokens");
    }
  }
  return true;
}

}  // namespace k3::loadgen
