#include "gateway/upstream.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace k3::gateway {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr uint64_t kResponseBodyLimit = uint64_t{1} << 40;  // streams are long-lived

bool HopByHop(const std::string& name) {
  return name == "connection" || name == "keep-alive" || name == "transfer-encoding" ||
         name == "host" || name == "content-length" || name == "te" || name == "upgrade" ||
         name == "proxy-connection";
}

bhttp::request<bhttp::string_body> BuildRequest(const HostPort& to, const api::HttpRequest& in) {
  bhttp::request<bhttp::string_body> req;
  req.method_string(in.method);
  req.target(in.path);
  req.version(11);
  for (const auto& [name, value] : in.headers) {
    if (!HopByHop(name)) req.set(name, value);
  }
  req.set(bhttp::field::host, to.ToString());
  req.keep_alive(false);
  req.body() = in.body;
  req.prepare_payload();
  return req;
}

class BeastCall : public UpstreamCall, public std::enable_shared_from_this<BeastCall> {
 public:
  BeastCall(net::io_context& io, HostPort to, const api::HttpRequest& request, CallSink sink,
            CallTimeouts timeouts)
      : stream_(net::make_strand(io)),
        resolver_(stream_.get_executor()),
        to_(std::move(to)),
        request_(BuildRequest(to_, request)),
        sink_(std::move(sink)),
        timeouts_(timeouts) {}

  void Begin() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->Resolve(); });
  }

  void Cancel() override {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->cancelled_ = true;
      beast::error_code ignored;
      self->resolver_.cancel();
      self->stream_.socket().close(ignored);
    });
  }

 private:
  void Resolve() {
    if (cancelled_) return Finish(CallOutcome::kCancelled);
    resolver_.async_resolve(
        to_.host, std::to_string(to_.port),
        [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) return self->Fail();
          self->stream_.expires_after(self->timeouts_.connect);
          self->stream_.async_connect(results, [self](beast::error_code ec2, const auto&) {
            if (ec2) return self->Fail();
            self->Write();
          });
        });
  }

  void Write() {
    stream_.expires_after(timeouts_.total);
    bhttp::async_write(stream_, request_,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) return self->Fail();
                         self->ReadHeader();
                       });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->body_limit(kResponseBodyLimit);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               if (ec) return self->Fail();
                               self->OnHeader();
                             });
  }

  void OnHeader() {
    const auto& head = parser_->get();
    const std::string type(head[bhttp::field::content_type]);
    if (head.result_int() == 200 && type.starts_with("text/event-stream")) return ReadSome();
    bhttp::async_read(
        stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
          if (ec) return self->Fail();
          auto& message = self->parser_->get();
          const std::string content_type(message[bhttp::field::content_type]);
          const bool relayed = self->sink_.on_response(static_cast<int>(message.result_int()),
                                                       std::move(message.body()), content_type);
          self->Finish(relayed ? CallOutcome::kDone : CallOutcome::kUnreachable);
        });
  }

  // Relays every complete event ("...\n\n") the parser has produced; keeps the partial tail.
  void ReadSome() {
    bhttp::async_read_some(stream_, buffer_, *parser_,
                           [self = shared_from_this()](beast::error_code ec, size_t) {
                             self->RelayEvents();
                             if (ec) return self->Fail();
                             if (self->parser_->is_done()) {
                               if (!self->pending_.empty()) self->Relay(self->pending_);
                               if (!self->streaming_) {  // an empty stream
                                 self->streaming_ = true;
                                 self->sink_.on_stream_start();
                               }
                               return self->Finish(CallOutcome::kDone);
                             }
                             self->ReadSome();
                           });
  }

  void RelayEvents() {
    std::string& body = parser_->get().body();
    pending_ += body;
    body.clear();  // string_body appends at the current size, so the buffer stays small
    size_t start = 0;
    for (size_t end; (end = pending_.find("\n\n", start)) != std::string::npos; start = end + 2) {
      Relay(pending_.substr(start, end + 2 - start));
    }
    pending_.erase(0, start);
  }

  // The client's stream opens with the first event, not with the worker's headers: until then
  // nothing has reached the client and a failed worker can still be replaced.
  void Relay(std::string framed) {
    if (!streaming_) {
      streaming_ = true;
      sink_.on_stream_start();
    }
    sink_.on_event(std::move(framed));
  }

  void Fail() {
    if (cancelled_) return Finish(CallOutcome::kCancelled);
    Finish(streaming_ ? CallOutcome::kBroken : CallOutcome::kUnreachable);
  }

  void Finish(CallOutcome outcome) {
    if (finished_) return;
    finished_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
    sink_.on_finish(outcome);
  }

  beast::tcp_stream stream_;
  tcp::resolver resolver_;
  HostPort to_;
  bhttp::request<bhttp::string_body> request_;
  CallSink sink_;
  CallTimeouts timeouts_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
  std::string pending_;     // bytes of an event not yet complete
  bool streaming_ = false;  // an event has been relayed
  bool cancelled_ = false;
  bool finished_ = false;
};

