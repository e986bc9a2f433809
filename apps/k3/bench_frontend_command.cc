// k3 bench frontend: what the text-space frontend costs next to the engine.
// - Per request: JSON parse + validation + chat render + tokenization of a ~100K-token K3
//   conversation with tools (ShareGPT turns, tool calls and results), with the real Kimi K3
//   tokenizer, as a share of the time to first token of the same prompt length on the engine.
// - Per streamed token: detokenize + stop strings + reasoning/tool-call parsing + SSE chunk
//   serialization, against the engine's decode step time.
// The engine side runs the synthetic K3-shaped benchmark model; its 100K-token TTFT is
// extrapolated linearly from a shorter prompt (a lower bound, so the share printed is an upper
// bound).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "api/openai_request.h"
#include "api/openai_response.h"
#include "apps/k3/bench_report.h"
#include "apps/k3/commands.h"
#include "base/log.h"
#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "model/testing/bench_checkpoint.h"
#include "serve/chat_format.h"
#include "serve/stop_strings.h"
#include "text/output/output_parser.h"
#include "text/tokenizer/stream_detokenizer.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

struct BenchFrontendFlags {
  std::string shared = K3_DEFAULT_SHARED_DIR;
  std::string cache_dir = "build/bench-models";
  int target_tokens = 100000;
  int engine_prompt = 2048;
  int repeats = 5;
  size_t threads = 0;
};

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

