// The API service: routes HTTP requests to the OpenAI and Anthropic converters and the
// operational endpoints, runs them on the frontend, and answers through a Responder. Knows
// nothing of sockets (src/http drives it).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "api/openai_request.h"
#include "api/responder.h"
#include "serve/frontend.h"

namespace k3::api {

struct ServiceConfig {
  ApiOptions api;
  std::string api_key;  // empty: no authentication
  // GET /v1/kv_events: where this replica publishes its KV events, for a router (a JSON object:
  // publish, resync, block_size, checkpoints_required). Empty: 404 (no events published).
  std::string kv_events_info;
};

class Service : public RequestHandler {
 public:
  Service(serve::Frontend* frontend, ServiceConfig config);

  // Answers every request exactly once through `responder` (possibly later, from the engine
  // thread). Never throws.
  void Handle(const HttpRequest& request, std::shared_ptr<Responder> responder) override;

  // Draining (SIGTERM): /ready turns 503 and new generation requests get 503.
  void SetDraining() override { draining_ = true; }
  int64_t active_requests() const override { return frontend_->pending(); }

 private:
  void Dispatch(const HttpRequest& request, const std::shared_ptr<Responder>& responder);
  void Chat(const Json& body, const std::shared_ptr<Responder>& responder);
  void Completion(const Json& body, const std::shared_ptr<Responder>& responder);
  void Messages(const Json& body, const std::shared_ptr<Responder>& responder);
  void CountTokens(const Json& body, const std::shared_ptr<Responder>& responder);
  void Tokenize(const Json& body, const std::shared_ptr<Responder>& responder);
  void Detokenize(const Json& body, const std::shared_ptr<Responder>& responder);
  void Models(const std::shared_ptr<Responder>& responder);
  bool Authorized(const HttpRequest& request) const;

  // Sends an error in the protocol's shape and counts it.
  void Fail(const std::string& endpoint, bool anthropic, const ApiError& error,
            const std::shared_ptr<Responder>& responder);
  std::function<void(const ApiError&)> FailWith(const std::string& endpoint, bool anthropic,
                                                const std::shared_ptr<Responder>& responder);
  void Ok(const std::string& endpoint, std::string body,
          const std::shared_ptr<Responder>& responder);
  std::string NewId(const char* prefix);

  serve::Frontend* frontend_;
  ServiceConfig config_;
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> next_id_{1};
  uint64_t id_salt_;
};

}  // namespace k3::api