base::Result<GetResult> Exchange(const HostPort& to, const std::string& method,
                                 const std::string& path, std::string body,
                                 std::chrono::milliseconds timeout) {
  net::io_context io;
  api::HttpRequest request{method, path, {{"content-type", "application/json"}}, std::move(body)};
  GetResult result;
  CallOutcome outcome = CallOutcome::kUnreachable;
  CallSink sink;
  sink.on_response = [&](int status, std::string text, std::string) {
    result = {status, std::move(text)};
    return true;
  };
  sink.on_stream_start = [] {};
  sink.on_event = [&](std::string framed) { result.body += framed; };
  sink.on_finish = [&](CallOutcome o) { outcome = o; };
  auto call = StartUpstreamCall(io, to, request, std::move(sink), {timeout, timeout});
  io.run();
  if (outcome != CallOutcome::kDone) {
    return base::Status(base::StatusCode::kUnavailable, method + " http://" + to.ToString() + path +
                                                            ": " + CallOutcomeName(outcome));
  }
  return result;
}

}  // namespace

const char* CallOutcomeName(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::kDone:
      return "done";
    case CallOutcome::kUnreachable:
      return "unreachable";
    case CallOutcome::kBroken:
      return "broken stream";
    case CallOutcome::kCancelled:
      return "cancelled";
  }
  return "?";
}

base::Result<HostPort> ParseHttpUrl(const std::string& url) {
  const std::string scheme = "http://";
  auto bad = [&](const std::string& why) {
    return base::InvalidArgument("worker URL '" + url + "': " + why + " (want http://HOST:PORT)");
  };
  if (!url.starts_with(scheme)) return bad("not http://");
  std::string rest = url.substr(scheme.size());
  if (rest.ends_with("/")) rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("no port");
  const std::string port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    return bad("bad port");
  }
  const int value = std::stoi(port);
  if (value <= 0 || value > 65535) return bad("port out of range");
  if (rest.find('/') != std::string::npos) return bad("a path is not allowed");
  return HostPort{rest.substr(0, colon), static_cast<uint16_t>(value)};
}

std::shared_ptr<UpstreamCall> StartUpstreamCall(net::io_context& io, const HostPort& to,
                                                const api::HttpRequest& request, CallSink sink,
                                                CallTimeouts timeouts) {
  auto call = std::make_shared<BeastCall>(io, to, request, std::move(sink), timeouts);
  call->Begin();
  return call;
}

base::Result<GetResult> HttpGet(const HostPort& to, const std::string& path,
                                std::chrono::milliseconds timeout) {
  return Exchange(to, "GET", path, "", timeout);
}

base::Result<GetResult> HttpPost(const HostPort& to, const std::string& path, std::string body,
                                 std::chrono::milliseconds timeout) {
  return Exchange(to, "POST", path, std::move(body), timeout);
}

}  // namespace k3::gateway
