// Gateway pieces against real parts: URL and KV-info parsing, health backoff, routing keys equal
// to the server's own prompt ids, and forwarding over loopback HTTP to live http::Servers (a
// dead worker is skipped, streams and whole responses are relayed unchanged).
#include "gateway/gateway.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <thread>

#include "api/testing_responder.h"
#include "gateway/forwarder.h"
#include "gateway/routing_key.h"
#include "gateway/workers.h"
#include "http/server.h"
#include "serve/prompt_ids.h"
#include "testing/kimi_tokenizer.h"

namespace k3::gateway {
namespace {

TEST(ParseHttpUrl, AcceptsHostPortOnly) {
  auto ok = ParseHttpUrl("http://127.0.0.1:8001/");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->host, "127.0.0.1");
  EXPECT_EQ(ok->port, 8001);
  for (const char* bad : {"https://a:1", "http://a", "http://a:0", "http://a:70000",
                          "http://a:1/v1", "http://:80", "a:1", "http://a:x"}) {
    EXPECT_FALSE(ParseHttpUrl(bad).ok()) << bad;
  }
}

TEST(ParseWorkerKvInfo, NamesTheBadField) {
  auto ok = ParseWorkerKvInfo(
      R"({"publish":"tcp://h:1","resync":"tcp://h:2","block_size":16,"checkpoints_required":true})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->block_size, 16);
  EXPECT_TRUE(ok->checkpoints_required);
  auto bad = ParseWorkerKvInfo(R"({"publish":"tcp://h:1","resync":"tcp://h:2","block_size":0})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("block_size"), std::string::npos);
  EXPECT_FALSE(ParseWorkerKvInfo("[1]").ok());
  EXPECT_FALSE(ParseWorkerKvInfo("{").ok());
}

TEST(WorkerTable, BackoffDoublesUpToItsCapAndResetsWhenUp) {
  BackoffPolicy backoff{std::chrono::milliseconds(1000), std::chrono::milliseconds(500),
                        std::chrono::milliseconds(3000)};
  WorkerTable table(2, backoff);
  bool added = false;
  ASSERT_EQ(*table.Add("http://a:1", {"a", 1}, std::nullopt, &added), 0);
  EXPECT_TRUE(added);
  EXPECT_EQ(*table.Add("http://a:1", {"a", 1}, std::nullopt, &added), 0);
  EXPECT_FALSE(added);
  ASSERT_EQ(*table.Add("http://b:1", {"b", 1}, std::nullopt, &added), 1);
  EXPECT_FALSE(table.Add("http://c:1", {"c", 1}, std::nullopt, &added).ok());  // full

  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(table.MarkDown(0, t0));
  EXPECT_FALSE(table.MarkDown(0, t0));  // already down
  EXPECT_FALSE(table.MarkDown(0, t0));
  EXPECT_FALSE(table.MarkDown(0, t0));  // waits 500, 1000, 2000, then capped at 3000 ms
  EXPECT_EQ(table.Get(0)->next_check - t0, std::chrono::milliseconds(3000));
  auto due_ids = [&](std::chrono::milliseconds at) {
    std::vector<int> ids;
    for (const Worker& w : table.DueForCheck(t0 + at)) ids.push_back(w.id);
    return ids;
  };
  EXPECT_EQ(due_ids(std::chrono::milliseconds(2999)), std::vector<int>{1});  // 1: healthy, 1 s
  EXPECT_EQ(due_ids(std::chrono::milliseconds(3000)), (std::vector<int>{0, 1}));
  EXPECT_TRUE(table.MarkUp(0, t0));
  EXPECT_EQ(table.Get(0)->failures, 0);
  EXPECT_EQ(table.Get(0)->next_check - t0, std::chrono::milliseconds(1000));

  table.AddLoad(1, 100, 1);
  table.AddLoad(1, -100, 0);
  table.AddLoad(1, -5, -1);  // never negative
  EXPECT_EQ(table.Load(1).prefill_tokens, 0);
  EXPECT_EQ(table.Load(1).decode_seqs, 0);
}

TEST(RoutingKey, HashesTheIdsTheServerComputes) {
  const text::Tokenizer& tokenizer = testing::KimiTokenizer("k3");
  const serve::ChatFormat format = serve::ChatFormat::K3();
  KeyContext context;
  context.tokenizer = &tokenizer;
  context.format = &format;
  api::HttpRequest request{"POST", "/v1/chat/completions", {{"x-session-id", "s1"}}, ""};
  request.body = R"({"model":"m","messages":[{"role":"system","content":")" +
                 std::string(400, 'a') + R"( and more"},{"role":"user","content":"hello"}]})";
  const RoutingKey key = KeyFor(request, context);
  ASSERT_TRUE(key.parsed) << key.error;
  EXPECT_EQ(key.session, "s1");

  api::OpenAiRequest parsed;  // as the server parses it
  api::ApiError error;
  ASSERT_TRUE(api::ParseChatRequest(serve::Json::parse(request.body), {}, &parsed, &error));
  auto ids = serve::PromptIds(tokenizer, format, parsed.generate);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(key.prompt_tokens, static_cast<int64_t>(ids->size()));
  EXPECT_EQ(key.chain, cache::HashBlocks(*ids, 16).chain);
  EXPECT_FALSE(key.chain.empty());

  request.body = R"({"messages": "not a list"})";
  EXPECT_FALSE(KeyFor(request, context).parsed);
  request.body = "{";
  EXPECT_FALSE(KeyFor(request, context).parsed);
}

