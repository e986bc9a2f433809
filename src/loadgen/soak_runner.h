// `k3 bench soak`'s traffic: a few concurrent clients, each sending the soak's request kinds
// (soak_requests.h) back to back in a shuffled rotation until the duration is up, then waiting
// for what is in flight. Every response is checked as it ends; the server's RSS is sampled on a
// timer when its pid is known. Runs on the calling thread (one Boost.Asio IO context).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gateway/upstream.h"
#include "loadgen/soak_health.h"
#include "loadgen/soak_requests.h"

namespace k3::loadgen {

struct SoakOptions {
  gateway::HostPort target;
  std::string api_key;  // sent as a bearer token when not empty
  SoakContext context;
  double duration_s = 180;
  int clients = 4;
  pid_t server_pid = 0;  // > 0: sample /proc/PID/status VmRSS every rss_every_s
  double rss_every_s = 1;
  double progress_every_s = 5;
  double request_timeout_s = 120;  // a request still unanswered after this is a failure
  uint64_t seed = 1;
};

struct SoakKindStats {
  int64_t sent = 0, ok = 0, failed = 0;
  std::vector<double> latency_ms;  // of the requests that passed
};

struct SoakResult {
  std::array<SoakKindStats, size_t(SoakKind::kCount)> kinds;
  std::map<std::string, int64_t> failures;  // "kind: reason" -> count
  std::vector<RssSample> rss;
  double duration_s = 0;  // first send to the last answer
  int64_t sent() const;
  int64_t failed() const;
};

struct SoakProgress {
  double elapsed_s = 0;
  int64_t done = 0, failed = 0;
  int in_flight = 0;
  int64_t rss_kib = 0;  // latest sample; 0 without a pid
};

SoakResult RunSoak(const SoakOptions& options,
                   const std::function<void(const SoakProgress&)>& on_progress = {});

// The summary table: requests by kind (sent, ok, failed, p50/p99 latency), failures by reason.
std::string FormatSoakTraffic(const SoakResult& result);

}  // namespace k3::loadgen
