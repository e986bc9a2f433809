#include "gateway/gateway.h"

#include <nlohmann/json.hpp>

#include "api/api_error.h"
#include "base/log.h"

namespace k3::gateway {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kDiscoveryTimeout = std::chrono::milliseconds(3000);

}  // namespace

Gateway::Gateway(GatewayConfig config)
    : config_(std::move(config)),
      routes_(api::DispatchOptions{.draining_message = "the router is shutting down"}),
      workers_(config_.max_workers, config_.backoff),
      routable_(size_t(config_.max_workers), 0) {
  for (int w = 0; w < config_.max_workers; ++w) feeds_.emplace_back(w);
  BindRoutes();
}

// The router answers its probes and its worker registry itself; every API endpoint goes to a
// worker (generations routed by their prompt, the rest by load). Paths no route names are
// answered by the table (404 in the path's dialect), as a worker would answer them.
void Gateway::BindRoutes() {
  using api::Endpoint;
  api::BindProbes(&routes_, {.not_ready = [this]() -> std::optional<std::string> {
                               if (!routes_.draining() && AnyHealthyWorker()) {
                                 return std::nullopt;
                               }
                               return "no healthy worker";
                             },
                             .metrics = [this] { return RenderMetrics(); }});
  routes_.Bind(Endpoint::kListWorkers, [this](const api::HttpRequest&, const api::Route&,
                                              const Reply& r) { r->Send(200, RenderWorkers()); });
  routes_.Bind(Endpoint::kRegisterWorker, [this](const api::HttpRequest& request, const api::Route&,
                                                 const Reply& r) { Register(request, r); });
  for (const api::Route& route : api::Routes()) {
    if (route.scope != api::Scope::kModel) continue;
    routes_.Bind(route.endpoint, [this](const api::HttpRequest& request, const api::Route& r,
                                        const Reply& responder) {
      r.generates ? Generate(request, r, responder) : Passthrough(request, r, responder);
    });
  }
}

bool Gateway::AnyHealthyWorker() const {
  for (const Worker& w : workers_.Snapshot()) {
    if (w.healthy) return true;
  }
  return false;
}

Gateway::~Gateway() { Stop(); }

base::Status Gateway::Start() {
  work_.emplace(io_.get_executor());
  for (int i = 0; i < std::max(1, config_.io_threads); ++i) {
    io_threads_.emplace_back([this] { io_.run(); });
  }
  events_ = std::make_unique<kvwire::KvEventSubscriber>(this, kvwire::SubscriberConfig{});
  K3_RETURN_IF_ERROR(events_->Start());
  health_ = std::thread([this] { HealthLoop(); });
  return base::Status::Ok();
}

void Gateway::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (health_.joinable()) health_.join();
  if (events_) events_->Stop();
  work_.reset();
  io_.stop();
  for (auto& t : io_threads_) t.join();
  io_threads_.clear();
}

base::Result<int> Gateway::AddWorker(const std::string& url) {
  K3_ASSIGN_OR_RETURN(HostPort address, ParseHttpUrl(url));
  std::optional<WorkerKvInfo> kv;
  auto info = HttpGet(address, "/v1/kv_events", kDiscoveryTimeout);
  if (!info.ok()) {
    return base::Status(base::StatusCode::kUnavailable,
                        "worker " + url + " does not answer: " + info.status().message());
  }
  if (info->status == 200) {
    K3_ASSIGN_OR_RETURN(kv, ParseWorkerKvInfo(info->body));
  } else {
    K3_LOG(kWarning) << "worker " << url << " publishes no KV events (GET /v1/kv_events -> "
                     << info->status << "): it is routed by load only";
  }
  int id = -1;
  {
    std::lock_guard lock(route_mu_);
    const int block_size = kv ? kv->block_size : config_.key.block_size;
    if (router_ && kv && block_size != config_.key.block_size) {
      return base::InvalidArgument("worker " + url + " uses " + std::to_string(block_size) +
                                   "-token blocks; the other workers use " +
                                   std::to_string(config_.key.block_size));
    }
    bool added = false;
    K3_ASSIGN_OR_RETURN(id, workers_.Add(url, address, kv, &added));
    if (!router_) {
      config_.key.block_size = block_size;
      router_ = std::make_unique<router::Router>(config_.max_workers, block_size, config_.policy,
                                                 config_.weights, kv && kv->checkpoints_required);
      for (int w = 0; w < config_.max_workers; ++w) router_->SetHealthy(w, false);
    }
    routable_[size_t(id)] = 1;
    router_->SetHealthy(id, true);
    if (!added) return id;
  }
  if (kv) events_->AddWorker(id, kv->publish_endpoint, kv->resync_endpoint);
  K3_LOG(kInfo) << "worker " << id << ": " << url
                << (kv ? " (KV events " + kv->publish_endpoint + ", " +
                             std::to_string(kv->block_size) + "-token blocks)"
                       : std::string(" (no KV events)"));
  return id;
}

