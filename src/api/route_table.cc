#include "api/route_table.h"

#include "base/check.h"
#include "base/log.h"

namespace k3::api {
namespace {

constexpr Dialect kOpenAi = Dialect::kOpenAi;
constexpr Dialect kAnthropic = Dialect::kAnthropic;
constexpr Scope kEvery = Scope::kEveryServer;
constexpr Scope kModel = Scope::kModel;
constexpr Scope kRouter = Scope::kRouter;

// The route list: one route per endpoint, in Endpoint order (checked in RouteOf).
// clang-format off
constexpr Route kRoutes[] = {
  // endpoint                   method  path                         scope   dialect     subpaths open   generates
  {Endpoint::kHealth,          "GET",  "/health",                   kEvery,  kOpenAi,    false,   true,  false},
  {Endpoint::kReady,           "GET",  "/ready",                    kEvery,  kOpenAi,    false,   true,  false},
  {Endpoint::kMetrics,         "GET",  "/metrics",                  kEvery,  kOpenAi,    false,   true,  false},
  {Endpoint::kVersion,         "GET",  "/version",                  kEvery,  kOpenAi,    false,   true,  false},
  {Endpoint::kKvEvents,        "GET",  "/v1/kv_events",             kModel,  kOpenAi,    false,   true,  false},
  {Endpoint::kModels,          "GET",  "/v1/models",                kModel,  kOpenAi,    true,    false, false},
  {Endpoint::kChatCompletions, "POST", "/v1/chat/completions",      kModel,  kOpenAi,    false,   false, true},
  {Endpoint::kCompletions,     "POST", "/v1/completions",           kModel,  kOpenAi,    false,   false, true},
  {Endpoint::kResponses,       "POST", "/v1/responses",             kModel,  kOpenAi,    false,   false, true},
  {Endpoint::kMessages,        "POST", "/v1/messages",              kModel,  kAnthropic, false,   false, true},
  {Endpoint::kCountTokens,     "POST", "/v1/messages/count_tokens", kModel,  kAnthropic, false,   false, false},
  {Endpoint::kTokenize,        "POST", "/tokenize",                 kModel,  kOpenAi,    false,   false, false},
  {Endpoint::kDetokenize,      "POST", "/detokenize",               kModel,  kOpenAi,    false,   false, false},
  {Endpoint::kListWorkers,     "GET",  "/router/workers",           kRouter, kOpenAi,    false,   false, false},
  {Endpoint::kRegisterWorker,  "POST", "/router/workers",           kRouter, kOpenAi,    false,   false, false},
};
// clang-format on
static_assert(std::size(kRoutes) == kEndpointCount);

bool PathMatches(const Route& route, std::string_view path) {
  if (path == route.path) return true;
  return route.subpaths && path.size() > route.path.size() && path.starts_with(route.path) &&
         path[route.path.size()] == '/';
}

}  // namespace

std::span<const Route> Routes() { return kRoutes; }

const Route& RouteOf(Endpoint endpoint) {
  const Route& route = kRoutes[static_cast<size_t>(endpoint)];
  K3_DCHECK(route.endpoint == endpoint);
  return route;
}

const Route* FindRoute(std::string_view method, std::string_view path) {
  for (const Route& route : kRoutes) {
    if (route.method == method && PathMatches(route, path)) return &route;
  }
  return nullptr;
}

std::string MetricsLabel(std::string_view path) {
  for (const Route& route : kRoutes) {
    if (PathMatches(route, path)) return std::string(route.path);
  }
  return "other";
}

Dialect DialectOf(std::string_view path) {
  return path.starts_with("/v1/messages") ? kAnthropic : kOpenAi;
}

RouteTable::RouteTable(DispatchOptions options) : options_(std::move(options)) {}

void RouteTable::Bind(Endpoint endpoint, RouteHandler handler) {
  handlers_[static_cast<size_t>(endpoint)] = std::move(handler);
}

void RouteTable::Fail(const std::string& endpoint, Dialect dialect, const ApiError& error,
                      const std::shared_ptr<Responder>& responder) const {
  if (options_.record) options_.record(endpoint, error.http_status);
  responder->Send(error.http_status, ErrorBody(dialect, error));
}

void RouteTable::Dispatch(const HttpRequest& request,
                          const std::shared_ptr<Responder>& responder) const {
  try {
    DispatchOrThrow(request, responder);
  } catch (const std::exception& e) {
    K3_LOG(kError) << request.method << " " << request.path << ": " << e.what();
    Fail(MetricsLabel(request.path), kOpenAi, {500, std::string("internal error: ") + e.what(), ""},
         responder);
  }
}

void RouteTable::DispatchOrThrow(const HttpRequest& request,
                                 const std::shared_ptr<Responder>& responder) const {
  const Route* route = FindRoute(request.method, request.path);
  const RouteHandler* handler = route ? &handlers_[static_cast<size_t>(route->endpoint)] : nullptr;
  if (handler != nullptr && !*handler) handler = nullptr;
  if (handler != nullptr && route->open) return (*handler)(request, *route, responder);
  const Dialect dialect = route ? route->dialect : DialectOf(request.path);
  const std::string label = MetricsLabel(request.path);
  if (options_.authorized && !options_.authorized(request)) {
    return Fail(label, dialect, {401, "invalid or missing API key", ""}, responder);
  }
  if (handler == nullptr) {
    return Fail(label, dialect,
                {404, request.method + " " + request.path + " is not an endpoint", ""}, responder);
  }
  if (route->generates && draining_) {
    return Fail(label, dialect, {503, options_.draining_message, ""}, responder);
  }
  (*handler)(request, *route, responder);
}

void BindProbes(RouteTable* table, Probes probes) {
  table->Bind(Endpoint::kHealth,
              [](const HttpRequest&, const Route&, const std::shared_ptr<Responder>& responder) {
                responder->Send(200, "", "text/plain");
              });
  table->Bind(Endpoint::kReady,
              [not_ready = std::move(probes.not_ready)](
                  const HttpRequest&, const Route&, const std::shared_ptr<Responder>& responder) {
                const std::optional<std::string> why = not_ready ? not_ready() : std::nullopt;
                if (why) return responder->Send(503, *why + "\n", "text/plain");
                responder->Send(200, "ready\n", "text/plain");
              });
  table->Bind(Endpoint::kMetrics,
              [metrics = std::move(probes.metrics)](const HttpRequest&, const Route&,
                                                    const std::shared_ptr<Responder>& responder) {
                responder->Send(200, metrics(), "text/plain; version=0.0.4");
              });
  table->Bind(Endpoint::kVersion,
              [](const HttpRequest&, const Route&, const std::shared_ptr<Responder>& responder) {
                responder->Send(200, std::string(R"({"version":")") + K3_VERSION + "\"}");
              });
}

}  // namespace k3::api