Json Tools() {
  return Json::parse(R"([
    {"type":"function","function":{"name":"get_weather","description":"Weather of a city.",
     "parameters":{"type":"object","properties":{"city":{"type":"string"},
     "days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}}},
    {"type":"function","function":{"name":"search","description":"Web search.",
     "parameters":{"type":"object","properties":{"queries":{"type":"array",
     "items":{"type":"string"}}},"required":["queries"]}}}])");
}

// ShareGPT turns (and a tool call + result every 8 turns) until ~4 chars per token * target.
std::string Conversation(const std::string& shared, int target_tokens) {
  std::ifstream in(shared + "/data/sharegpt/sharegpt_v3_filtered_500.json");
  std::stringstream text;
  text << in.rdbuf();
  Json data = Json::parse(text.str(), nullptr, false);
  Json messages = Json::array();
  size_t chars = 0;
  int turn = 0, calls = 0;
  for (const Json& conversation : data.is_array() ? data : Json::array()) {
    for (const Json& m : conversation.value("conversations", Json::array())) {
      const bool user = m.value("from", "") == "human";
      messages.push_back(
          {{"role", user ? "user" : "assistant"}, {"content", m.value("value", "")}});
      chars += m.value("value", "").size();
      if (++turn % 8 == 0 && !user) {
        const std::string id = "functions.get_weather:" + std::to_string(calls++);
        messages.push_back(
            {{"role", "assistant"},
             {"content", ""},
             {"tool_calls",
              {{{"id", id},
                {"type", "function"},
                {"function",
                 {{"name", "get_weather"}, {"arguments", R"({"city":"Paris","days":3})"}}}}}}});
        messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", "Sunny, 21 C"}});
      }
      if (chars >= static_cast<size_t>(target_tokens) * 9 / 2) break;
    }
    if (chars >= static_cast<size_t>(target_tokens) * 9 / 2) break;
  }
  messages.push_back({{"role", "user"}, {"content", "Summarize our conversation."}});
  return Json{{"model", "k3"}, {"messages", messages}, {"tools", Tools()}, {"stream", true}}.dump();
}

struct RequestCost {
  double parse = 0, render = 0, tokenize = 0;
  size_t tokens = 0;
};

RequestCost MeasureRequest(const std::string& body, const text::Tokenizer& tokenizer) {
  const serve::ChatFormat format = serve::ChatFormat::K3();
  RequestCost cost;
  auto t = Clock::now();
  Json json = Json::parse(body);
  api::OpenAiRequest request;
  api::ApiError error;
  K3_CHECK(api::ParseChatRequest(json, {}, &request, &error)) << error.message;
  cost.parse = Since(t);
  t = Clock::now();
  auto rendered = format.Render(*request.generate.chat);
  K3_CHECK(rendered.ok()) << rendered.status().ToString();
  cost.render = Since(t);
  t = Clock::now();
  std::vector<text::Segment> segments;
  for (const auto& s : rendered->segments) segments.push_back({s.text, s.allow_special});
  auto ids = tokenizer.EncodeSegments(segments);
  K3_CHECK(ids.ok());
  cost.tokenize = Since(t);
  cost.tokens = ids->size();
  return cost;
}

// Streams a realistic K3 answer (reasoning, content, a tool call) token by token through the
// per-token path; returns seconds per token.
double MeasurePerToken(const text::Tokenizer& tokenizer, int repeats, size_t* tokens_out) {
  std::string answer = "Let me think about the weather request. ";
  for (int i = 0; i < 20; ++i) answer += "The user asks about Paris, so I should call the tool. ";
  answer += "<|close|>think<|sep|><|open|>response<|sep|>";
  for (int i = 0; i < 20; ++i) answer += "Here is what I found about the weather in Paris. ";
  answer +=
      "<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" "
      "index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris"
      "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
  auto ids = tokenizer.Encode(answer, text::SpecialMode::kAll);
  K3_CHECK(ids.ok());
  *tokens_out = ids->size();
  double best = 1e9;
  for (int r = 0; r < repeats; ++r) {
    text::StreamDetokenizer detokenizer(tokenizer);
    serve::StopStringMatcher stops({"</answer>"});
    text::output::ParserOptions options;
    options.format = text::output::OutputFormat::kK3;
    options.starts_in_reasoning = true;
    options.tool_names = {"get_weather", "search"};
    text::output::OutputParser parser(options);
    api::OpenAiResponseBuilder builder(api::OpenAiResponseBuilder::Kind::kChat,
                                       {"chatcmpl-bench", 0, "k3"}, 1, true, true);
    size_t bytes = 0;
    const auto t = Clock::now();
    for (size_t i = 0; i < ids->size(); ++i) {
      std::string raw, visible;
      K3_CHECK(detokenizer.Push((*ids)[i], &raw).ok());
      stops.Feed(raw, &visible);
      serve::ChoiceUpdate update;
      parser.Feed(visible, &update.events);
      if (i + 1 == ids->size()) {
        parser.Finish(false, &update.events);
        update.finish_reason = "tool_calls";
        update.parsed = parser.result();
      }
      update.usage.completion_tokens = static_cast<int64_t>(i + 1);
      std::vector<std::string> events;
      builder.Add(update, &events);
      for (const auto& e : events) bytes += e.size();
    }
    best = std::min(best, Since(t) / static_cast<double>(ids->size()));
    K3_CHECK(bytes > 0);
  }
  return best;
}

struct EngineTimes {
  double ttft = 0, step = 0;
};

EngineTimes MeasureEngine(const BenchFrontendFlags& f) {
  base::ThreadPool pool(f.threads);
  auto loaded = model::testing::LoadOrMakeBenchModel(f.cache_dir + "/k3-mxfp4",
                                                     model::testing::BenchFamily::kK3, &pool);
  K3_CHECK(loaded.ok()) << loaded.status().ToString();
  std::shared_ptr<const model::Model> model = std::move(loaded).value();
  engine::EngineConfig config;
  config.cache_memory_bytes = int64_t{1} << 30;
  auto engine = engine::Engine::Create(std::make_unique<engine::K3ModelRunner>(model), config);
  K3_CHECK(engine.ok()) << engine.status().ToString();
  (*engine)->Start();
  engine::EngineRequest request;
  for (int i = 0; i < f.engine_prompt; ++i) request.prompt.push_back(3 + (i * 7919) % 30000);
  request.params.temperature = 0;
  request.params.max_tokens = 17;
  request.params.ignore_eos = true;
  std::mutex mu;
  std::vector<double> times;
  bool done = false;
  const auto start = Clock::now();
  request.on_output = [&](const engine::RequestOutput& o) {
    std::lock_guard lock(mu);
    for (size_t i = 0; i < o.tokens.size(); ++i) times.push_back(Since(start));
    if (o.finished()) done = true;
  };
  K3_CHECK((*engine)->Submit(std::move(request)).ok());
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard lock(mu);
    if (done) break;
  }
  (*engine)->Stop();
  EngineTimes t;
  t.ttft = times.front();
  t.step = (times.back() - times.front()) / static_cast<double>(times.size() - 1);
  return t;
}

int RunBenchFrontend(const BenchFrontendFlags& f) {
  auto tokenizer = text::Tokenizer::FromKimiDirectory(f.shared + "/kimi/k3");
  if (!tokenizer.ok()) {
    K3_LOG(kError) << tokenizer.status().ToString();
    return 1;
  }
  const std::string body = Conversation(f.shared, f.target_tokens);
  K3_LOG(kInfo) << "request: " << body.size() / 1024 << " KiB of JSON";
  RequestCost best;
  double best_total = 1e9;
  for (int r = 0; r < f.repeats; ++r) {
    RequestCost c = MeasureRequest(body, **tokenizer);
    if (c.parse + c.render + c.tokenize < best_total) {
      best_total = c.parse + c.render + c.tokenize;
      best = c;
    }
  }
  size_t out_tokens = 0;
  const double per_token = MeasurePerToken(**tokenizer, f.repeats, &out_tokens);
  K3_LOG(kInfo) << "engine: " << f.engine_prompt << "-token prompt on the benchmark model";
  const EngineTimes engine = MeasureEngine(f);
  const double ttft_100k =
      engine.ttft * static_cast<double>(best.tokens) / static_cast<double>(f.engine_prompt);

  std::printf("\nper request: a %zu-token K3 conversation with tools (best of %d)\n", best.tokens,
              f.repeats);
  Table request({"step", "ms", "share of TTFT"});
  auto row = [&](const char* name, double s) {
    request.Row({name, Fixed(s * 1e3, 2), Fixed(100.0 * s / ttft_100k, 3) + " %"});
  };
  row("JSON parse + validation", best.parse);
  row("chat render (XTML)", best.render);
  row("tokenize (segment-wise)", best.tokenize);
  row("frontend total", best_total);
  request.Row({"engine TTFT (extrapolated)", Fixed(ttft_100k * 1e3, 0), "100 %"});
  request.Print();
  std::printf("\nper streamed token (%zu-token answer with reasoning and a tool call)\n",
              out_tokens);
  Table token({"step", "us per token", "share of decode step"});
  token.Row({"detokenize + stop + parse + SSE chunk", Fixed(per_token * 1e6, 2),
             Fixed(100.0 * per_token / engine.step, 3) + " %"});
  token.Row({"engine decode step (batch 1)", Fixed(engine.step * 1e6, 0), "100 %"});
  token.Print();
  std::printf("\ntargets: frontend < 5%% of TTFT (%s), < 20 us per streamed token (%s)\n",
              best_total < 0.05 * ttft_100k ? "met" : "NOT met",
              per_token < 20e-6 ? "met" : "NOT met");
  return 0;
}

}  // namespace

CommandFn AddBenchFrontendCommand(CLI::App& bench) {
  auto f = std::make_shared<BenchFrontendFlags>();
  bench.add_option("--shared", f->shared, "Shared reference data (Kimi K3 tokenizer, ShareGPT)")
      ->capture_default_str();
  bench.add_option("--cache-dir", f->cache_dir, "Where the benchmark model is kept")
      ->capture_default_str();
  bench.add_option("--tokens", f->target_tokens, "Conversation length")->capture_default_str();
  bench.add_option("--engine-prompt", f->engine_prompt, "Prompt length timed on the engine")
      ->capture_default_str();
  bench.add_option("--repeats", f->repeats, "Best of this many runs")->capture_default_str();
  bench.add_option("--threads", f->threads, "Model threads (0 = all cores)");
  return [f] { return RunBenchFrontend(*f); };
}

}  // namespace k3::app
