// The endpoints of `k3 serve` and `k3 route`, in one table: method, path, the error dialect, and
// what kind of endpoint each is (an open probe, a generation). Each server binds handlers to the
// routes it serves: `k3 serve` (api::Service) runs the API ones on its frontend, `k3 route`
// (gateway::Gateway) forwards them to a worker, as llama.cpp's router mode swaps the handlers of
// one route list. Dispatch does what all routes share, in this order:
//   1. open routes (probes, KV-event discovery) are answered at once, without a key;
//   2. authentication: 401 in the route's dialect (or the path's, when nothing matches);
//   3. the one answer for a method and path nobody serves: 404 "{METHOD} {path} is not an
//      endpoint" in the path's dialect (a known path with another method included);
//   4. generations while draining: 503 in the route's dialect;
//   5. the handler; one that throws is answered 500 "internal error: ..." (OpenAI shape).
// Errors answered here are counted through DispatchOptions::record under the request path.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "api/responder.h"

namespace k3::api {

enum class Endpoint {
  kHealth,
  kReady,
  kMetrics,
  kVersion,
  kKvEvents,
  kModels,
  kChatCompletions,
  kCompletions,
  kResponses,
  kMessages,
  kCountTokens,
  kTokenize,
  kDetokenize,
  kListWorkers,     // k3 route only
  kRegisterWorker,  // k3 route only
};
inline constexpr size_t kEndpointCount = static_cast<size_t>(Endpoint::kRegisterWorker) + 1;

// Who answers a route.
enum class Scope {
  kEveryServer,  // each server answers it itself (the probes)
  kModel,        // the model's API: `k3 serve` runs it, `k3 route` forwards it to a worker
  kRouter,       // `k3 route`'s own (its worker registry)
};

struct Route {
  Endpoint endpoint;
  std::string_view method;
  std::string_view path;
  Scope scope = Scope::kModel;
  Dialect dialect = Dialect::kOpenAi;
  bool subpaths = false;   // path + "/..." matches too (GET /v1/models/{model})
  bool open = false;       // answered without an API key (probes, KV-event discovery)
  bool generates = false;  // starts a generation: refused while draining, routed by its prompt
};

// Every route, one per endpoint, in Endpoint order.
std::span<const Route> Routes();
const Route& RouteOf(Endpoint endpoint);
// The route `method` + `path` names, or null.
const Route* FindRoute(std::string_view method, std::string_view path);
// The metrics label of a request path: the path of the route it names (any method; a subpath
// counts as its route), else "other", so unknown paths cannot grow the label set.
std::string MetricsLabel(std::string_view path);
// The dialect of an error about `path` when no route matched: Anthropic under /v1/messages.
Dialect DialectOf(std::string_view path);

using RouteHandler = std::function<void(const HttpRequest& request, const Route& route,
                                        const std::shared_ptr<Responder>& responder)>;

struct DispatchOptions {
  std::function<bool(const HttpRequest&)> authorized;  // null: no authentication
  // Counts an error answered by the table (endpoint = the request path, HTTP status); may be null.
  std::function<void(const std::string& endpoint, int http_status)> record;
  std::string draining_message = "the server is shutting down";  // the 503 while draining
};

class RouteTable {
 public:
  explicit RouteTable(DispatchOptions options = {});

  // Serves `endpoint` with `handler`; unbound endpoints are answered like unknown paths.
  void Bind(Endpoint endpoint, RouteHandler handler);
  // Answers every request exactly once (steps above). Never throws.
  void Dispatch(const HttpRequest& request, const std::shared_ptr<Responder>& responder) const;

  // Sends `error` in `dialect` and counts it under `endpoint`.
  void Fail(const std::string& endpoint, Dialect dialect, const ApiError& error,
            const std::shared_ptr<Responder>& responder) const;

  // Draining (SIGTERM): generations are refused from now on.
  void SetDraining() { draining_ = true; }
  bool draining() const { return draining_; }

 private:
  void DispatchOrThrow(const HttpRequest& request,
                       const std::shared_ptr<Responder>& responder) const;

  DispatchOptions options_;
  std::array<RouteHandler, kEndpointCount> handlers_;
  std::atomic<bool> draining_{false};
};

// The probes every server binds: /health (200, empty), /ready (200 "ready\n", or 503 with the
// reason and a newline), /metrics (Prometheus text exposition), /version ({"version": "X.Y.Z"},
// the k3serve release, as vLLM's /version answers).
struct Probes {
  std::function<std::optional<std::string>()> not_ready;  // why not ready; nullopt: ready
  std::function<std::string()> metrics;
};
void BindProbes(RouteTable* table, Probes probes);

}  // namespace k3::api
