// OpenAiResponseBuilder: synthetic per-choice updates in, SSE chunks and bodies out. A stream is
// reassembled the way a client does (content / reasoning_content concatenated; tool_calls by
// index, id + name from the first delta, arguments concatenated) and must equal the non-streamed
// body built from the same updates.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "api/openai_response.h"

namespace k3::api {
namespace {

using serve::ChoiceUpdate;
using text::output::OutputEvent;

OutputEvent Reason(std::string text) { return {.kind = OutputEvent::kReasoning, .text = text}; }
OutputEvent Content(std::string text) { return {.kind = OutputEvent::kContent, .text = text}; }
OutputEvent Begin(int index, const std::string& name) {
  return {.kind = OutputEvent::kToolCallBegin,
          .tool_index = index,
          .id = "functions." + name + ":" + std::to_string(index),
          .name = name};
}
OutputEvent Args(int index, std::string text) {
  return {.kind = OutputEvent::kToolCallArguments, .text = text, .tool_index = index};
}
OutputEvent End(int index, bool complete) {
  return {.kind = OutputEvent::kToolCallEnd, .tool_index = index, .complete = complete};
}

serve::TokenInfo Token(const std::string& bytes, float logprob) {
  return {.chosen = {.id = 1, .bytes = bytes, .logprob = logprob},
          .top = {{.id = 2, .bytes = "alt", .logprob = logprob - 1}}};
}

// Fills usage and, on the finishing update, `parsed` = the fold of all the choice's events.
std::vector<ChoiceUpdate> Finalize(std::vector<ChoiceUpdate> updates) {
  std::map<int, std::vector<OutputEvent>> all;
  std::map<int, int64_t> tokens;
  for (ChoiceUpdate& u : updates) {
    all[u.index].insert(all[u.index].end(), u.events.begin(), u.events.end());
    tokens[u.index] += 3;
    u.usage = {.prompt_tokens = 11, .completion_tokens = tokens[u.index], .cached_tokens = 4};
    if (u.finish_reason) {
      u.parsed.emplace();
      text::output::ApplyEvents(all[u.index], &*u.parsed);
    }
  }
  return updates;
}

struct Output {
  std::vector<std::string> events;
  std::vector<bool> done;  // Add's result per update
  std::string body;
};

Output Feed(const std::vector<ChoiceUpdate>& updates, int n, bool stream, bool include_usage) {
  OpenAiResponseBuilder builder(OpenAiResponseBuilder::Kind::kChat,
                                {.id = "chatcmpl-1", .created = 1700000000, .model = "k3"}, n,
                                stream, include_usage);
  Output run;
  for (const ChoiceUpdate& u : updates) run.done.push_back(builder.Add(u, &run.events));
  run.body = builder.Body();
  return run;
}

// "data: {...}\n\n" events up to "data: [DONE]", which must be the last event.
std::vector<Json> ParseSse(const std::vector<std::string>& events) {
  std::vector<Json> chunks;
  bool done = false;
  for (const std::string& e : events) {
    EXPECT_FALSE(done) << "event after [DONE]: " << e;
    EXPECT_TRUE(e.starts_with("data: ") && e.ends_with("\n\n")) << e;
    const std::string data = e.substr(6, e.size() - 8);
    if (data == "[DONE]") {
      done = true;
      continue;
    }
    chunks.push_back(Json::parse(data));
  }
  EXPECT_TRUE(done) << "no [DONE]";
  return chunks;
}

void Append(Json& target, const char* key, const Json& piece) {
  if (!piece.is_string()) return;
  target[key] = target.value(key, "") + piece.get<std::string>();
}

// What a client rebuilds from the chunks: {message, finish_reason, logprobs} per choice index.
std::map<int, Json> Reassemble(const std::vector<Json>& chunks) {
  std::map<int, Json> out;
  for (const Json& chunk : chunks) {
    for (const Json& c : chunk["choices"]) {
      Json& choice = out[c["index"].get<int>()];
      Json& message = choice["message"];
      const Json& delta = c["delta"];
      if (delta.contains("role")) message["role"] = delta["role"];
      Append(message, "content", delta.value("content", Json()));
      Append(message, "reasoning_content", delta.value("reasoning_content", Json()));
      for (const Json& call : delta.value("tool_calls", Json::array())) {
        Json& calls = message["tool_calls"];
        const size_t index = call["index"].get<size_t>();
        if (index >= calls.size()) {  // first delta of a call: id, type and name
          EXPECT_EQ(index, calls.size()) << "tool call indexes must arrive in order";
          if (index != calls.size()) continue;
          calls.push_back({{"id", call["id"]},
                           {"type", call["type"]},
                           {"function", {{"name", call["function"]["name"]}, {"arguments", ""}}}});
        }
        Append(calls[index]["function"], "arguments", call["function"].value("arguments", Json()));
      }
      if (c["logprobs"].is_object()) {
        for (const Json& t : c["logprobs"]["content"]) choice["logprobs"]["content"].push_back(t);
      }
      if (!c["finish_reason"].is_null()) choice["finish_reason"] = c["finish_reason"];
    }
  }
  return out;
}

// The non-streamed choice in the reassembled shape (content null with tool calls -> "").
Json Normalized(const Json& choice) {
  Json message = choice["message"];
  if (message["content"].is_null()) message["content"] = "";
  Json out = {{"message", message}, {"finish_reason", choice["finish_reason"]}};
  if (!choice["logprobs"].is_null()) out["logprobs"] = choice["logprobs"];
  return out;
}

void ExpectStreamMatchesBody(const std::vector<ChoiceUpdate>& updates, int n, bool usage) {
  const Output streamed = Feed(updates, n, true, usage);
  const Output whole = Feed(updates, n, false, usage);
  EXPECT_TRUE(whole.events.empty());
  const Json body = Json::parse(whole.body);
  const std::vector<Json> chunks = ParseSse(streamed.events);
  const std::map<int, Json> rebuilt = Reassemble(chunks);
  ASSERT_EQ(rebuilt.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Json normal = rebuilt.at(i);
    if (normal["message"]["content"].is_null()) normal["message"]["content"] = "";
    // Key order is not part of the contract: compare as unordered JSON.
    EXPECT_EQ(nlohmann::json::parse(normal.dump()),
              nlohmann::json::parse(Normalized(body["choices"][i]).dump()))
        << "choice " << i;
  }
  EXPECT_EQ(Json::parse(streamed.body)["choices"], body["choices"]);
}

std::vector<ChoiceUpdate> ThinkAnswerAndCall(int index) {
  std::vector<ChoiceUpdate> u(4);
  u[0].events = {Reason("Let me "), Reason("think")};
  u[0].logprobs = {Token("Let", -0.5f), Token(" me", -0.25f)};
  u[1].events = {Reason("."), Content("Sure")};
  u[2].events = {Content(", calling."), Begin(0, "get_weather"), Args(0, "{\"city\":")};
  u[2].logprobs = {Token("\xE2\x82", -1.0f)};  // a partial UTF-8 token
  u[3].events = {Args(0, "\"Oslo\"}"), End(0, true), Begin(1, "get_time"), Args(1, "{}"),
                 End(1, true)};
  u[3].finish_reason = "tool_calls";
  for (ChoiceUpdate& x : u) x.index = index;
  return u;
}

TEST(OpenAiStream, ReassemblyEqualsTheNonStreamedMessage) {
  const auto updates = Finalize(ThinkAnswerAndCall(0));
  ExpectStreamMatchesBody(updates, 1, false);
  const Json message = Json::parse(Feed(updates, 1, false, false).body)["choices"][0]["message"];
  EXPECT_EQ(message["content"], "Sure, calling.");
  EXPECT_EQ(message["reasoning_content"], "Let me think.");
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], "{\"city\":\"Oslo\"}");
  EXPECT_EQ(message["tool_calls"][1]["id"], "functions.get_time:1");
}

