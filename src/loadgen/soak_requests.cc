#include "loadgen/soak_requests.h"

#include <nlohmann/json.hpp>

namespace k3::loadgen {
namespace {

using Json = nlohmann::json;

const char* const kWords[] = {"river",  "stone", "cloud",  "ember",  "harbor", "lantern", "meadow",
                              "signal", "orbit", "copper", "willow", "canyon", "thread",  "prism"};

// A user prompt of 4..19 words (varied, so the prefix cache sees hits and misses).
std::string Prompt(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> words(4, 19), word(0, std::size(kWords) - 1);
  std::string text = "Tell me about";
  for (int i = words(rng); i > 0; --i) text += std::string(" ") + kWords[word(rng)];
  return text;
}

Json Chat(const SoakContext& c, std::mt19937_64& rng, int max_tokens) {
  return {{"model", c.model},
          {"max_tokens", max_tokens},
          {"temperature", 0.7},
          {"seed", rng() % 1000},
          {"messages", Json::array({{{"role", "user"}, {"content", Prompt(rng)}}})}};
}

Json WeatherTool() {
  return {{"type", "function"},
          {"function",
           {{"name", "get_weather"},
            {"description", "Current weather of a city."},
            {"strict", true},
            {"parameters",
             {{"type", "object"},
              {"properties", {{"city", {{"type", "string"}, {"maxLength", 12}}}}},
              {"required", {"city"}},
              {"additionalProperties", false}}}}}};
}

Json AnswerSchema() {
  return {{"type", "json_schema"},
          {"json_schema",
           {{"name", "answer"},
            {"strict", true},
            {"schema",
             {{"type", "object"},
              {"properties", {{"ok", {{"type", "boolean"}}}, {"n", {{"type", "integer"}}}}},
              {"required", {"ok", "n"}},
              {"additionalProperties", false}}}}}};
}

}  // namespace

const char* SoakKindName(SoakKind kind) {
  switch (kind) {
    case SoakKind::kChat:
      return "chat";
    case SoakKind::kChatStream:
      return "chat_stream";
    case SoakKind::kCompletion:
      return "completion";
    case SoakKind::kMessagesStream:
      return "messages_stream";
    case SoakKind::kCancel:
      return "cancel";
    case SoakKind::kToolCall:
      return "tool_call";
    case SoakKind::kStructured:
      return "structured";
    case SoakKind::kMultiChoice:
      return "n3";
    case SoakKind::kBadJson:
      return "bad_json";
    case SoakKind::kBadField:
      return "bad_field";
    case SoakKind::kOversize:
      return "oversize";
    case SoakKind::kBadMessages:
      return "bad_messages";
    case SoakKind::kUnknownModel:
      return "unknown_model";
    case SoakKind::kCount:
      break;
  }
  return "?";
}

SoakRequest BuildSoakRequest(SoakKind kind, const SoakContext& c, std::mt19937_64& rng) {
  SoakRequest r;
  r.kind = kind;
  r.path = "/v1/chat/completions";
  Json body = Chat(c, rng, c.max_tokens);
  switch (kind) {
    case SoakKind::kChat:
    case SoakKind::kCount:
      break;
    case SoakKind::kChatStream:
      body["stream"] = r.stream = true;
      body["stream_options"] = {{"include_usage", true}};
      break;
    case SoakKind::kCompletion:
      r.path = "/v1/completions";
      body.erase("messages");
      body["prompt"] = Prompt(rng);
      break;
    case SoakKind::kMessagesStream:
      r.path = "/v1/messages";
      body.erase("seed");
      body["stream"] = r.stream = true;
      body["system"] = "Answer briefly.";
      break;
    case SoakKind::kCancel:
      body["max_tokens"] = std::max(c.max_tokens, 64);
      body["stream"] = r.stream = true;
      r.cancel_after_events = 2;
      break;
    case SoakKind::kToolCall:
      body["max_tokens"] = 256;
      body["tools"] = Json::array({WeatherTool()});
      body["tool_choice"] = "required";
      break;
    case SoakKind::kStructured:
      body["max_tokens"] = 256;
      body["response_format"] = AnswerSchema();
      break;
    case SoakKind::kMultiChoice:
      body["n"] = 3;
      break;
    case SoakKind::kBadJson:
      r.expect_status = 400;
      r.body = body.dump();
      r.body.resize(r.body.size() / 2);  // cut mid-way: never valid JSON
      return r;
    case SoakKind::kBadField:
      r.expect_status = 400;
      body[rng() % 2 ? "temperature" : "max_tokens"] = rng() % 2 ? Json("hot") : Json(-5);
      break;
    case SoakKind::kOversize: {
      r.expect_status = 400;
      std::string text;  // every word is at least one token: over the context by construction
      for (int64_t i = 0; i <= c.max_model_len; ++i)
        text += kWords[i % std::size(kWords)], text += ' ';
      body["messages"] = Json::array({{{"role", "user"}, {"content", text}}});
      break;
    }
    case SoakKind::kBadMessages:
      r.path = "/v1/messages";
      r.expect_status = 400;
      body.erase("max_tokens");
      body.erase("seed");
      break;
    case SoakKind::kUnknownModel:
      body["model"] = "no-such-model-" + std::to_string(rng() % 100);
      break;
  }
  r.body = body.dump();
  return r;
}

}  // namespace k3::loadgen
