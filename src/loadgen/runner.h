// The load generator: sends a workload's requests to an OpenAI-compatible endpoint as streamed
// chat (or completions) requests and records each one (record.h). Load shapes:
//   - closed loop: at most `concurrency` requests in flight;
//   - open loop: conversations start at a request rate (Poisson, or gamma-distributed gaps with
//     `burstiness` != 1; rate <= 0 with no concurrency = all at once), or at the trace's times;
// turns of one conversation always run in order, each extending the last with its reply.
// Everything runs on the calling thread (one Boost.Asio IO context), so the client's own cost is
// one core at most; that thread's CPU time is reported to show the client was not the bottleneck.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gateway/upstream.h"
#include "loadgen/record.h"
#include "loadgen/workload.h"

namespace k3::loadgen {

struct RunOptions {
  gateway::HostPort target;
  std::string api_key;  // sent as a bearer token when not empty
  std::string model = "k3-demo";
  bool completions = false;  // /v1/completions with the turns as raw prompts (single turn only)
  int concurrency = 0;       // > 0: closed loop
  double request_rate = 0;   // > 0: open loop (conversations per second)
  double burstiness = 1.0;   // gamma shape of the gaps (1 = Poisson)
  bool trace_times = false;  // use Conversation::arrival_s
  double temperature = 0;
  bool ignore_eos = true;  // every request produces its max_tokens (comparable runs)
  uint64_t seed = 1;
  double progress_every_s = 0.5;
};

struct Progress {
  int done = 0, total = 0, failed = 0, in_flight = 0;
  double elapsed_s = 0;
  int64_t output_tokens = 0;
};

struct RunResult {
  std::vector<RequestRecord> records;
  double duration_s = 0;    // first send to last completion
  double client_cpu_s = 0;  // CPU time of the thread that ran the client
  int64_t events = 0;       // SSE events read
};

RunResult RunWorkload(const Workload& workload, const RunOptions& options,
                      const std::function<void(const Progress&)>& on_progress = {});

}  // namespace k3::loadgen
