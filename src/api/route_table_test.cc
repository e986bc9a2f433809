// The route table: every route reaches its handler; what dispatch answers itself (unknown paths
// and methods, a missing key, generations while draining, a handler that throws) comes in the
// route's or the path's error dialect; the probes.
#include "api/route_table.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <stdexcept>

#include "api/testing_responder.h"

namespace k3::api {
namespace {

using testing::Answer;
using testing::Capture;

HttpRequest Request(std::string method, std::string path) {
  return {std::move(method), std::move(path), {}, ""};
}

// The error shape of a body: the OpenAI {"error": {...}} or the Anthropic {"type": "error"}.
Dialect ShapeOf(const Answer& answer) {
  const Json body = Json::parse(answer.body);
  if (body.contains("type") && body["type"] == "error") return Dialect::kAnthropic;
  EXPECT_TRUE(body.contains("error") && body["error"].contains("code")) << answer.body;
  return Dialect::kOpenAi;
}

std::string Message(const Answer& answer) {
  const Json body = Json::parse(answer.body);
  return body["error"]["message"].get<std::string>();
}

// A table whose every endpoint records which route it was called with.
struct Recording {
  explicit Recording(DispatchOptions options = {}) : table(std::move(options)) {
    for (const Route& route : Routes()) {
      table.Bind(route.endpoint, [this](const HttpRequest&, const Route& r,
                                        const std::shared_ptr<Responder>& responder) {
        called.push_back(r.endpoint);
        responder->Send(200, "ok");
      });
    }
  }
  RouteTable table;
  std::vector<Endpoint> called;
};

TEST(Routes, OnePerEndpointInOrderAndEachFindsItself) {
  ASSERT_EQ(Routes().size(), kEndpointCount);
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (size_t i = 0; i < Routes().size(); ++i) {
    const Route& route = Routes()[i];
    EXPECT_EQ(static_cast<size_t>(route.endpoint), i);
    EXPECT_EQ(&RouteOf(route.endpoint), &route);
    EXPECT_TRUE(seen.insert({route.method, route.path}).second) << route.path;
    EXPECT_EQ(FindRoute(route.method, route.path), &route) << route.path;
    // The error dialect is Anthropic exactly for the Anthropic Messages API.
    EXPECT_EQ(route.dialect == Dialect::kAnthropic, route.path.starts_with("/v1/messages"));
  }
  EXPECT_EQ(FindRoute("GET", "/v1/models/k3-demo"), &RouteOf(Endpoint::kModels));
  EXPECT_EQ(FindRoute("GET", "/v1/modelsx"), nullptr);
  EXPECT_EQ(FindRoute("POST", "/v1/chat/completions/x"), nullptr);
  EXPECT_EQ(FindRoute("GET", "/v1/chat/completions"), nullptr);
  EXPECT_EQ(FindRoute("POST", "/router/workers"), &RouteOf(Endpoint::kRegisterWorker));
  EXPECT_EQ(FindRoute("GET", "/router/workers"), &RouteOf(Endpoint::kListWorkers));
}

TEST(Routes, GenerationsAreTheFourGeneratingEndpoints) {
  std::set<Endpoint> generating;
  for (const Route& route : Routes()) {
    if (route.generates) generating.insert(route.endpoint);
  }
  EXPECT_EQ(generating, (std::set<Endpoint>{Endpoint::kChatCompletions, Endpoint::kCompletions,
                                            Endpoint::kResponses, Endpoint::kMessages}));
}

TEST(RouteTable, EveryRouteReachesItsHandler) {
  Recording recording;
  for (const Route& route : Routes()) {
    const Answer answer =
        Capture(recording.table, Request(std::string(route.method), std::string(route.path)));
    EXPECT_EQ(answer.status, 200) << route.path;
    ASSERT_FALSE(recording.called.empty());
    EXPECT_EQ(recording.called.back(), route.endpoint) << route.path;
  }
  EXPECT_EQ(recording.called.size(), Routes().size());
}

TEST(RouteTable, UnknownPathsAndMethodsAre404InThePathsDialect) {
  Recording recording;
  const std::pair<HttpRequest, Dialect> cases[] = {
      {Request("GET", "/v1/nope"), Dialect::kOpenAi},
      {Request("POST", "/v1/nope"), Dialect::kOpenAi},
      {Request("GET", "/v1/chat/completions"), Dialect::kOpenAi},
      {Request("DELETE", "/v1/models"), Dialect::kOpenAi},
      {Request("POST", "/health"), Dialect::kOpenAi},
      {Request("GET", "/v1/messages"), Dialect::kAnthropic},
      {Request("POST", "/v1/messages/batches"), Dialect::kAnthropic},
  };
  for (const auto& [request, dialect] : cases) {
    const Answer answer = Capture(recording.table, request);
    EXPECT_EQ(answer.status, 404) << request.path;
    EXPECT_EQ(ShapeOf(answer), dialect) << request.path;
    EXPECT_NE(answer.body.find(request.method + " " + request.path + " is not an endpoint"),
              std::string::npos)
        << answer.body;
  }
  EXPECT_TRUE(recording.called.empty());

  RouteTable unbound;  // nothing bound: every route is unknown
  const Answer answer = Capture(unbound, Request("POST", "/v1/messages"));
  EXPECT_EQ(answer.status, 404);
  EXPECT_EQ(ShapeOf(answer), Dialect::kAnthropic);
}

TEST(RouteTable, OpenRoutesNeedNoKeyAndTheRestAre401InTheirDialect) {
  std::vector<std::pair<std::string, int>> recorded;
  Recording recording({.authorized = [](const HttpRequest&) { return false; },
                       .record = [&](const std::string& endpoint,
                                     int status) { recorded.emplace_back(endpoint, status); }});
  for (const Route& route : Routes()) {
    const Answer answer =
        Capture(recording.table, Request(std::string(route.method), std::string(route.path)));
    if (route.open) {
      EXPECT_EQ(answer.status, 200) << route.path;
      continue;
    }
    EXPECT_EQ(answer.status, 401) << route.path;
    EXPECT_EQ(ShapeOf(answer), route.dialect) << route.path;
  }
  // A path nobody serves: the key is checked first (no hint what exists), in the path's dialect.
  const Answer unknown = Capture(recording.table, Request("POST", "/v1/messages/nope"));
  EXPECT_EQ(unknown.status, 401);
  EXPECT_EQ(ShapeOf(unknown), Dialect::kAnthropic);
  ASSERT_FALSE(recorded.empty());
  // Counted as "other": unknown paths never become metric labels.
  EXPECT_EQ(recorded.back(), (std::pair<std::string, int>{"other", 401}));
}

TEST(RouteTable, DrainingRefusesGenerationsOnlyWith503InTheirDialect) {
  Recording recording({.draining_message = "going away"});
  recording.table.SetDraining();
  for (const Route& route : Routes()) {
    const Answer answer =
        Capture(recording.table, Request(std::string(route.method), std::string(route.path)));
    if (!route.generates) {
      EXPECT_EQ(answer.status, 200) << route.path;
      continue;
    }
    EXPECT_EQ(answer.status, 503) << route.path;
    EXPECT_EQ(ShapeOf(answer), route.dialect) << route.path;
    EXPECT_NE(answer.body.find("going away"), std::string::npos);
  }
}

TEST(RouteTable, AHandlerThatThrowsIsA500) {
  RouteTable table;
  table.Bind(Endpoint::kTokenize,
             [](const HttpRequest&, const Route&, const std::shared_ptr<Responder>&) {
               throw std::runtime_error("boom");
             });
  const Answer answer = Capture(table, Request("POST", "/tokenize"));
  EXPECT_EQ(answer.status, 500);
  EXPECT_EQ(Message(answer), "internal error: boom");
}

TEST(Probes, HealthReadyAndMetrics) {
  RouteTable table;
  std::optional<std::string> why;
  BindProbes(&table, {.not_ready = [&] { return why; }, .metrics = [] { return "m 1\n"; }});
  Answer answer = Capture(table, Request("GET", "/health"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "");
  EXPECT_EQ(answer.content_type, "text/plain");
  answer = Capture(table, Request("GET", "/ready"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "ready\n");
  why = "draining";
  answer = Capture(table, Request("GET", "/ready"));
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(answer.body, "draining\n");
  answer = Capture(table, Request("GET", "/metrics"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "m 1\n");
  EXPECT_EQ(answer.content_type, "text/plain; version=0.0.4");
  answer = Capture(table, Request("GET", "/version"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_TRUE(std::regex_match(answer.body, std::regex(R"(\{"version":"\d+\.\d+\.\d+"\})")))
      << answer.body;
}

}  // namespace
}  // namespace k3::api
