// What `k3 bench serve` records per request, and the SSE chunk reader that fills it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace k3::loadgen {

struct RequestRecord {
  int conversation = 0, turn = 0;
  double start_s = 0;         // since the run began
  double first_token_s = -1;  // first event carrying text (content or reasoning)
  double end_s = 0;
  std::vector<double> gaps_s;  // between successive text events (inter-token latency)
  int64_t prompt_tokens = 0;   // from usage (0 when the server sent none)
  int64_t output_tokens = 0;   // usage.completion_tokens, else the text events counted
  int64_t cached_tokens = 0;   // usage.prompt_tokens_details.cached_tokens
  int64_t text_events = 0;
  std::string reply;  // the visible reply (content), for the next turn
  std::string error;  // empty: success; else a short type ("http_503", "broken", ...)
  bool ok() const { return error.empty(); }
  double ttft() const { return first_token_s >= 0 ? first_token_s - start_s : -1; }
  double latency() const { return end_s - start_s; }
  // (latency - ttft) / (tokens - 1); -1 when undefined (one token or none).
  double tpot() const;
};

// Reads one framed SSE event of an OpenAI chat or completions stream into `r` at time `now_s`.
// Returns false on an error event (then r->error is set).
bool ReadChunk(const std::string& framed, double now_s, RequestRecord* r);

}  // namespace k3::loadgen
