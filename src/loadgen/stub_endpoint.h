// A stand-in OpenAI streaming endpoint that answers every chat/completions request at once with
// max_tokens one-token chunks, a usage chunk and [DONE]. Behind the real HTTP server
// (`k3 bench serve --stub`), it measures the load generator's own ceiling: how many streamed
// tokens per second one client core can read when the server costs almost nothing.
#pragma once

#include <atomic>

#include "api/responder.h"

namespace k3::loadgen {

class StubEndpoint : public api::RequestHandler {
 public:
  void Handle(const api::HttpRequest& request, std::shared_ptr<api::Responder> responder) override;
  void SetDraining() override {}
  int64_t active_requests() const override { return 0; }
  int64_t requests() const { return requests_.load(); }

 private:
  std::atomic<int64_t> requests_{0};
};

}  // namespace k3::loadgen
