// client_stream_fuzzer: arbitrary bytes as what an endpoint sends back to our client tools
// (`k3 bench serve`, `k3 verify`, `k3 route`): SSE events cut the way the upstream reader cuts
// them, read as OpenAI chunks (loadgen::ReadChunk), validated as chat and Anthropic streams
// (verify), judged by every `k3 bench soak` check (as a body and as a stream, for each request
// kind), and as Prometheus text and a /proc status file. Checks: nothing crashes, throws or leaks;
// a chunk either fails with an error type or leaves the record consistent (times ordered, counts >=
// 0).
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"
#include "loadgen/record.h"
#include "loadgen/server_metrics.h"
#include "loadgen/soak_health.h"
#include "loadgen/soak_requests.h"
#include "verify/sse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> events;
  size_t start = 0;
  for (size_t end; (end = bytes.find("\n\n", start)) != std::string::npos; start = end + 2) {
    events.push_back(bytes.substr(start, end + 2 - start));
  }
  if (start < bytes.size()) events.push_back(bytes.substr(start));

  k3::loadgen::RequestRecord record;
  double now = 1.0;
  for (const std::string& event : events) {
    if (!k3::loadgen::ReadChunk(event, now += 0.001, &record)) {
      K3_CHECK(!record.error.empty());
      break;
    }
  }
  K3_CHECK(record.first_token_s < 0 || record.first_token_s <= record.end_s);
  K3_CHECK(record.gaps_s.size() + (record.text_events > 0 ? 1 : 0) ==
           static_cast<size_t>(record.text_events));

  const auto parsed = k3::verify::ParseSse(events);
  k3::verify::ChatStreamSummary chat;
  k3::verify::ValidateChatStream(parsed, {}, &chat);
  k3::verify::ValidateChatStream(parsed, {true, "text_completion"}, &chat);
  k3::verify::MessageStreamSummary messages;
  k3::verify::ValidateMessageStream(parsed, &messages);
  k3::loadgen::ParsePrometheus(bytes);
  k3::loadgen::Leftovers(k3::loadgen::ParsePrometheus(bytes));
  k3::loadgen::ParseVmRssKib(bytes);
  std::mt19937_64 rng(size);
  for (int kind = 0; kind < static_cast<int>(k3::loadgen::SoakKind::kCount); ++kind) {
    const auto request = k3::loadgen::BuildSoakRequest(k3::loadgen::SoakKind(kind), {}, rng);
    for (const bool streamed : {false, true}) {
      for (const bool cancelled : {false, true}) {
        k3::loadgen::CheckSoakResponse(request,
                                       {request.expect_status, bytes, streamed, cancelled});
      }
    }
  }
  return 0;
}
