// The verifier's HTTP client: blocking requests to the endpoint under test, built on the
// gateway's upstream call (one connection per request, Boost.Beast). A streamed answer (200
// text/event-stream) is collected event by event, exactly as framed by the server, so the SSE
// validators see the raw framing. Not thread-safe; one request at a time.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "gateway/upstream.h"

namespace k3::verify {

enum class Auth {
  kKey,    // the configured key as `Authorization: Bearer` and `x-api-key` (none if no key)
  kNone,   // no credentials at all
  kWrong,  // a key that cannot be right
};

struct Reply {
  int status = 0;    // HTTP status; 0 when the request did not get an answer (see error)
  std::string body;  // a whole response's body (empty for a stream)
  bool streamed = false;
  std::vector<std::string> events;  // the stream's events, each "...\n\n" as framed
  std::string error;                // transport failure, empty otherwise
  nlohmann::json json;              // body parsed when it is JSON, discarded otherwise
  bool is_json = false;
};

struct ClientOptions {
  gateway::HostPort server;
  std::string api_key;
  std::chrono::milliseconds timeout{120000};  // per request (a whole generation)
};

class Client {
 public:
  explicit Client(ClientOptions options) : options_(std::move(options)) {}
  Reply Send(const std::string& method, const std::string& path, std::string body,
             Auth auth = Auth::kKey);
  Reply Post(const std::string& path, const nlohmann::json& body, Auth auth = Auth::kKey) {
    return Send("POST", path, body.dump(), auth);
  }
  Reply Get(const std::string& path, Auth auth = Auth::kKey) { return Send("GET", path, "", auth); }

 private:
  ClientOptions options_;
};

// "HTTP 400 {\"error\":...}" cut to a readable length, for check details.
std::string Describe(const Reply& reply);

}  // namespace k3::verify
