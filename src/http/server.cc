#include "http/server.h"

#include <atomic>
#include <thread>
#include <vector>

#include "base/log.h"
#include "http/session.h"

namespace k3::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Server::Impl {
  Impl(ServerConfig c, api::RequestHandler* s)
      : config(std::move(c)), service(s), acceptor(net::make_strand(io)), drain_timer(io) {}

  void Accept() {
    acceptor.async_accept(net::make_strand(io),
                          [this](boost::system::error_code ec, tcp::socket socket) {
                            if (ec) {
                              if (ec != net::error::operation_aborted && acceptor.is_open())
                                Accept();
                              return;
                            }
                            socket.set_option(tcp::no_delay(true));
                            std::make_shared<Session>(std::move(socket), settings)->Start();
                            Accept();
                          });
  }

  void BeginDrain() {
    if (draining.exchange(true)) return;
    K3_LOG(kInfo) << "shutting down: no new connections; waiting up to "
                  << config.drain_timeout.count() << " s for " << service->active_requests()
                  << " running request(s)";
    boost::system::error_code ec;
    acceptor.close(ec);
    service->SetDraining();
    drain_deadline = std::chrono::steady_clock::now() + config.drain_timeout;
    PollDrain();
  }

  void PollDrain() {
    const bool idle = service->active_requests() == 0;
    if (idle || std::chrono::steady_clock::now() >= drain_deadline) {
      if (!idle) {
        K3_LOG(kWarning) << "drain timeout: " << service->active_requests()
                         << " request(s) still running are dropped";
      }
      // Let the last responses reach the sockets before stopping.
      drain_timer.expires_after(std::chrono::milliseconds(100));
      drain_timer.async_wait([this](boost::system::error_code) { io.stop(); });
      return;
    }
    drain_timer.expires_after(std::chrono::milliseconds(50));
    drain_timer.async_wait([this](boost::system::error_code ec) {
      if (!ec) PollDrain();
    });
  }

  ServerConfig config;
  api::RequestHandler* service;
  net::io_context io;
  tcp::acceptor acceptor;
  net::steady_timer drain_timer;
  std::chrono::steady_clock::time_point drain_deadline;
  std::atomic<bool> draining{false};
  std::atomic<int64_t> connections{0};
  CorsPolicy cors;
  SessionSettings settings;
};

Server::Server(ServerConfig config, api::RequestHandler* service)
    : impl_(std::make_unique<Impl>(std::move(config), service)) {
  Impl* impl = impl_.get();
  impl->cors = CorsPolicy(impl->config.allow_origins);
  impl->settings = {service,
                    impl->config.body_limit,
                    impl->config.idle_timeout,
                    [impl](int delta) { impl->connections += delta; },
                    &impl->cors,
                    impl->config.access_log};
}

Server::~Server() = default;

base::Status Server::Listen() {
  boost::system::error_code ec;
  const auto address = net::ip::make_address(impl_->config.host, ec);
  if (ec) return base::InvalidArgument("bad --host '" + impl_->config.host + "': " + ec.message());
  const tcp::endpoint endpoint(address, impl_->config.port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return base::Status(base::StatusCode::kUnavailable,
                        "cannot listen on " + impl_->config.host + ":" +
                            std::to_string(impl_->config.port) + ": " + ec.message());
  }
  return base::Status::Ok();
}

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

int64_t Server::open_connections() const { return impl_->connections.load(); }

void Server::Run() {
  impl_->Accept();
  std::vector<std::thread> extra;
  for (int i = 1; i < impl_->config.io_threads; ++i) {
    extra.emplace_back([this] { impl_->io.run(); });
  }
  impl_->io.run();
  for (auto& t : extra) t.join();
}

void Server::Shutdown() {
  net::post(impl_->io, [impl = impl_.get()] { impl->BeginDrain(); });
}

}  // namespace k3::http
