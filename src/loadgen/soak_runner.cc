#include "loadgen/soak_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include "loadgen/summary.h"

namespace k3::loadgen {
namespace {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

// One rotation of kinds per client: generations weighted over the checks that cost little.
std::vector<SoakKind> Rotation(bool oversize) {
  std::vector<SoakKind> r;
  auto add = [&](SoakKind k, int times) { r.insert(r.end(), size_t(times), k); };
  add(SoakKind::kChat, 3);
  add(SoakKind::kChatStream, 3);
  add(SoakKind::kCompletion, 2);
  add(SoakKind::kMessagesStream, 2);
  add(SoakKind::kCancel, 2);
  add(SoakKind::kToolCall, 1);
  add(SoakKind::kStructured, 1);
  add(SoakKind::kMultiChoice, 1);
  add(SoakKind::kBadJson, 1);
  add(SoakKind::kBadField, 1);
  add(SoakKind::kBadMessages, 1);
  add(SoakKind::kUnknownModel, 1);
  if (oversize) add(SoakKind::kOversize, 1);
  return r;
}

class Soak {
 public:
  Soak(const SoakOptions& o, const std::function<void(const SoakProgress&)>& progress)
      : options_(o),
        on_progress_(progress),
        rss_timer_(io_),
        progress_timer_(io_),
        end_timer_(io_) {}

  SoakResult Go() {
    start_ = Clock::now();
    SampleRss();
    ArmRss();
    ArmProgress();
    end_timer_.expires_after(Seconds(options_.duration_s));
    end_timer_.async_wait([this](boost::system::error_code) { Stop(); });
    for (int c = 0; c < std::max(1, options_.clients); ++c) {
      clients_.push_back({std::mt19937_64(options_.seed * 7919 + uint64_t(c)), {}, 0});
      Next(c);
    }
    io_.run();
    result_.duration_s = Now();
    SampleRss();
    return std::move(result_);
  }

 private:
  struct Client {
    std::mt19937_64 rng;
    std::vector<SoakKind> rotation;
    size_t next = 0;
  };
  struct Call {
    SoakRequest request;
    SoakResponse response;
    double start_s = 0;
    int events = 0;
    std::shared_ptr<gateway::UpstreamCall> handle;
  };

  static Clock::duration Seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  double Now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void Stop() {
    stopping_ = true;
    if (in_flight_ == 0) Finish();
  }
  void Finish() {
    rss_timer_.cancel();
    progress_timer_.cancel();
    end_timer_.cancel();
  }

