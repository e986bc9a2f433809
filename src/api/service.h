// The API service (`k3 serve`): binds the route table's endpoints (api/route_table.h) to the
// OpenAI and Anthropic converters and the operational endpoints, runs them on the frontend, and
// answers through a Responder. Knows nothing of sockets (src/http drives it).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "api/openai_request.h"
#include "api/responder.h"
#include "api/responses_store.h"
#include "api/route_table.h"
#include "serve/frontend.h"

namespace k3::api {

struct ServiceConfig {
  ApiOptions api;
  std::string api_key;  // empty: no authentication
  // GET /v1/kv_events: where this replica publishes its KV events, for a router (a JSON object:
  // publish, resync, block_size, checkpoints_required). Empty: 404 (no events published).
  std::string kv_events_info;
  // POST /v1/responses: how many finished responses to keep for previous_response_id and
  // item_reference (0: none; both are then a 400).
  size_t responses_store = 0;
};

class Service : public RequestHandler {
 public:
  Service(serve::Frontend* frontend, ServiceConfig config);

  // Answers every request exactly once through `responder` (possibly later, from the engine
  // thread). Never throws.
  void Handle(const HttpRequest& request, std::shared_ptr<Responder> responder) override {
    routes_.Dispatch(request, responder);
  }

  // Draining (SIGTERM): /ready turns 503 and new generation requests get 503.
  void SetDraining() override { routes_.SetDraining(); }
  int64_t active_requests() const override { return frontend_->pending(); }

 private:
  using Reply = std::shared_ptr<Responder>;
  // A POST handler of a JSON body (an invalid body is a 400 in the route's dialect).
  using BodyHandler = void (Service::*)(const Json& body, const Reply& responder);

  void BindRoutes();
  RouteHandler WithBody(BodyHandler handler);
  void Chat(const Json& body, const Reply& responder);
  void Completion(const Json& body, const Reply& responder);
  void Messages(const Json& body, const Reply& responder);
  void Responses(const Json& body, const Reply& responder);
  void CountTokens(const Json& body, const Reply& responder);
  void Tokenize(const Json& body, const Reply& responder);
  bool TokenizeBody(const Json& body, std::vector<text::TokenId>* ids, ApiError* error);
  void Detokenize(const Json& body, const Reply& responder);
  void Models(const HttpRequest& request, const Reply& responder);
  void KvEvents(const Reply& responder);
  bool Authorized(const HttpRequest& request) const;

  // Sends an error in the dialect's shape and counts it.
  void Fail(const std::string& endpoint, Dialect dialect, const ApiError& error,
            const Reply& responder);
  std::function<void(const ApiError&)> FailWith(const std::string& endpoint, Dialect dialect,
                                                const Reply& responder);
  void Ok(const std::string& endpoint, std::string body, const Reply& responder);
  std::string NewId(const char* prefix);

  serve::Frontend* frontend_;
  ServiceConfig config_;
  RouteTable routes_;
  std::atomic<uint64_t> next_id_{1};
  uint64_t id_salt_;
  std::unique_ptr<ResponsesStore> responses_store_;  // null: --responses-store 0
};

}  // namespace k3::api
