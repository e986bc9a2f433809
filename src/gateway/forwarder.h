// Forwarding one client request: pick a worker, relay its answer (whole or streamed), and when a
// worker fails before anything reached the client (refused connection, reset before the status
// line, or a 429/502/503 worth retrying) take that worker out and try another. Once an event has
// been relayed the request stays with its worker: a broken stream ends with an error event.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "api/responder.h"
#include "gateway/upstream.h"

namespace k3::gateway {

struct Pick {
  int worker = -1;
  HostPort address;
  int64_t uncached_tokens = 0;  // prefill work this request adds to the worker (load accounting)
};

struct ForwardHooks {
  // A worker not in `excluded`; nullopt when no healthy one is left.
  std::function<std::optional<Pick>(const std::vector<int>& excluded)> pick;
  // Load deltas: (worker, prefill tokens, decode sequences).
  std::function<void(int, int64_t, int)> load;
  // The worker could not be reached (or refused with `status`, 0 for none): health bookkeeping.
  std::function<void(int worker, int status)> unreachable;
  // The request ended on `worker` (-1: no worker answered) after `attempts` tries.
  std::function<void(int worker, CallOutcome outcome, int attempts)> finished;
};

struct ForwardOptions {
  int max_attempts = 3;
  bool anthropic = false;  // error shapes
  CallTimeouts timeouts;
};

void Forward(boost::asio::io_context& io, const api::HttpRequest& request,
             std::shared_ptr<api::Responder> responder, ForwardHooks hooks, ForwardOptions options);

}  // namespace k3::gateway
