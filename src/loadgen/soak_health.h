// The server-side checks of `k3 bench soak`: the server process's resident memory over the run,
// and what /metrics says is still held once the traffic has drained.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace k3::loadgen {

// VmRSS of a process in KiB (/proc/PID/status); nullopt when it cannot be read.
std::optional<int64_t> ReadRssKib(pid_t pid);
// The same parse over a status file's text (exposed for tests).
std::optional<int64_t> ParseVmRssKib(const std::string& status_text);

struct RssSample {
  double t_s = 0;
  int64_t kib = 0;
};

struct RssVerdict {
  int64_t start_kib = 0, baseline_kib = 0, peak_kib = 0, end_kib = 0;  // baseline: after warm-up
  std::string failure;                                                 // empty: within the bound
};
// Growth is judged against the first sample at or after `warmup_s` (allocators and caches fill
// during the first requests): a later sample above baseline + bound_kib fails. Fewer than two
// samples after warm-up: no verdict (failure says so only when `required`).
RssVerdict JudgeRss(const std::vector<RssSample>& samples, double warmup_s, int64_t bound_kib,
                    bool required);

// Gauges that must read 0 after a drain: requests admitted and not finished, sequences queued or
// running, KV blocks referenced, running-state slots held. Returns one line per gauge that is not
// 0 or is missing from the scrape (a server without them cannot be checked, which fails too).
std::vector<std::string> Leftovers(const std::map<std::string, double>& metrics);
extern const char* const kLeftoverGauges[5];

}  // namespace k3::loadgen
