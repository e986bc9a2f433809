// The HTTP options `k3 serve` and `k3 route` share: CORS origins and the access log.
#pragma once

#include <string>
#include <vector>

#include "http/server.h"

namespace CLI {
class App;
}

namespace k3::app {

struct HttpFlags {
  std::vector<std::string> allow_origins;
  bool disable_access_log = false;
};

void AddHttpFlags(CLI::App& app, HttpFlags* flags);
void ApplyHttpFlags(const HttpFlags& flags, http::ServerConfig* config);

}  // namespace k3::app