TEST(OpenAiStream, ChunkFraming) {
  const Output run = Feed(Finalize(ThinkAnswerAndCall(0)), 1, true, false);
  EXPECT_EQ(run.done, (std::vector<bool>{false, false, false, true}));
  const std::vector<Json> chunks = ParseSse(run.events);
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks[0]["choices"][0]["delta"]["role"], "assistant");
  for (size_t i = 0; i < chunks.size(); ++i) {
    const Json& chunk = chunks[i];
    EXPECT_EQ(chunk["id"], "chatcmpl-1");
    EXPECT_EQ(chunk["created"], 1700000000);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    EXPECT_FALSE(chunk.contains("usage")) << "usage without include_usage";
    ASSERT_EQ(chunk["choices"].size(), 1u);
    const bool last = i + 1 == chunks.size();
    EXPECT_EQ(chunk["choices"][0]["finish_reason"].is_null(), !last) << chunk.dump();
    if (i > 0) {
      EXPECT_FALSE(chunk["choices"][0]["delta"].contains("role")) << chunk.dump();
    }
  }
  EXPECT_EQ(chunks.back()["choices"][0]["finish_reason"], "tool_calls");
}

TEST(OpenAiStream, IncludeUsageAddsAFinalUsageChunk) {
  const auto updates = Finalize(ThinkAnswerAndCall(0));
  ExpectStreamMatchesBody(updates, 1, true);
  const std::vector<Json> chunks = ParseSse(Feed(updates, 1, true, true).events);
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    ASSERT_TRUE(chunks[i].contains("usage"));
    EXPECT_TRUE(chunks[i]["usage"].is_null()) << chunks[i].dump();
    EXPECT_EQ(chunks[i]["choices"].size(), 1u);
  }
  const Json& last = chunks.back();
  EXPECT_TRUE(last["choices"].is_array() && last["choices"].empty()) << last.dump();
  EXPECT_EQ(last["usage"]["prompt_tokens"], 11);
  EXPECT_EQ(last["usage"]["completion_tokens"], 12);
  EXPECT_EQ(last["usage"]["total_tokens"], 23);
  EXPECT_EQ(last["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(Json::parse(Feed(updates, 1, false, true).body)["usage"], last["usage"]);
}

TEST(OpenAiStream, TwoChoicesInterleaved) {
  std::vector<ChoiceUpdate> a = ThinkAnswerAndCall(0), b(3), mixed;
  b[0].events = {Content("Hel")};
  b[1].events = {Content("lo")};
  b[2].events = {Content("!")};
  b[2].finish_reason = "stop";
  for (ChoiceUpdate& x : b) x.index = 1;
  mixed = {b[0], a[0], a[1], b[1], a[2], b[2], a[3]};
  mixed = Finalize(mixed);
  ExpectStreamMatchesBody(mixed, 2, true);
  const Output run = Feed(mixed, 2, true, true);
  EXPECT_EQ(run.done, (std::vector<bool>{false, false, false, false, false, false, true}));
  const std::vector<Json> chunks = ParseSse(run.events);
  std::map<int, std::vector<bool>> finishes;  // per choice: finish_reason set, chunk by chunk
  std::map<int, bool> first_seen;
  for (const Json& chunk : chunks) {
    for (const Json& c : chunk["choices"]) {
      const int index = c["index"];
      if (!first_seen[index]) {
        EXPECT_EQ(c["delta"]["role"], "assistant") << index;
      }
      first_seen[index] = true;
      finishes[index].push_back(!c["finish_reason"].is_null());
    }
  }
  for (auto& [index, flags] : finishes) {
    EXPECT_TRUE(flags.back()) << index;
    EXPECT_EQ(std::count(flags.begin(), flags.end(), true), 1) << index;
  }
  const Json body = Json::parse(run.body);
  EXPECT_EQ(body["choices"][1]["message"]["content"], "Hello!");
  EXPECT_EQ(body["choices"][1]["finish_reason"], "stop");
  EXPECT_EQ(body["usage"]["completion_tokens"], 12 + 9);
}

// A call cut by the length limit is streamed (it cannot be unsent) but left out of the body.
TEST(OpenAiBody, IncompleteToolCallIsDropped) {
  std::vector<ChoiceUpdate> u(2);
  u[0].events = {Content("Calling"), Begin(0, "get_weather"), Args(0, "{\"city\": \"Os")};
  u[1].events = {End(0, false)};
  u[1].finish_reason = "length";
  u = Finalize(u);
  ASSERT_EQ(u[1].parsed->tool_calls.size(), 1u);
  const Json body = Json::parse(Feed(u, 1, false, false).body);
  const Json& message = body["choices"][0]["message"];
  EXPECT_FALSE(message.contains("tool_calls")) << message.dump();
  EXPECT_EQ(message["content"], "Calling");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
}

TEST(OpenAiBody, PlainChatAndEmptyContent) {
  std::vector<ChoiceUpdate> u(1);
  u[0].finish_reason = "stop";
  u = Finalize(u);
  ExpectStreamMatchesBody(u, 1, false);
  const Json body = Json::parse(Feed(u, 1, false, false).body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"], Json::parse(R"({"role": "assistant", "content": ""})"));
  EXPECT_TRUE(body["choices"][0]["logprobs"].is_null());
}

TEST(CompletionStream, TextWithEchoMatchesTheBody) {
  std::vector<ChoiceUpdate> u(3);
  u[0].text = "one";
  u[0].logprobs = {Token("one", -0.1f)};
  u[1].text = " two";
  u[2].finish_reason = "length";
  u = Finalize(u);
  const ResponseMeta meta = {.id = "cmpl-1", .created = 5, .model = "k3"};
  OpenAiResponseBuilder stream(OpenAiResponseBuilder::Kind::kCompletion, meta, 1, true, false,
                               "Say: ");
  OpenAiResponseBuilder whole(OpenAiResponseBuilder::Kind::kCompletion, meta, 1, false, false,
                              "Say: ");
  std::vector<std::string> events;
  for (const ChoiceUpdate& x : u) {
    stream.Add(x, &events);
    whole.Add(x, nullptr);
  }
  std::string text;
  std::string finish;
  for (const Json& chunk : ParseSse(events)) {
    EXPECT_EQ(chunk["object"], "text_completion");
    text += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null())
      finish = chunk["choices"][0]["finish_reason"];
  }
  const Json body = Json::parse(whole.Body());
  EXPECT_EQ(text, "Say: one two");
  EXPECT_EQ(body["choices"][0]["text"], text);
  EXPECT_EQ(body["choices"][0]["finish_reason"], finish);
  EXPECT_EQ(body["choices"][0]["logprobs"]["text_offset"], Json::parse("[5]"));
}

}  // namespace
}  // namespace k3::api
