// The router's view of its workers: address, KV-event endpoints, health with backoff, and the
// load the router itself has put on each (requests it forwarded and that are still running).
// Worker ids are small integers (slots of the router's prefix index) that are never reused, so an
// id in a late event or callback can never name a different worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "gateway/upstream.h"
#include "router/cost.h"

namespace k3::gateway {

// What a worker says about itself (GET /v1/kv_events on `k3 serve --kv-events ...`).
struct WorkerKvInfo {
  std::string publish_endpoint;  // ZeroMQ PUB, e.g. tcp://127.0.0.1:5557
  std::string resync_endpoint;   // ZeroMQ ROUTER answering replay / snapshot requests
  int block_size = 0;
  bool checkpoints_required = false;  // hybrid (KDA) model: hits need a state checkpoint
};
// Parses the info body. INVALID_ARGUMENT naming the field.
base::Result<WorkerKvInfo> ParseWorkerKvInfo(const std::string& json);

using SteadyTime = std::chrono::steady_clock::time_point;

struct Worker {
  int id = -1;
  std::string url;
  HostPort address;
  std::optional<WorkerKvInfo> kv;  // absent: routed by load only
  bool healthy = true;
  int failures = 0;         // consecutive failed checks or connections
  SteadyTime next_check;    // health checks back off while failing
  router::WorkerLoad load;  // from this router's requests in flight
  int64_t requests = 0, prompt_tokens = 0, cached_tokens = 0, errors = 0;
};

struct BackoffPolicy {
  std::chrono::milliseconds interval{1000};  // between checks of a healthy worker
  std::chrono::milliseconds first_retry{500};
  std::chrono::milliseconds max_retry{30000};
};

// Thread-safe table; copies out snapshots so no caller holds the lock while doing IO.
class WorkerTable {
 public:
  explicit WorkerTable(int capacity, BackoffPolicy backoff = {})
      : capacity_(capacity), backoff_(backoff) {}

  // Adds a worker, or returns the id of the one with the same URL. RESOURCE_EXHAUSTED at
  // capacity.
  base::Result<int> Add(const std::string& url, const HostPort& address,
                        std::optional<WorkerKvInfo> kv, bool* added);
  std::vector<Worker> Snapshot() const;
  std::optional<Worker> Get(int id) const;
  // Workers whose health check is due now.
  std::vector<Worker> DueForCheck(SteadyTime now) const;

  // Health transitions; each returns true when the worker's healthy flag changed.
  bool MarkUp(int id, SteadyTime now);
  bool MarkDown(int id, SteadyTime now);

  // Load accounting for one forwarded request.
  void AddLoad(int id, int64_t prefill_tokens, int decode_seqs);
  void CountRequest(int id, int64_t prompt_tokens, int64_t cached_tokens);
  void CountError(int id);
  router::WorkerLoad Load(int id) const;
  int size() const;

 private:
  Worker* Find(int id);
  const Worker* Find(int id) const;

  mutable std::mutex mutex_;
  int capacity_;
  BackoffPolicy backoff_;
  std::vector<Worker> workers_;  // index == id
};

}  // namespace k3::gateway
