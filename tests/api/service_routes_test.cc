// `k3 serve`'s service through its route table, on a frontend whose engine is the scheduler-test
// fake runner (nothing here generates): every route is answered, each in its own error dialect;
// the key, draining and the probes; what the table answers is counted in /metrics. Lives in
// tests/ because it spans api, serve and engine.
#include <gtest/gtest.h>

#include "api/service.h"
#include "api/testing_responder.h"
#include "engine/engine.h"
#include "engine/fake_model_runner.h"
#include "testing/paths.h"

namespace k3::api {
namespace {

using testing::Answer;
using testing::Capture;

// One frontend for the suite (loading the tokenizer is the slow part); a fresh service per test.
class ServiceRoutes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    engine::EngineConfig engine_config;
    engine_config.cache_memory_bytes = int64_t{16} << 20;
    auto engine = engine::Engine::Create(
        std::make_unique<engine::testing::FakeModelRunner>(163840, true), engine_config);
    K3_CHECK(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value().release();
    auto tokenizer = text::Tokenizer::FromKimiDirectory(::k3::testing::SharedDir() + "/kimi/k3");
    K3_CHECK(tokenizer.ok()) << tokenizer.status().ToString();
    frontend_ = new serve::Frontend(std::move(tokenizer).value(), serve::ChatFormat::K3(), engine_,
                                    serve::FrontendConfig{});
  }
  static void TearDownTestSuite() {
    delete frontend_;
    delete engine_;
  }
  void SetUp() override { Make({}); }
  void Make(ServiceConfig config) {
    service_ = std::make_unique<Service>(frontend_, std::move(config));
  }

  Answer Call(const std::string& method, const std::string& path, std::string body = "",
              std::map<std::string, std::string> headers = {}) {
    return Capture(*service_, {method, path, std::move(headers), std::move(body)});
  }

  static engine::Engine* engine_;
  static serve::Frontend* frontend_;
  std::unique_ptr<Service> service_;
};

engine::Engine* ServiceRoutes::engine_ = nullptr;
serve::Frontend* ServiceRoutes::frontend_ = nullptr;

// The OpenAI {"error": {...}} or the Anthropic {"type": "error", "error": {...}} shape.
Dialect ShapeOf(const Answer& answer) {
  const Json body = Json::parse(answer.body);
  if (body.value("type", "") == "error") return Dialect::kAnthropic;
  EXPECT_TRUE(body.contains("error") && body["error"].contains("code")) << answer.body;
  return Dialect::kOpenAi;
}

TEST_F(ServiceRoutes, EveryPostRouteAnswersABadBodyInItsDialect) {
  for (const Route& route : Routes()) {
    if (route.method != "POST" || route.scope != Scope::kModel) continue;
    const Answer answer = Call("POST", std::string(route.path), "{\"model\": ");
    EXPECT_EQ(answer.status, 400) << route.path;
    EXPECT_EQ(ShapeOf(answer), route.dialect) << route.path;
    EXPECT_NE(answer.body.find("the request body is not valid JSON"), std::string::npos);
  }
}

TEST_F(ServiceRoutes, EveryGetRouteAnswers) {
  EXPECT_EQ(Call("GET", "/health").status, 200);
  EXPECT_EQ(Call("GET", "/ready").body, "ready\n");
  const Answer version = Call("GET", "/version");
  EXPECT_EQ(version.status, 200);
  EXPECT_TRUE(Json::parse(version.body)["version"].is_string()) << version.body;
  const Answer metrics = Call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("# TYPE k3_requests_pending gauge"), std::string::npos);
  const Answer events = Call("GET", "/v1/kv_events");
  EXPECT_EQ(events.status, 404);
  EXPECT_EQ(ShapeOf(events), Dialect::kOpenAi);
  const Answer models = Call("GET", "/v1/models");
  EXPECT_EQ(models.status, 200);
  EXPECT_EQ(Json::parse(models.body)["data"][0]["id"], "k3-demo");
  const Answer one = Call("GET", "/v1/models/k3-demo");
  EXPECT_EQ(one.status, 200);
  EXPECT_EQ(Json::parse(one.body)["id"], "k3-demo");
  EXPECT_EQ(Call("GET", "/v1/models/other-model").status, 404);
}