  void SampleRss() {
    if (options_.server_pid <= 0) return;
    if (auto kib = ReadRssKib(options_.server_pid)) result_.rss.push_back({Now(), *kib});
  }
  void ArmRss() {
    if (options_.server_pid <= 0) return;
    rss_timer_.expires_after(Seconds(options_.rss_every_s));
    rss_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      SampleRss();
      ArmRss();
    });
  }
  void ArmProgress() {
    if (!on_progress_ || options_.progress_every_s <= 0) return;
    progress_timer_.expires_after(Seconds(options_.progress_every_s));
    progress_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      on_progress_({Now(), done_, result_.failed(), in_flight_,
                    result_.rss.empty() ? 0 : result_.rss.back().kib});
      ArmProgress();
    });
  }

  SoakKind PickKind(Client& c) {
    if (c.next >= c.rotation.size()) {
      c.rotation = Rotation(options_.context.max_model_len > 0);
      std::shuffle(c.rotation.begin(), c.rotation.end(), c.rng);
      c.next = 0;
    }
    return c.rotation[c.next++];
  }

  void Next(int client) {
    if (stopping_) {
      if (in_flight_ == 0) Finish();
      return;
    }
    Client& c = clients_[size_t(client)];
    auto call = std::make_shared<Call>();
    call->request = BuildSoakRequest(PickKind(c), options_.context, c.rng);
    call->start_s = Now();
    ++result_.kinds[size_t(call->request.kind)].sent;
    ++in_flight_;
    api::HttpRequest http;
    http.method = "POST";
    http.path = call->request.path;
    http.headers["content-type"] = "application/json";
    if (call->request.path == "/v1/messages") http.headers["anthropic-version"] = "2023-06-01";
    if (!options_.api_key.empty()) http.headers["authorization"] = "Bearer " + options_.api_key;
    http.body = call->request.body;
    gateway::CallSink sink;
    sink.on_response = [call](int status, std::string body, std::string) {
      call->response.status = status;
      call->response.body = std::move(body);
      return true;
    };
    sink.on_stream_start = [call] {
      call->response.status = 200;
      call->response.streamed = true;
    };
    sink.on_event = [this, call](std::string framed) {
      call->response.body += framed;
      if (++call->events == call->request.cancel_after_events && call->handle) {
        call->response.cancelled = true;
        net::post(io_, [handle = call->handle] { handle->Cancel(); });  // not inside its callback
      }
    };
    sink.on_finish = [this, call, client](gateway::CallOutcome outcome) {
      Finished(*call, outcome);
      call->handle.reset();  // the call holds the sink that holds `call`: break the cycle
      Next(client);
    };
    gateway::CallTimeouts timeouts;
    timeouts.total = std::chrono::milliseconds(int64_t(options_.request_timeout_s * 1000));
    call->handle =
        gateway::StartUpstreamCall(io_, options_.target, http, std::move(sink), timeouts);
  }

  void Finished(const Call& call, gateway::CallOutcome outcome) {
    --in_flight_;
    ++done_;
    SoakKindStats& stats = result_.kinds[size_t(call.request.kind)];
    std::string failure;
    if (outcome == gateway::CallOutcome::kCancelled && !call.response.cancelled) {
      failure = "cancelled";
    } else if (outcome == gateway::CallOutcome::kUnreachable ||
               outcome == gateway::CallOutcome::kBroken) {
      failure = std::string("connection ") + gateway::CallOutcomeName(outcome) + " after " +
                std::to_string(int(Now() - call.start_s)) + " s";
    } else {
      failure = CheckSoakResponse(call.request, call.response);
    }
    if (failure.empty()) {
      ++stats.ok;
      stats.latency_ms.push_back((Now() - call.start_s) * 1000);
      return;
    }
    ++stats.failed;
    const std::string key = std::string(SoakKindName(call.request.kind)) + ": " + failure;
    if (++result_.failures[key] == 1) std::fprintf(stderr, "  FAIL %s\n", key.c_str());
  }

  const SoakOptions& options_;
  const std::function<void(const SoakProgress&)>& on_progress_;
  net::io_context io_;
  net::steady_timer rss_timer_, progress_timer_, end_timer_;
  Clock::time_point start_;
  std::vector<Client> clients_;
  SoakResult result_;
  bool stopping_ = false;
  int in_flight_ = 0;
  int64_t done_ = 0;
};

}  // namespace

int64_t SoakResult::sent() const {
  int64_t n = 0;
  for (const auto& k : kinds) n += k.sent;
  return n;
}

int64_t SoakResult::failed() const {
  int64_t n = 0;
  for (const auto& k : kinds) n += k.failed;
  return n;
}

SoakResult RunSoak(const SoakOptions& options,
                   const std::function<void(const SoakProgress&)>& on_progress) {
  Soak soak(options, on_progress);
  return soak.Go();
}

std::string FormatSoakTraffic(const SoakResult& result) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %8s %8s %8s %10s %10s\n", "kind", "sent", "ok", "failed",
                "p50 ms", "p99 ms");
  out += line;
  for (size_t k = 0; k < result.kinds.size(); ++k) {
    const SoakKindStats& s = result.kinds[k];
    if (s.sent == 0) continue;
    const Distribution d = Distribute(s.latency_ms);
    std::snprintf(line, sizeof line, "%-16s %8lld %8lld %8lld %10.1f %10.1f\n",
                  SoakKindName(SoakKind(k)), static_cast<long long>(s.sent),
                  static_cast<long long>(s.ok), static_cast<long long>(s.failed), d.p50, d.p99);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-16s %8lld %8lld %8lld\n", "all",
                static_cast<long long>(result.sent()),
                static_cast<long long>(result.sent() - result.failed()),
                static_cast<long long>(result.failed()));
  out += line;
  for (const auto& [reason, count] : result.failures) {
    out += "  failed x" + std::to_string(count) + ": " + reason + "\n";
  }
  return out;
}

}  // namespace k3::loadgen
