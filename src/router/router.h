// Router: picks the worker for each request from the prefix index, the workers' loads and a
// policy. Knows nothing of the model: a request is its chained block hashes and its length.
//
// Policies: kv (default: lowest KvCost, cost.h), round-robin, random, least-loaded, session
// (sticky by a session key, first placement by kv), dynamo (Dynamo's default cost, for
// comparison). Unhealthy workers are never picked. Not thread-safe (one routing thread).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "router/cost.h"
#include "router/prefix_index.h"

namespace k3::router {

enum class Policy { kKv, kRoundRobin, kRandom, kLeastLoaded, kSession, kDynamo };
const char* PolicyName(Policy p);
base::Result<Policy> ParsePolicy(const std::string& name);

struct RouteRequest {
  std::span<const BlockHash> chain;  // chained hashes of the prompt's full blocks
  int64_t prompt_tokens = 0;
  std::string session;  // policy session: the sticky key (e.g. a header); empty: kv
};

struct Decision {
  int worker = -1;
  int64_t cached_tokens = 0;  // usable prefix on that worker (block-aligned)
  double cost = 0;
  std::string why;  // the cost terms, for the log
};

class Router {
 public:
  Router(int workers, int block_tokens, Policy policy, CostWeights weights,
         bool checkpoints_required, uint64_t seed = 1);

  PrefixIndex& index() { return index_; }
  const PrefixIndex& index() const { return index_; }
  void SetLoad(int worker, const WorkerLoad& load) { loads_[size_t(worker)] = load; }
  const WorkerLoad& load(int worker) const { return loads_[size_t(worker)]; }
  void SetHealthy(int worker, bool healthy) { healthy_[size_t(worker)] = healthy; }
  bool healthy(int worker) const { return healthy_[size_t(worker)]; }
  int workers() const { return workers_; }
  Policy policy() const { return policy_; }

  // UNAVAILABLE when no worker is healthy.
  base::Result<Decision> Route(const RouteRequest& request);

 private:
  Decision ByCost(const RouteRequest& request, bool dynamo);
  std::optional<int> NextHealthy(int from) const;

  int workers_;
  int block_tokens_;
  Policy policy_;
  CostWeights weights_;
  PrefixIndex index_;
  std::vector<WorkerLoad> loads_;
  std::vector<char> healthy_;
  std::vector<int64_t> usable_;  // scratch for Match
  int next_ = 0;                 // round-robin
  std::mt19937_64 rng_;
  std::unordered_map<std::string, int> sessions_;
};

}  // namespace k3::router
