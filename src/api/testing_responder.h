// For tests: a Responder that keeps what it was sent, and a helper that dispatches one request
// and returns the answer (for handlers that answer before returning).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/responder.h"
#include "api/route_table.h"

namespace k3::api::testing {

struct Answer {
  int status = 0;  // 0: nothing was sent
  std::string body;
  std::string content_type;
  std::vector<std::string> events;  // an event stream's framed events
  bool ended = false;               // Send, or EndEventStream after a stream
};

class CapturingResponder : public Responder {
 public:
  void Send(int http_status, std::string body, std::string content_type) override {
    answer.status = http_status;
    answer.body = std::move(body);
    answer.content_type = std::move(content_type);
    answer.ended = true;
  }
  void StartEventStream() override { answer.status = 200; }
  void SendEvent(std::string framed) override { answer.events.push_back(std::move(framed)); }
  void EndEventStream() override { answer.ended = true; }
  void OnClientGone(std::function<void()>) override {}

  Answer answer;
};

inline Answer Capture(const RouteTable& table, const HttpRequest& request) {
  auto responder = std::make_shared<CapturingResponder>();
  table.Dispatch(request, responder);
  return responder->answer;
}

inline Answer Capture(RequestHandler& handler, const HttpRequest& request) {
  auto responder = std::make_shared<CapturingResponder>();
  handler.Handle(request, responder);
  return responder->answer;
}

}  // namespace k3::api::testing
