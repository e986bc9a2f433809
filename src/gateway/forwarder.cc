#include "gateway/forwarder.h"

#include <mutex>
#include <nlohmann/json.hpp>

#include "api/api_error.h"
#include "base/log.h"

namespace k3::gateway {
namespace {

bool WorthRetrying(int status) { return status == 429 || status == 502 || status == 503; }

// Lives until the last attempt finishes (held by the current call's sink).
class Forwarding : public std::enable_shared_from_this<Forwarding> {
 public:
  Forwarding(boost::asio::io_context& io, api::HttpRequest request,
             std::shared_ptr<api::Responder> responder, ForwardHooks hooks, ForwardOptions options)
      : io_(io),
        request_(std::move(request)),
        responder_(std::move(responder)),
        hooks_(std::move(hooks)),
        options_(options) {}

  void Begin() {
    std::weak_ptr<Forwarding> weak = weak_from_this();
    responder_->OnClientGone([weak] {
      if (auto self = weak.lock()) self->ClientGone();
    });
    Attempt();
  }

 private:
  void Attempt() {
    auto pick = hooks_.pick(tried_);
    if (!pick) return NoWorker();
    current_ = *pick;
    tried_.push_back(pick->worker);
    awaiting_first_byte_ = true;
    hooks_.load(pick->worker, pick->uncached_tokens, 1);
    const bool last = static_cast<int>(tried_.size()) >= options_.max_attempts;
    CallSink sink;
    auto self = shared_from_this();
    sink.on_response = [self, last](int status, std::string body, std::string type) {
      self->FirstByte();
      if (!last && WorthRetrying(status)) {
        self->refused_status_ = status;
        return false;
      }
      self->responder_->Send(status, std::move(body), std::move(type));
      return true;
    };
    sink.on_stream_start = [self] {
      self->FirstByte();
      self->streamed_ = true;
      self->responder_->StartEventStream();
    };
    sink.on_event = [self](std::string framed) { self->responder_->SendEvent(std::move(framed)); };
    sink.on_finish = [self](CallOutcome outcome) { self->OnFinish(outcome); };
    std::lock_guard lock(mutex_);
    if (gone_) {
      hooks_.load(pick->worker, awaiting_first_byte_ ? -pick->uncached_tokens : 0, -1);
      return hooks_.finished(pick->worker, CallOutcome::kCancelled, int(tried_.size()));
    }
    refused_status_ = 0;
    call_ = StartUpstreamCall(io_, pick->address, request_, std::move(sink), options_.timeouts);
  }

  void FirstByte() {
    if (!awaiting_first_byte_) return;
    awaiting_first_byte_ = false;
    hooks_.load(current_.worker, -current_.uncached_tokens, 0);
  }

  void OnFinish(CallOutcome outcome) {
    hooks_.load(current_.worker, awaiting_first_byte_ ? -current_.uncached_tokens : 0, -1);
    awaiting_first_byte_ = false;
    {
      std::lock_guard lock(mutex_);
      call_.reset();
      if (gone_) outcome = CallOutcome::kCancelled;
    }
    if (outcome == CallOutcome::kUnreachable) {
      hooks_.unreachable(current_.worker, refused_status_);
      K3_LOG(kWarning) << request_.path << ": worker " << current_.worker << " ("
                       << current_.address.ToString() << ") "
                       << (refused_status_ ? "answered " + std::to_string(refused_status_)
                                           : std::string("unreachable"))
                       << "; trying another";
      return Attempt();
    }
    if (outcome == CallOutcome::kBroken) EndBrokenStream();
    if (outcome == CallOutcome::kDone && streamed_) {
      responder_->EndEventStream();
    }
    hooks_.finished(current_.worker, outcome, static_cast<int>(tried_.size()));
  }

  void EndBrokenStream() {
    const std::string message = "the worker serving this request went away mid-stream";
    if (options_.anthropic) {
      nlohmann::json error = {{"type", "error"},
                              {"error", {{"type", "api_error"}, {"message", message}}}};
      responder_->SendEvent("event: error\ndata: " + error.dump() + "\n\n");
    } else {
      nlohmann::json error = {{"error", {{"message", message}, {"type", "server_error"}}}};
      responder_->SendEvent("data: " + error.dump() + "\n\n");
    }
    responder_->EndEventStream();
  }

  void NoWorker() {
    const api::ApiError error{503, "no healthy worker can take this request", ""};
    responder_->Send(
        503, options_.anthropic ? api::AnthropicErrorBody(error) : api::OpenAiErrorBody(error));
    hooks_.finished(-1, CallOutcome::kUnreachable, static_cast<int>(tried_.size()));
  }

  void ClientGone() {
    std::lock_guard lock(mutex_);
    gone_ = true;
    if (call_) call_->Cancel();
  }

  boost::asio::io_context& io_;
  api::HttpRequest request_;
  std::shared_ptr<api::Responder> responder_;
  ForwardHooks hooks_;
  ForwardOptions options_;
  std::vector<int> tried_;
  Pick current_;
  bool awaiting_first_byte_ = false;
  bool streamed_ = false;
  int refused_status_ = 0;
  std::mutex mutex_;  // call_ and gone_ (ClientGone runs on the client's IO thread)
  std::shared_ptr<UpstreamCall> call_;
  bool gone_ = false;
};

}  // namespace

void Forward(boost::asio::io_context& io, const api::HttpRequest& request,
             std::shared_ptr<api::Responder> responder, ForwardHooks hooks,
             ForwardOptions options) {
  auto forwarding =
      std::make_shared<Forwarding>(io, request, std::move(responder), std::move(hooks), options);
  forwarding->Begin();
}

}  // namespace k3::gateway
