// Cross-origin requests (`--allow-origin`): which browser origins may call the API, the preflight
// answer to OPTIONS, and the header every response to an allowed origin carries. With no origins
// configured CORS is off: OPTIONS is routed like any other method (404) and no header is added.
#pragma once

#include <string>
#include <vector>

namespace k3::http {

class CorsPolicy {
 public:
  CorsPolicy() = default;
  // Each entry an origin ("https://app.example.com") or "*" (any origin).
  explicit CorsPolicy(std::vector<std::string> origins) : origins_(std::move(origins)) {}

  bool enabled() const { return !origins_.empty(); }
  // The Access-Control-Allow-Origin value for a request with this Origin header; empty when the
  // origin is not allowed (or the request has none).
  std::string AllowOrigin(const std::string& origin) const;
  // Header lines (each ending in CRLF) for a response to `origin`; empty when not allowed.
  std::string ResponseHeaders(const std::string& origin) const;
  // Extra header lines of the 204 answer to a preflight; `requested_headers` is the request's
  // Access-Control-Request-Headers (echoed, so SDK headers such as x-stainless-* pass).
  std::string PreflightHeaders(const std::string& origin,
                               const std::string& requested_headers) const;

 private:
  std::vector<std::string> origins_;
};

}  // namespace k3::http
