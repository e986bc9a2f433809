#include "http/session.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdio>

#include "api/api_error.h"
#include "base/log.h"

namespace k3::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class SessionResponder : public api::Responder {
 public:
  SessionResponder(std::shared_ptr<Session> session, std::shared_ptr<RequestStats> stats)
      : session_(std::move(session)), stats_(std::move(stats)) {}
  void Send(int status, std::string body, std::string content_type) override {
    session_->Send(status, std::move(body), std::move(content_type));
  }
  void StartEventStream() override { session_->StartEventStream(); }
  void SendEvent(std::string framed) override { session_->SendEvent(std::move(framed)); }
  void EndEventStream() override { session_->EndEventStream(); }
  void OnClientGone(std::function<void()> callback) override {
    session_->OnClientGone(std::move(callback));
  }
  void NoteFirstToken() override { stats_->NoteFirstToken(); }
  void NoteChoice(int64_t prompt, int64_t completion) override {
    stats_->NoteChoice(prompt, completion);
  }

 private:
  std::shared_ptr<Session> session_;
  std::shared_ptr<RequestStats> stats_;  // this request's, even if the connection moved on
};

std::string Chunk(const std::string& data) {
  char size[20];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

}  // namespace

Session::Session(tcp::socket socket, const SessionSettings& settings)
    : stream_(std::move(socket)), settings_(settings) {
  settings_.count_connection(+1);
}

Session::~Session() { settings_.count_connection(-1); }

void Session::Start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(); });
}

void Session::ReadRequest() {
  if (closed_) return;
  parser_.emplace();
  parser_->body_limit(settings_.body_limit);
  parser_->header_limit(64 * 1024);
  stream_.expires_after(settings_.idle_timeout);
  bhttp::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
}

void Session::OnRead(beast::error_code ec) {
  if (ec == bhttp::error::body_limit) {
    keep_alive_ = false;
    responding_ = true;
    Send(413,
         api::OpenAiErrorBody({413,
                               "the request body is larger than the limit of " +
                                   std::to_string(settings_.body_limit) + " bytes",
                               ""}),
         "application/json");
    return;
  }
  if (ec) return Close();  // end of stream, timeout, reset or a malformed request
  stream_.expires_never();
  auto& message = parser_->get();
  stats_ = std::make_shared<RequestStats>();
  method_ = std::string(message.method_string());
  path_ = std::string(message.target()).substr(0, message.target().find('?'));
  const std::string origin(message[bhttp::field::origin]);
  cors_headers_ = settings_.cors ? settings_.cors->ResponseHeaders(origin) : std::string();
  keep_alive_ = message.keep_alive();
  version_ = message.version();
  if (AnswerPreflight(message)) return;
  // HEAD is GET without the body (RFC 9110 9.3.2): routed as GET, headers only.
  head_only_ = message.method() == bhttp::verb::head;
  api::HttpRequest request;
  request.method = head_only_ ? "GET" : method_;
  const std::string target(message.target());
  request.path = target.substr(0, target.find('?'));
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers[name] = std::string(field.value());
  }
  request.body = std::move(message.body());
  responding_ = true;
  response_queued_ = false;
  ++request_serial_;
  on_gone_ = nullptr;
  settings_.service->Handle(request,
                            std::make_shared<SessionResponder>(shared_from_this(), stats_));
  WatchForDisconnect();
}

void Session::WatchForDisconnect() {
  if (watching_ || closed_ || !responding_ || response_queued_) return;
  watching_ = true;
  const uint64_t serial = request_serial_;
  stream_.socket().async_wait(tcp::socket::wait_read,
                              [self = shared_from_this(), serial](beast::error_code ec) {
                                self->watching_ = false;
                                if (ec || self->closed_ || !self->responding_) return;
                                // A watch left over from an earlier request on this keep-alive
                                // connection woke up because the current request's bytes arrived
                                // (and were read): watch again.
                                if (serial != self->request_serial_)
                                  return self->WatchForDisconnect();
                                switch (self->PeekConnection()) {
                                  case Peek::kClosed:
                                    return self->ClientGone();
                                  case Peek::kNothing:  // a wakeup with nothing to read
                                    return self->WatchForDisconnect();
                                  case Peek::kData:  // a pipelined request: read after this one
                                    return;
                                }
                              });
}

// A readable socket holds data, or its end of stream, or an error; a non-blocking one-byte peek
// tells them apart without consuming anything (available() == 0 alone cannot tell an orderly
// close from a wakeup with nothing to read).
Session::Peek Session::PeekConnection() {
  char byte = 0;
  const ssize_t n = ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return Peek::kData;
  if (n == 0) return Peek::kClosed;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Peek::kNothing : Peek::kClosed;
}

