// Shared by `k3 bench serve` and `k3 sweep`: the bench flags, building the workload they name,
// and one measured run (with the server's prefix hit rate scraped around it).
#pragma once

#include <string>

#include "base/result.h"
#include "loadgen/summary.h"
#include "loadgen/workload.h"

namespace k3::app {

struct BenchServeFlags {
  std::string url = "http://127.0.0.1:8000";
  std::string dataset = "random";
  int num_requests = 100;
  int concurrency = 0;
  std::string request_rates;  // comma list; empty: all at once (or --concurrency)
  double burstiness = 1.0;
  bool trace_times = false;
  double time_scale = 1.0;
  std::string input_words = "64:512";
  int max_tokens = 64;
  int turns = 4;
  int system_words = 400;
  int words_per_block = 32;
  loadgen::Slo slo;
  std::string model = "k3-demo";
  std::string api_key;
  bool completions = false;
  uint64_t seed = 1;
  std::string json, plot;
  bool stub = false;
  bool no_progress = false;
  bool fail_on_errors = false;
};

base::Result<loadgen::Workload> BuildWorkload(const BenchServeFlags& f);

struct BenchOutcome {
  std::string title;
  loadgen::Summary summary;
};
// One run at `rate` conversations/s (0: all at once or --concurrency), with a progress bar on
// stderr unless --no-progress.
base::Result<BenchOutcome> BenchOnce(const BenchServeFlags& f, const loadgen::Workload& workload,
                                     double rate);

}  // namespace k3::app
