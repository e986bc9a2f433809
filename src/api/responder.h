// How a protocol handler answers: the HTTP layer implements it. Every method may be called from
// any thread (the engine thread streams); implementations hand the bytes to their IO thread.
#pragma once

#include <functional>
#include <string>

namespace k3::api {

class Responder {
 public:
  virtual ~Responder() = default;
  // A whole response with a JSON (or other) body.
  virtual void Send(int http_status, std::string body,
                    std::string content_type = "application/json") = 0;
  // 200 with text/event-stream; then events (already framed), then End().
  virtual void StartEventStream() = 0;
  virtual void SendEvent(std::string framed) = 0;
  virtual void EndEventStream() = 0;
  // Called once if the client disconnects before the response ended (cancel the work).
  virtual void OnClientGone(std::function<void()> callback) = 0;
};

}  // namespace k3::api