// A Responses body routes by the same prompt as its Chat Completions equivalent.
TEST(RoutingKey, ResponsesRoutesLikeTheEquivalentChat) {
  const text::Tokenizer& tokenizer = testing::KimiTokenizer("k3");
  const serve::ChatFormat format = serve::ChatFormat::K3();
  KeyContext context;
  context.tokenizer = &tokenizer;
  context.format = &format;
  const std::string system = std::string(400, 'a');
  api::HttpRequest chat{"POST", "/v1/chat/completions", {}, ""};
  chat.body = R"({"messages":[{"role":"system","content":")" + system +
              R"("},{"role":"user","content":"hello"}]})";
  api::HttpRequest responses{"POST", "/v1/responses", {}, ""};
  responses.body = R"({"instructions":")" + system + R"(","input":"hello"})";
  const RoutingKey from_chat = KeyFor(chat, context);
  const RoutingKey from_responses = KeyFor(responses, context);
  ASSERT_TRUE(from_responses.parsed) << from_responses.error;
  EXPECT_EQ(from_responses.chain, from_chat.chain);
  EXPECT_FALSE(from_responses.chain.empty());
  responses.body = R"({"input": 3})";
  EXPECT_FALSE(KeyFor(responses, context).parsed);
}

// `k3 route`'s side of the route table, with no worker registered (nothing is forwarded): the
// probes and the registry are its own, generations and unknown paths are answered in their
// dialect, and draining refuses generations.
TEST(GatewayRoutes, ProbesRegistryAndErrorsInTheirDialect) {
  const text::Tokenizer& tokenizer = testing::KimiTokenizer("k3");
  const serve::ChatFormat format = serve::ChatFormat::K3();
  GatewayConfig config;
  config.key.tokenizer = &tokenizer;
  config.key.format = &format;
  Gateway gateway(config);  // not started
  auto call = [&](const std::string& method, const std::string& path) {
    return api::testing::Capture(gateway, {method, path, {}, "{}"});
  };
  auto is_anthropic = [](const api::testing::Answer& a) {
    return nlohmann::json::parse(a.body).value("type", "") == "error";
  };
  EXPECT_EQ(call("GET", "/health").status, 200);
  EXPECT_EQ(call("GET", "/version").body,
            api::testing::Capture(gateway, {"GET", "/version", {}, ""}).body);
  EXPECT_TRUE(nlohmann::json::parse(call("GET", "/version").body)["version"].is_string());
  api::testing::Answer answer = call("GET", "/ready");
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(answer.body, "no healthy worker\n");
  answer = call("GET", "/metrics");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.content_type, "text/plain; version=0.0.4");
  answer = call("GET", "/router/workers");
  EXPECT_EQ(answer.status, 200);
  EXPECT_TRUE(nlohmann::json::parse(answer.body)["workers"].empty());
  answer = call("POST", "/v1/chat/completions");
  EXPECT_EQ(answer.status, 503);
  EXPECT_FALSE(is_anthropic(answer));
  EXPECT_NE(answer.body.find("no worker is registered"), std::string::npos);
  answer = call("POST", "/v1/messages");
  EXPECT_EQ(answer.status, 503);
  EXPECT_TRUE(is_anthropic(answer));
  answer = call("GET", "/v1/nope");
  EXPECT_EQ(answer.status, 404);
  EXPECT_FALSE(is_anthropic(answer));
  answer = call("POST", "/v1/messages/nope");
  EXPECT_EQ(answer.status, 404);
  EXPECT_TRUE(is_anthropic(answer));
  gateway.SetDraining();
  answer = call("POST", "/v1/messages");
  EXPECT_EQ(answer.status, 503);
  EXPECT_TRUE(is_anthropic(answer));
  EXPECT_NE(answer.body.find("the router is shutting down"), std::string::npos);
}