TEST_F(ServiceRoutes, TokenizeDetokenizeAndCountTokens) {
  Answer answer = Call("POST", "/tokenize", R"({"prompt": "hello"})");
  ASSERT_EQ(answer.status, 200) << answer.body;
  const Json ids = Json::parse(answer.body)["tokens"];
  answer = Call("POST", "/detokenize", Json{{"tokens", ids}}.dump());
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(Json::parse(answer.body)["prompt"], "hello");
  answer = Call("POST", "/v1/messages/count_tokens",
                R"({"messages": [{"role": "user", "content": "hi"}]})");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_GT(Json::parse(answer.body)["input_tokens"].get<int>(), 0);
  // A bad conversation: a 400 in the Anthropic shape, naming the field.
  answer = Call("POST", "/v1/messages/count_tokens", R"({"messages": [{"role": "system"}]})");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(ShapeOf(answer), Dialect::kAnthropic);
}

TEST_F(ServiceRoutes, ValidationErrorsOfGenerationsComeInTheirDialect) {
  Answer answer = Call("POST", "/v1/chat/completions", R"({"messages": []})");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(ShapeOf(answer), Dialect::kOpenAi);
  answer = Call("POST", "/v1/completions", R"({"prompt": 5})");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(ShapeOf(answer), Dialect::kOpenAi);
  answer = Call("POST", "/v1/messages", R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(answer.status, 400);  // no max_tokens
  EXPECT_EQ(ShapeOf(answer), Dialect::kAnthropic);
}

TEST_F(ServiceRoutes, UnknownAndRouterOnlyPathsAre404InThePathsDialect) {
  for (const auto& [method, path, dialect] :
       {std::tuple{"GET", "/v1/nope", Dialect::kOpenAi},
        std::tuple{"POST", "/router/workers", Dialect::kOpenAi},
        std::tuple{"GET", "/router/workers", Dialect::kOpenAi},
        std::tuple{"GET", "/v1/chat/completions", Dialect::kOpenAi},
        std::tuple{"POST", "/v1/messages/nope", Dialect::kAnthropic}}) {
    const Answer answer = Call(method, path, "{}");
    EXPECT_EQ(answer.status, 404) << path;
    EXPECT_EQ(ShapeOf(answer), dialect) << path;
  }
  EXPECT_NE(
      Call("GET", "/metrics").body.find("k3_requests_total{endpoint=\"other\",status=\"404\"}"),
      std::string::npos);
}

TEST_F(ServiceRoutes, TheKeyGuardsAllButTheOpenRoutes) {
  ServiceConfig config;
  config.api_key = "k";
  Make(std::move(config));
  EXPECT_EQ(Call("GET", "/health").status, 200);
  EXPECT_EQ(Call("GET", "/metrics").status, 200);
  Answer answer = Call("GET", "/v1/models");
  EXPECT_EQ(answer.status, 401);
  EXPECT_EQ(ShapeOf(answer), Dialect::kOpenAi);
  answer = Call("POST", "/v1/messages", "{}");
  EXPECT_EQ(answer.status, 401);
  EXPECT_EQ(ShapeOf(answer), Dialect::kAnthropic);
  EXPECT_EQ(Call("GET", "/v1/models", "", {{"x-api-key", "k"}}).status, 200);
  EXPECT_EQ(Call("GET", "/v1/models", "", {{"authorization", "Bearer k"}}).status, 200);
}

TEST_F(ServiceRoutes, DrainingTurnsReadyAndGenerationsTo503) {
  service_->SetDraining();
  Answer answer = Call("GET", "/ready");
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(answer.body, "draining\n");
  const std::string chat = R"({"messages": [{"role": "user", "content": "hi"}]})";
  answer = Call("POST", "/v1/chat/completions", chat);
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(ShapeOf(answer), Dialect::kOpenAi);
  EXPECT_NE(answer.body.find("the server is shutting down"), std::string::npos);
  answer = Call("POST", "/v1/messages",
                R"({"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(ShapeOf(answer), Dialect::kAnthropic);
  EXPECT_EQ(Call("POST", "/tokenize", chat).status, 200);  // not a generation
}

}  // namespace
}  // namespace k3::api
