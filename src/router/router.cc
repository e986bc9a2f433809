#include "router/router.h"

#include <algorithm>

#include "base/check.h"

namespace k3::router {

const char* PolicyName(Policy p) {
  switch (p) {
    case Policy::kKv:
      return "kv";
    case Policy::kRoundRobin:
      return "round-robin";
    case Policy::kRandom:
      return "random";
    case Policy::kLeastLoaded:
      return "least-loaded";
    case Policy::kSession:
      return "session";
    case Policy::kDynamo:
      return "dynamo";
  }
  return "?";
}

base::Result<Policy> ParsePolicy(const std::string& name) {
  for (Policy p : {Policy::kKv, Policy::kRoundRobin, Policy::kRandom, Policy::kLeastLoaded,
                   Policy::kSession, Policy::kDynamo}) {
    if (name == PolicyName(p)) return p;
  }
  return base::InvalidArgument("unknown routing policy '" + name +
                               "' (kv, round-robin, random, least-loaded, session, dynamo)");
}

Router::Router(int workers, int block_tokens, Policy policy, CostWeights weights,
               bool checkpoints_required, uint64_t seed)
    : workers_(workers),
      block_tokens_(block_tokens),
      policy_(policy),
      weights_(weights),
      index_(checkpoints_required),
      loads_(static_cast<size_t>(workers)),
      healthy_(static_cast<size_t>(workers), 1),
      rng_(seed) {
  K3_CHECK(workers >= 1 && workers <= PrefixIndex::kMaxWorkers) << "1..64 workers";
  K3_CHECK(block_tokens >= 1);
}

std::optional<int> Router::NextHealthy(int from) const {
  for (int k = 0; k < workers_; ++k) {
    const int w = (from + k) % workers_;
    if (healthy_[size_t(w)]) return w;
  }
  return std::nullopt;
}

// Lowest cost among healthy workers; ties go to the lower load, then the lower id.
Decision Router::ByCost(const RouteRequest& request, bool dynamo) {
  index_.Match(request.chain, &usable_);
  const int64_t prompt_blocks = request.prompt_tokens / block_tokens_;
  Decision best;
  double best_load = 0;
  for (int w = 0; w < workers_; ++w) {
    if (!healthy_[size_t(w)]) continue;
    const WorkerLoad& load = loads_[size_t(w)];
    const int64_t cached_blocks = std::min(usable_[size_t(w)], prompt_blocks);
    const int64_t cached = cached_blocks * block_tokens_;
    const double cost =
        dynamo ? DynamoCost(weights_, prompt_blocks, cached_blocks, block_tokens_, load)
               : KvCost(weights_, request.prompt_tokens, cached, load);
    const double total_load =
        double(load.prefill_tokens) + weights_.decode * double(load.decode_seqs);
    if (best.worker < 0 || cost < best.cost || (cost == best.cost && total_load < best_load)) {
      best.worker = w;
      best.cost = cost;
      best.cached_tokens = cached;
      best_load = total_load;
    }
  }
  if (best.worker >= 0 && !dynamo) {
    best.why = ExplainKvCost(weights_, request.prompt_tokens, best.cached_tokens,
                             loads_[size_t(best.worker)]);
  }
  return best;
}

base::Result<Decision> Router::Route(const RouteRequest& request) {
  if (!NextHealthy(0)) return base::Status(base::StatusCode::kUnavailable, "no healthy worker");
  Decision d;
  switch (policy_) {
    case Policy::kKv:
      return ByCost(request, /*dynamo=*/false);
    case Policy::kDynamo:
      return ByCost(request, /*dynamo=*/true);
    case Policy::kRoundRobin:
      d.worker = *NextHealthy(next_);
      next_ = (d.worker + 1) % workers_;
      break;
    case Policy::kRandom: {  // uniform over the healthy workers
      const auto healthy = static_cast<uint64_t>(std::count(healthy_.begin(), healthy_.end(), 1));
      uint64_t skip = rng_() % healthy;
      for (int w = 0; w < workers_ && d.worker < 0; ++w) {
        if (healthy_[size_t(w)] && skip-- == 0) d.worker = w;
      }
      break;
    }
    case Policy::kLeastLoaded: {
      double best = 0;
      for (int w = 0; w < workers_; ++w) {
        if (!healthy_[size_t(w)]) continue;
        const WorkerLoad& l = loads_[size_t(w)];
        const double v = double(l.prefill_tokens) + weights_.decode * double(l.decode_seqs);
        if (d.worker < 0 || v < best) {
          d.worker = w;
          best = v;
        }
      }
      break;
    }
    case Policy::kSession: {
      if (request.session.empty()) return ByCost(request, false);
      auto it = sessions_.find(request.session);
      if (it != sessions_.end() && healthy_[size_t(it->second)]) {
        d.worker = it->second;
        break;
      }
      d = ByCost(request, false);
      sessions_[request.session] = d.worker;
      return d;
    }
  }
  // Policies that ignore the cache still report what the chosen worker had cached.
  index_.Match(request.chain, &usable_);
  d.cached_tokens = std::min(usable_[size_t(d.worker)] * block_tokens_, request.prompt_tokens);
  return d;
}

}  // namespace k3::router
