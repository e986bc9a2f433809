// Gateway: choosing a worker for each request and forwarding it (the other half of gateway.h).
#include <chrono>

#include "base/log.h"
#include "gateway/gateway.h"

namespace k3::gateway {

void Gateway::Generate(const api::HttpRequest& request, const api::Route& route,
                       const Reply& responder) {
  auto key = std::make_shared<RoutingKey>();
  {
    std::lock_guard lock(route_mu_);  // block_size may still change until a router exists
    if (!router_) {
      const api::ApiError error{503, "no worker is registered with the router", ""};
      return responder->Send(503, api::ErrorBody(route.dialect, error));
    }
  }
  *key = KeyFor(request, config_.key);
  if (!key->parsed) {
    metrics_.RecordUnrouted();
    K3_LOG(kDebug) << request.path << ": routed by load (" << key->error << ")";
  }
  ForwardOptions options = config_.forward;
  options.anthropic = route.dialect == api::Dialect::kAnthropic;
  active_++;
  Forward(io_, request, responder, HooksFor(request.path, key), options);
}

// The other API endpoints (models, tokenize, count_tokens, ...) go to a healthy worker by load.
void Gateway::Passthrough(const api::HttpRequest& request, const api::Route& route,
                          const Reply& responder) {
  auto key = std::make_shared<RoutingKey>();
  ForwardOptions options = config_.forward;
  options.anthropic = route.dialect == api::Dialect::kAnthropic;
  active_++;
  Forward(io_, request, responder, HooksFor(request.path, key), options);
}

std::optional<Pick> Gateway::PickWorker(const RoutingKey& key, const std::vector<int>& excluded,
                                        const std::string& endpoint) {
  router::Decision decision;
  double seconds = 0;
  {
    std::lock_guard lock(route_mu_);
    if (!router_) return std::nullopt;
    std::vector<int> hidden;  // healthy workers this request already failed on
    for (int w : excluded) {
      if (router_->healthy(w)) {
        router_->SetHealthy(w, false);
        hidden.push_back(w);
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto routed = router_->Route(router::RouteRequest{key.chain, key.prompt_tokens, key.session});
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int w : hidden) router_->SetHealthy(w, true);
    if (!routed.ok()) return std::nullopt;
    decision = std::move(routed).value();
  }
  auto worker = workers_.Get(decision.worker);
  if (!worker) return std::nullopt;
  metrics_.RecordDecision(key.prompt_tokens, decision.cached_tokens, seconds);
  workers_.CountRequest(decision.worker, key.prompt_tokens, decision.cached_tokens);
  if (config_.log_decisions && key.parsed) {
    K3_LOG(kInfo) << endpoint << " -> worker " << decision.worker << " ("
                  << router::PolicyName(config_.policy) << "): " << key.prompt_tokens
                  << " prompt tokens, " << decision.cached_tokens << " cached; " << decision.why;
  }
  return Pick{decision.worker, worker->address,
              std::max<int64_t>(0, key.prompt_tokens - decision.cached_tokens)};
}

void Gateway::UpdateLoad(int worker, int64_t prefill_tokens, int decode_seqs) {
  workers_.AddLoad(worker, prefill_tokens, decode_seqs);
  std::lock_guard lock(route_mu_);
  if (router_) router_->SetLoad(worker, workers_.Load(worker));
}

ForwardHooks Gateway::HooksFor(const std::string& endpoint, std::shared_ptr<RoutingKey> key) {
  ForwardHooks hooks;
  hooks.pick = [this, key, endpoint](const std::vector<int>& excluded) {
    if (!excluded.empty()) metrics_.RecordRetry();
    return PickWorker(*key, excluded, endpoint);
  };
  hooks.load = [this](int worker, int64_t prefill, int decode) {
    UpdateLoad(worker, prefill, decode);
  };
  hooks.unreachable = [this](int worker, int status) {
    workers_.CountError(worker);
    if (status == 429) return;  // busy, not broken: only this request goes elsewhere
    const auto now = std::chrono::steady_clock::now();
    if (workers_.MarkDown(worker, now)) {
      WorkerDown(worker, status ? "answered " + std::to_string(status) : "connection failed");
    }
  };
  hooks.finished = [this, endpoint](int, CallOutcome outcome, int) {
    metrics_.RecordRequest(endpoint, CallOutcomeName(outcome));
    active_--;
  };
  return hooks;
}

}  // namespace k3::gateway