std::string Session::Head(int status, const std::string& content_type,
                          std::optional<size_t> length) const {
  std::string head = version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  head += std::to_string(status) + " " +
          std::string(bhttp::obsolete_reason(static_cast<bhttp::status>(status))) + "\r\n";
  head += "Server: k3serve\r\n" + cors_headers_;
  if (!content_type.empty()) head += "Content-Type: " + content_type + "\r\n";
  if (length) {
    head += "Content-Length: " + std::to_string(*length) + "\r\n";
  } else if (chunked_) {
    head += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
  } else {
    head += "Cache-Control: no-cache\r\n";
  }
  head += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return head;
}

void Session::Send(int status, std::string body, std::string content_type) {
  net::post(stream_.get_executor(), [self = shared_from_this(), status, body = std::move(body),
                                     type = std::move(content_type)]() mutable {
    if (self->closed_ || !self->responding_ || self->response_queued_) return;
    self->status_ = status;
    std::string bytes = self->Head(status, type, body.size());
    if (!self->head_only_) bytes += body;
    self->Enqueue(std::move(bytes), /*ends_response=*/true);
  });
}

bool Session::AnswerPreflight(const bhttp::request<bhttp::string_body>& message) {
  if (message.method() != bhttp::verb::options || !settings_.cors || !settings_.cors->enabled())
    return false;
  responding_ = true;
  response_queued_ = false;
  ++request_serial_;
  status_ = 204;
  const std::string extra = settings_.cors->PreflightHeaders(
      std::string(message[bhttp::field::origin]),
      std::string(message[bhttp::field::access_control_request_headers]));
  std::string head = Head(204, "", std::nullopt);
  head.insert(head.size() - 2, extra);  // before the blank line that ends the head
  Enqueue(std::move(head), /*ends_response=*/true);
  return true;
}

void Session::LogAccess() {
  if (!settings_.access_log || !stats_) return;
  K3_LOG(kInfo) << FormatAccessLine(method_, path_, status_, *stats_,
                                    std::chrono::steady_clock::now());
  stats_.reset();
}

void Session::StartEventStream() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->closed_ || !self->responding_ || self->response_queued_) return;
    self->status_ = 200;
    self->chunked_ = self->version_ != 10;
    if (!self->chunked_) self->keep_alive_ = false;  // HTTP/1.0: the close ends the stream
    self->Enqueue(self->Head(200, "text/event-stream", std::nullopt), false);
  });
}

void Session::SendEvent(std::string framed) {
  net::post(stream_.get_executor(), [self = shared_from_this(), data = std::move(framed)] {
    if (self->closed_ || !self->responding_ || self->response_queued_) return;
    self->Enqueue(self->chunked_ ? Chunk(data) : data, false);
  });
}

void Session::EndEventStream() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->closed_ || !self->responding_ || self->response_queued_) return;
    self->Enqueue(self->chunked_ ? "0\r\n\r\n" : "", true);
    self->chunked_ = false;
  });
}

void Session::OnClientGone(std::function<void()> callback) {
  net::post(stream_.get_executor(), [self = shared_from_this(), cb = std::move(callback)] {
    if (self->closed_) return cb();
    if (self->responding_ && !self->response_queued_) self->on_gone_ = cb;
  });
}

void Session::Enqueue(std::string bytes, bool ends_response) {
  if (ends_response) response_queued_ = true;
  if (!bytes.empty()) queue_.push_back(std::move(bytes));
  if (!writing_) WriteNext();
}

void Session::WriteNext() {
  if (closed_) return;
  if (queue_.empty()) {
    writing_ = false;
    if (response_queued_ && responding_) {
      responding_ = false;
      LogAccess();
      on_gone_ = nullptr;
      if (keep_alive_) return ReadRequest();
      beast::error_code ec;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      return Close();
    }
    return;
  }
  writing_ = true;
  net::async_write(stream_.socket(), net::buffer(queue_.front()),
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->writing_ = false;
                     if (self->closed_) {
                       self->queue_.clear();  // the buffer in flight is released only now
                       return;
                     }
                     if (ec) return self->ClientGone();
                     self->queue_.pop_front();
                     self->WriteNext();
                   });
}

void Session::ClientGone() {
  if (closed_) return;
  if (responding_) {
    status_ = 499;  // as nginx logs a client that closed the connection before the answer
    LogAccess();
  }
  auto callback = std::move(on_gone_);
  on_gone_ = nullptr;
  Close();
  if (callback) callback();
}

void Session::Close() {
  if (closed_) return;
  closed_ = true;
  if (!writing_) queue_.clear();  // else the write in flight still reads queue_.front()
  beast::error_code ec;
  stream_.socket().close(ec);
}

}  // namespace k3::http
