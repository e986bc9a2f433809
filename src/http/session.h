// One client connection: reads requests (Beast parser, body limit), hands them to the service,
// writes responses from a FIFO queue, frames event streams as HTTP/1.1 chunks, and notices a
// client that goes away mid-response (socket readable with nothing to read = EOF). All state is
// touched on the connection's strand only; Responder calls from other threads are posted there.
#pragma once

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including <utility>.
#include <utility>
// clang-format off
#include <boost/asio.hpp>
// clang-format on
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "api/responder.h"
#include "http/access_log.h"
#include "http/cors.h"

namespace k3::http {

struct SessionSettings {
  api::RequestHandler* service;
  size_t body_limit;
  std::chrono::seconds idle_timeout;
  std::function<void(int delta)> count_connection;  // +1 on open, -1 on close
  const CorsPolicy* cors = nullptr;                 // null or disabled: no CORS
  bool access_log = true;                           // one info line per request
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket socket, const SessionSettings& settings);
  ~Session();
  void Start();

  // The Responder side (any thread).
  void Send(int status, std::string body, std::string content_type);
  void StartEventStream();
  void SendEvent(std::string framed);
  void EndEventStream();
  void OnClientGone(std::function<void()> callback);

 private:
  void ReadRequest();
  void OnRead(boost::beast::error_code ec);
  void WatchForDisconnect();
  enum class Peek { kData, kClosed, kNothing };
  Peek PeekConnection();
  void Enqueue(std::string bytes, bool ends_response);
  void WriteNext();
  void ClientGone();
  void Close();
  std::string Head(int status, const std::string& content_type, std::optional<size_t> length) const;
  bool AnswerPreflight(const boost::beast::http::request<boost::beast::http::string_body>& message);
  void LogAccess();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  SessionSettings settings_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool responding_ = false;       // a request is being answered
  bool response_queued_ = false;  // its last bytes are in the queue
  bool keep_alive_ = true;
  bool chunked_ = false;
  bool watching_ = false;
  bool closed_ = false;
  unsigned version_ = 11;
  uint64_t request_serial_ = 0;  // which request a disconnect watch belongs to
  std::function<void()> on_gone_;
  // The request being answered: for HEAD (answered like GET, without the body), CORS and the log.
  bool head_only_ = false;
  std::string method_, path_, cors_headers_;
  int status_ = 0;
  std::shared_ptr<RequestStats> stats_;
};

}  // namespace k3::http
