// How a protocol handler answers: the HTTP layer implements it. Every method may be called from
// any thread (the engine thread streams); implementations hand the bytes to their IO thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace k3::api {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // without the query string
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

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
  // For the access log (any thread; default: ignored). The first generated token, and each
  // choice's end with the request's prompt tokens and that choice's completion tokens.
  virtual void NoteFirstToken() {}
  virtual void NoteChoice(int64_t /*prompt_tokens*/, int64_t /*completion_tokens*/) {}
};

// What the HTTP layer serves: the model's API (Service) or the router's front (gateway).
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // Answers every request exactly once through `responder` (possibly later, from another
  // thread). Never throws.
  virtual void Handle(const HttpRequest& request, std::shared_ptr<Responder> responder) = 0;
  // Draining (SIGTERM): /ready turns 503 and new generation requests get 503.
  virtual void SetDraining() = 0;
  // Requests still being answered (the drain waits for them).
  virtual int64_t active_requests() const = 0;
};

}  // namespace k3::api
