// Upstream calls: one HTTP/1.1 request from the router to a worker, answered either as a whole
// response or as a Server-Sent Events stream relayed event by event (Boost.Beast, asynchronous,
// on the router's IO context; thousands of calls share its threads).
//
// What a caller may do after a failure depends on how far the call got, so the outcome says it:
// kUnreachable means the client has been told nothing (no status, no byte), so the request may be
// sent to another worker; kBroken means part of a stream was already relayed. A stream counts as
// started at its first event (a worker sends its headers before the prefill), so a worker that
// dies while computing the prompt still leaves the request free to go elsewhere.
#pragma once

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>.
#include <utility>
// clang-format off
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/responder.h"
#include "base/result.h"

namespace k3::gateway {

struct HostPort {
  std::string host;  // an IP address or a name
  uint16_t port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
};
// "http://HOST:PORT" (optional trailing "/"). INVALID_ARGUMENT otherwise (https is not supported).
base::Result<HostPort> ParseHttpUrl(const std::string& url);

enum class CallOutcome {
  kDone,         // a whole response or a complete stream was relayed (any HTTP status)
  kUnreachable,  // connect/send/receive failed before any response byte: nothing relayed
  kBroken,       // the worker went away after an event was relayed (the client saw part of it)
  kCancelled,    // Cancel() (the client went away)
};
const char* CallOutcomeName(CallOutcome outcome);

// Where a call's response goes. Exactly one of on_response / (on_stream_start, on_event*) runs,
// then on_finish; all on the IO thread.
struct CallSink {
  // A non-streamed response. Return false to withhold it (e.g. a 503 worth retrying elsewhere):
  // the call then finishes as kUnreachable.
  std::function<bool(int status, std::string body, std::string content_type)> on_response;
  std::function<void()> on_stream_start;  // 200 text/event-stream, just before its first event
  std::function<void(std::string framed)> on_event;  // one "...\n\n" event, as framed upstream
  std::function<void(CallOutcome)> on_finish;
};

struct CallTimeouts {
  std::chrono::milliseconds connect{2000};
  std::chrono::milliseconds total{std::chrono::hours(1)};  // a whole generation
};

// A call in flight. The IO context keeps it alive until on_finish has run.
class UpstreamCall {
 public:
  virtual ~UpstreamCall() = default;
  // Any thread: closes the connection (the worker sees the client go and stops generating).
  virtual void Cancel() = 0;
};

// Starts `request` to `to` (hop-by-hop headers dropped, one connection per call).
std::shared_ptr<UpstreamCall> StartUpstreamCall(boost::asio::io_context& io, const HostPort& to,
                                                const api::HttpRequest& request, CallSink sink,
                                                CallTimeouts timeouts = {});

// A blocking GET for health checks and discovery (its own short-lived IO context).
struct GetResult {
  int status = 0;
  std::string body;
};
base::Result<GetResult> HttpGet(const HostPort& to, const std::string& path,
                                std::chrono::milliseconds timeout);
base::Result<GetResult> HttpPost(const HostPort& to, const std::string& path, std::string body,
                                 std::chrono::milliseconds timeout);

}  // namespace k3::gateway
