#include "http/cors.h"

#include <algorithm>

namespace k3::http {

std::string CorsPolicy::AllowOrigin(const std::string& origin) const {
  if (origin.empty()) return {};
  if (std::find(origins_.begin(), origins_.end(), "*") != origins_.end()) return "*";
  if (std::find(origins_.begin(), origins_.end(), origin) != origins_.end()) return origin;
  return {};
}

std::string CorsPolicy::ResponseHeaders(const std::string& origin) const {
  const std::string allowed = AllowOrigin(origin);
  if (allowed.empty()) return {};
  std::string lines = "Access-Control-Allow-Origin: " + allowed + "\r\n";
  // A specific origin makes the answer depend on the request's Origin: caches must know.
  if (allowed != "*") lines += "Vary: Origin\r\n";
  return lines;
}

std::string CorsPolicy::PreflightHeaders(const std::string& origin,
                                         const std::string& requested_headers) const {
  if (AllowOrigin(origin).empty()) return {};
  const std::string headers = requested_headers.empty()
                                  ? "authorization, content-type, x-api-key, anthropic-version"
                                  : requested_headers;
  return "Access-Control-Allow-Methods: GET, POST, HEAD, OPTIONS\r\n"
         "Access-Control-Allow-Headers: " +
         headers + "\r\nAccess-Control-Max-Age: 86400\r\n";
}

}  // namespace k3::http