// A worker stand-in: answers every request with a 3-event stream or a JSON body.
class FakeWorker : public api::RequestHandler {
 public:
  void Handle(const api::HttpRequest& request, std::shared_ptr<api::Responder> r) override {
    ++requests;
    if (request.body.find("\"stream\":true") == std::string::npos) {
      return r->Send(200, R"({"echo":)" + std::to_string(request.body.size()) + "}");
    }
    r->StartEventStream();
    for (int i = 0; i < 3; ++i) r->SendEvent("data: {\"i\":" + std::to_string(i) + "}\n\n");
    r->SendEvent("data: [DONE]\n\n");
    r->EndEventStream();
  }
  void SetDraining() override {}
  int64_t active_requests() const override { return 0; }
  std::atomic<int> requests{0};
};

class Collector : public api::Responder {
 public:
  void Send(int status, std::string body, std::string) override {
    std::lock_guard lock(mu);
    this->status = status;
    this->body = std::move(body);
    done = true;
    cv.notify_all();
  }
  void StartEventStream() override { status = 200; }
  void SendEvent(std::string framed) override {
    std::lock_guard lock(mu);
    events.push_back(std::move(framed));
  }
  void EndEventStream() override {
    std::lock_guard lock(mu);
    done = true;
    cv.notify_all();
  }
  void OnClientGone(std::function<void()>) override {}
  void Wait() {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; }));
  }
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int status = 0;
  std::string body;
  std::vector<std::string> events;
};

// A port nothing listens on: bind an ephemeral port, then close it.
uint16_t ClosedPort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

TEST(Forward, SkipsADeadWorkerAndRelaysStreamsAndBodies) {
  FakeWorker worker;
  http::ServerConfig config;
  config.port = 0;
  http::Server server(config, &worker);
  ASSERT_TRUE(server.Listen().ok());
  std::thread serving([&] { server.Run(); });
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });

  const HostPort dead{"127.0.0.1", ClosedPort()}, live{"127.0.0.1", server.port()};
  for (const bool stream : {true, false}) {
    std::vector<int> unreachable;
    int finished_on = -2, load = 0;
    ForwardHooks hooks;
    hooks.pick = [&](const std::vector<int>& excluded) -> std::optional<Pick> {
      if (excluded.empty()) return Pick{0, dead, 10};
      if (excluded.size() == 1) return Pick{1, live, 10};
      return std::nullopt;
    };
    hooks.load = [&](int, int64_t, int decode) { load += decode; };
    hooks.unreachable = [&](int w, int) { unreachable.push_back(w); };
    hooks.finished = [&](int w, CallOutcome outcome, int attempts) {
      finished_on = w;
      EXPECT_EQ(outcome, CallOutcome::kDone);
      EXPECT_EQ(attempts, 2);
    };
    auto collector = std::make_shared<Collector>();
    api::HttpRequest request{"POST",
                             "/v1/chat/completions",
                             {{"content-type", "application/json"}},
                             stream ? R"({"stream":true})" : R"({"stream":false})"};
    Forward(io, request, collector, hooks, ForwardOptions{});
    collector->Wait();
    EXPECT_EQ(unreachable, std::vector<int>{0});
    EXPECT_EQ(collector->status, 200);
    if (stream) {
      EXPECT_EQ(collector->events,
                (std::vector<std::string>{"data: {\"i\":0}\n\n", "data: {\"i\":1}\n\n",
                                          "data: {\"i\":2}\n\n", "data: [DONE]\n\n"}));
    } else {
      EXPECT_EQ(collector->body, R"({"echo":16})");
    }
    // finished runs right after the response ends, on the IO thread.
    for (int i = 0; i < 3000 && finished_on == -2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(finished_on, 1);
    EXPECT_EQ(load, 0);  // every +1 decode was returned
  }
  EXPECT_EQ(worker.requests.load(), 2);

  // No worker left: a 503 in the OpenAI error shape.
  auto collector = std::make_shared<Collector>();
  ForwardHooks none;
  none.pick = [&](const std::vector<int>& excluded) -> std::optional<Pick> {
    if (excluded.empty()) return Pick{0, dead, 0};
    return std::nullopt;
  };
  none.load = [](int, int64_t, int) {};
  none.unreachable = [](int, int) {};
  none.finished = [](int, CallOutcome, int) {};
  Forward(io, {"POST", "/v1/completions", {}, "{}"}, collector, none, ForwardOptions{});
  collector->Wait();
  EXPECT_EQ(collector->status, 503);
  EXPECT_NE(collector->body.find("no healthy worker"), std::string::npos);

  guard.reset();
  io_thread.join();
  server.Shutdown();
  serving.join();
}

}  // namespace
}  // namespace k3::gateway
