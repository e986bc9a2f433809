// The router's front end (`k3 route`): serves the OpenAI and Anthropic endpoints and forwards
// each request to one worker (`k3 serve` replicas), chosen by the router (src/router) from its
// prefix index, which KV events from the workers keep current (src/kvwire over ZeroMQ).
//
// Threads: the HTTP server's IO threads call Handle; the upstream IO threads relay responses;
// the KV subscriber thread applies events; one health thread checks workers. The routing state
// (router, event feeds) is guarded by one mutex, held for a decision or one event (microseconds).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/responder.h"
#include "api/route_table.h"
#include "gateway/forwarder.h"
#include "gateway/gateway_metrics.h"
#include "gateway/routing_key.h"
#include "gateway/workers.h"
#include "kvwire/subscriber.h"
#include "router/event_feed.h"
#include "router/router.h"

namespace k3::gateway {

struct GatewayConfig {
  router::Policy policy = router::Policy::kKv;
  router::CostWeights weights;
  KeyContext key;  // tokenizer and chat format of the served checkpoint (no weights)
  BackoffPolicy backoff;
  std::chrono::milliseconds health_timeout{1000};
  ForwardOptions forward;
  int io_threads = 2;  // upstream IO
  int max_workers = router::PrefixIndex::kMaxWorkers;
  bool log_decisions = true;
};

class Gateway : public api::RequestHandler, public kvwire::KvEventHandler {
 public:
  explicit Gateway(GatewayConfig config);
  ~Gateway() override;

  // Starts the upstream IO threads, the KV subscriber and the health checks.
  base::Status Start();
  void Stop();

  // Asks the worker for its KV-event endpoints (GET /v1/kv_events; a worker without them is
  // routed by load only) and adds it. Returns its id; the same URL twice gives the same id.
  base::Result<int> AddWorker(const std::string& url);

  // api::RequestHandler: the route table's endpoints, the API ones forwarded to a worker.
  void Handle(const api::HttpRequest& request, std::shared_ptr<api::Responder> responder) override {
    routes_.Dispatch(request, responder);
  }
  void SetDraining() override { routes_.SetDraining(); }
  int64_t active_requests() const override { return active_.load(); }

  // kvwire::KvEventHandler (the subscriber thread)
  void OnEvent(int worker, const cache::SequencedKvEvent& e) override;
  void OnResync(int worker, bool snapshot, uint64_t last_sequence,
                const std::vector<cache::SequencedKvEvent>& events) override;
  void OnRestart(int worker) override;

  std::string RenderMetrics() const;
  std::string RenderWorkers() const;

 private:
  using Reply = std::shared_ptr<api::Responder>;
  void BindRoutes();
  bool AnyHealthyWorker() const;
  // Generations: routed by the prompt's cached prefix. Passthrough: any healthy worker by load.
  void Generate(const api::HttpRequest& request, const api::Route& route, const Reply& responder);
  void Passthrough(const api::HttpRequest& request, const api::Route& route,
                   const Reply& responder);
  void Register(const api::HttpRequest& request, const Reply& responder);
  std::optional<Pick> PickWorker(const RoutingKey& key, const std::vector<int>& excluded,
                                 const std::string& endpoint);
  ForwardHooks HooksFor(const std::string& endpoint, std::shared_ptr<RoutingKey> key);
  void UpdateLoad(int worker, int64_t prefill_tokens, int decode_seqs);
  void HealthLoop();
  void WorkerDown(int worker, const std::string& why);
  void WorkerUp(int worker);

  GatewayConfig config_;
  api::RouteTable routes_;
  WorkerTable workers_;
  GatewayMetrics metrics_;

  mutable std::mutex route_mu_;             // router_, feeds_, block size
  std::unique_ptr<router::Router> router_;  // made by the first worker with KV events
  std::vector<router::EventFeed> feeds_;    // by worker id
  std::vector<char> routable_;              // by worker id: registered
  struct {
    int64_t applied = 0, gaps = 0, restarts = 0, resyncs = 0;
  } feed_stats_;

  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::vector<std::thread> io_threads_;
  std::unique_ptr<kvwire::KvEventSubscriber> events_;
  std::thread health_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<int64_t> active_{0};
};

}  // namespace k3::gateway
