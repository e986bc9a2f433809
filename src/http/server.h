// The HTTP/1.1 server (Boost.Beast on Boost.Asio): keep-alive, a request body limit, chunked
// Server-Sent Events, client-disconnect detection, and a graceful drain on shutdown. Every
// request goes to an api::RequestHandler (the model's API or the router's front end); this layer
// knows nothing of models or protocols.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/responder.h"
#include "base/status.h"

namespace k3::http {

struct ServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;  // 0 = any free port (see Server::port())
  size_t body_limit = 32u << 20;
  int io_threads = 1;
  std::chrono::seconds idle_timeout{75};   // keep-alive connection with no request
  std::chrono::seconds drain_timeout{30};  // on shutdown: wait this long for running requests
  std::vector<std::string> allow_origins;  // CORS (--allow-origin): origins or "*"; empty: off
  bool access_log = true;                  // an info line per request (--disable-access-log)
};

class Server {
 public:
  Server(ServerConfig config, api::RequestHandler* service);
  ~Server();

  // Binds and listens (errors: address in use, bad host).
  base::Status Listen();
  uint16_t port() const;
  // Serves until Shutdown() has drained; blocks the calling thread (plus io_threads - 1 more).
  void Run();
  // Thread- and signal-handler-safe request to stop: no new connections, generation requests get
  // 503, running ones finish (up to drain_timeout), then Run() returns.
  void Shutdown();
  int64_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace k3::http
