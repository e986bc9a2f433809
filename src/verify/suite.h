// `k3 verify`'s engine: runs every check area against one endpoint and returns the results in
// report order. The endpoint is any OpenAI/Anthropic-compatible server (k3 serve, k3 route, or
// another vendor's); nothing here depends on the server's own code.
#pragma once

#include <string>

#include "verify/check.h"
#include "verify/client.h"

namespace k3::verify {

struct SuiteOptions {
  ClientOptions client;
  std::string model;     // empty: the first model /v1/models lists
  int max_tokens = 200;  // budget for tool calls and JSON answers
};

CheckList RunSuite(const SuiteOptions& options);

}  // namespace k3::verify