// Registration: {"url": "http://HOST:PORT"} from a worker at start-up (`k3 serve --register`).
void Gateway::Register(const api::HttpRequest& request, const Reply& responder) {
  const auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (!body.is_object() || !body.contains("url") || !body["url"].is_string()) {
    return responder->Send(
        400, api::OpenAiErrorBody(api::BadRequest("give {\"url\": \"http://HOST:PORT\"}", "url")));
  }
  auto id = AddWorker(body["url"].get<std::string>());
  if (!id.ok()) {
    const int status = id.status().code() == base::StatusCode::kInvalidArgument ? 400 : 503;
    return responder->Send(status, api::OpenAiErrorBody({status, id.status().message(), "url"}));
  }
  responder->Send(200, nlohmann::json{{"worker", *id}}.dump());
}

std::string Gateway::RenderWorkers() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Worker& w : workers_.Snapshot()) {
    nlohmann::json item = {{"id", w.id},
                           {"url", w.url},
                           {"healthy", w.healthy},
                           {"kv_events", w.kv.has_value()},
                           {"prefill_tokens", w.load.prefill_tokens},
                           {"running", w.load.decode_seqs},
                           {"requests", w.requests}};
    list.push_back(std::move(item));
  }
  return nlohmann::json{{"policy", router::PolicyName(config_.policy)}, {"workers", list}}.dump();
}

std::string Gateway::RenderMetrics() const {
  KvFeedCounters feed;
  if (events_) {
    const auto c = events_->stats();
    feed.events_received = static_cast<int64_t>(c.events_received);
    feed.decode_errors = static_cast<int64_t>(c.decode_errors);
    feed.gaps = static_cast<int64_t>(c.gaps);
  }
  {
    std::lock_guard lock(route_mu_);
    feed.resyncs = feed_stats_.resyncs;
    feed.gaps += feed_stats_.gaps;
    feed.restarts = feed_stats_.restarts;
    feed.events_applied = feed_stats_.applied;
    feed.index_blocks = router_ ? static_cast<int64_t>(router_->index().size()) : 0;
  }
  return metrics_.Render(router::PolicyName(config_.policy), workers_.Snapshot(), feed);
}

void Gateway::HealthLoop() {
  std::unique_lock lock(stop_mu_);
  while (!stopping_) {
    lock.unlock();
    for (const Worker& w : workers_.DueForCheck(Clock::now())) {
      auto result = HttpGet(w.address, "/health", config_.health_timeout);
      if (result.ok() && result->status == 200) {
        if (workers_.MarkUp(w.id, Clock::now())) WorkerUp(w.id);
      } else {
        const std::string why = result.ok() ? "GET /health -> " + std::to_string(result->status)
                                            : result.status().message();
        if (workers_.MarkDown(w.id, Clock::now())) WorkerDown(w.id, why);
      }
    }
    lock.lock();
    stop_cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

// A dead worker is forgotten: its index entries go (a restarted one comes back empty or with a
// snapshot) and no request is routed to it until a health check passes.
void Gateway::WorkerDown(int worker, const std::string& why) {
  K3_LOG(kWarning) << "worker " << worker << " is down (" << why << "); retrying with backoff";
  std::lock_guard lock(route_mu_);
  if (!router_) return;
  router_->SetHealthy(worker, false);
  router_->index().ClearWorker(worker);
}

void Gateway::WorkerUp(int worker) {
  K3_LOG(kInfo) << "worker " << worker << " is healthy again";
  {
    std::lock_guard lock(route_mu_);
    if (!router_ || !routable_[size_t(worker)]) return;
    router_->SetHealthy(worker, true);
  }
  if (workers_.Get(worker)->kv) events_->RequestResync(worker, 0);
}

// --- KV events (subscriber thread) ---

void Gateway::OnEvent(int worker, const cache::SequencedKvEvent& e) {
  std::lock_guard lock(route_mu_);
  if (!router_ || worker < 0 || worker >= config_.max_workers) return;
  auto& feed = feeds_[size_t(worker)];
  switch (feed.Apply(e, &router_->index())) {
    case router::EventFeed::Outcome::kApplied:
      ++feed_stats_.applied;
      break;
    case router::EventFeed::Outcome::kRestarted:
      ++feed_stats_.restarts;
      break;
    case router::EventFeed::Outcome::kDuplicate:
      break;
    case router::EventFeed::Outcome::kResync:
      // The subscriber hands over gap-free streams, so this means the feed and the subscriber
      // disagree: start over from the worker's whole state (the feed forgot the worker).
      ++feed_stats_.gaps;
      feed.Rebuild(0, {}, &router_->index());
      events_->RequestResync(worker, 0);
      break;
  }
}

void Gateway::OnResync(int worker, bool snapshot, uint64_t last_sequence,
                       const std::vector<cache::SequencedKvEvent>& events) {
  std::lock_guard lock(route_mu_);
  if (!router_ || worker < 0 || worker >= config_.max_workers) return;
  auto& feed = feeds_[size_t(worker)];
  if (snapshot) {
    feed.Rebuild(last_sequence, events, &router_->index());
  } else {
    feed.Replay(last_sequence, events, &router_->index());
  }
  ++feed_stats_.resyncs;
  K3_LOG(kDebug) << "worker " << worker << ": " << (snapshot ? "snapshot" : "replay") << " of "
                 << events.size() << " events as of #" << last_sequence;
}

void Gateway::OnRestart(int worker) {
  std::lock_guard lock(route_mu_);
  if (!router_ || worker < 0 || worker >= config_.max_workers) return;
  feeds_[size_t(worker)].Rebuild(0, {}, &router_->index());
  ++feed_stats_.restarts;
}

}  // namespace k3::gateway
