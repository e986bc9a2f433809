#include "loadgen/runner.h"

#include <time.h>

#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <random>

namespace k3::loadgen {
namespace {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Start offsets (seconds) of each conversation, in start order.
std::vector<std::pair<double, int>> Arrivals(const Workload& w, const RunOptions& o) {
  std::vector<std::pair<double, int>> out;
  std::mt19937_64 rng(o.seed);
  const double shape = o.burstiness > 0 ? o.burstiness : 1.0;
  std::gamma_distribution<double> gap(shape,
                                      o.request_rate > 0 ? 1.0 / (o.request_rate * shape) : 0);
  double t = 0;
  for (int i = 0; i < static_cast<int>(w.conversations.size()); ++i) {
    if (o.trace_times) {
      out.emplace_back(std::max(0.0, w.conversations[size_t(i)].arrival_s), i);
    } else {
      out.emplace_back(t, i);
      if (o.request_rate > 0) t += gap(rng);
    }
  }
  std::stable_sort(out.begin(), out.end());
  return out;
}

class Run {
 public:
  Run(const Workload& w, const RunOptions& o, const std::function<void(const Progress&)>& progress)
      : workload_(w),
        options_(o),
        on_progress_(progress),
        arrival_timer_(io_),
        progress_timer_(io_),
        arrivals_(Arrivals(w, o)),
        turns_(w.conversations.size(), 0) {
    total_ = w.requests();
  }

  RunResult Go() {
    const double cpu0 = ThreadCpuSeconds();
    start_ = Clock::now();
    ArmArrivals();
    ArmProgress();
    if (total_ > 0) io_.run();
    RunResult result;
    result.duration_s = Now();
    result.client_cpu_s = ThreadCpuSeconds() - cpu0;
    result.events = events_;
    result.records.assign(records_.begin(), records_.end());
    return result;
  }

 private:
  double Now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void ArmArrivals() {
    while (next_arrival_ < arrivals_.size() && arrivals_[next_arrival_].first <= Now()) {
      ready_.push_back(arrivals_[next_arrival_++].second);
    }
    Pump();
    if (next_arrival_ >= arrivals_.size()) return;
    arrival_timer_.expires_at(start_ +
                              std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(arrivals_[next_arrival_].first)));
    arrival_timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) ArmArrivals();
    });
  }

  void ArmProgress() {
    if (!on_progress_ || options_.progress_every_s <= 0) return;
    progress_timer_.expires_after(std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(options_.progress_every_s)));
    progress_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      Report();
      ArmProgress();
    });
  }

  void Report() {
    if (on_progress_) on_progress_({done_, total_, failed_, in_flight_, Now(), output_tokens_});
  }

  void Pump() {
    while (!ready_.empty() && (options_.concurrency <= 0 || in_flight_ < options_.concurrency)) {
      const int conversation = ready_.front();
      ready_.pop_front();
      Send(conversation);
    }
  }

  nlohmann::json Body(int conversation) {
    const Conversation& c = workload_.conversations[size_t(conversation)];
    const size_t turn = turns_[size_t(conversation)];
    nlohmann::json body = {{"model", options_.model},
                           {"max_tokens", c.max_tokens},
                           {"stream", true},
                           {"stream_options", {{"include_usage", true}}},
                           {"temperature", options_.temperature},
                           {"ignore_eos", options_.ignore_eos}};
    if (options_.completions) {
      body["prompt"] = c.user_turns[turn];
      return body;
    }
    nlohmann::json messages = nlohmann::json::array();
    if (!c.system.empty()) messages.push_back({{"role", "system"}, {"content", c.system}});
    for (size_t t = 0; t < turn; ++t) {
      messages.push_back({{"role", "user"}, {"content", c.user_turns[t]}});
      messages.push_back({{"role", "assistant"}, {"content", replies_[{conversation, t}]}});
    }
    messages.push_back({{"role", "user"}, {"content", c.user_turns[turn]}});
    body["messages"] = std::move(messages);
    return body;
  }

  void Send(int conversation) {
    api::HttpRequest request;
    request.method = "POST";
    request.path = options_.completions ? "/v1/completions" : "/v1/chat/completions";
    request.headers["content-type"] = "application/json";
    if (!options_.api_key.empty()) request.headers["authorization"] = "Bearer " + options_.api_key;
    request.body = Body(conversation).dump();
    RequestRecord& r = records_.emplace_back();
    r.conversation = conversation;
    r.turn = static_cast<int>(turns_[size_t(conversation)]);
    r.start_s = r.end_s = Now();
    ++in_flight_;
    gateway::CallSink sink;
    sink.on_response = [&r](int status, std::string, std::string) {
      r.error = "http_" + std::to_string(status);
      return true;
    };
    sink.on_stream_start = [] {};
    sink.on_event = [this, &r](std::string framed) {
      ++events_;
      const int64_t before = r.text_events;
      if (r.ok()) ReadChunk(framed, Now(), &r);
      output_tokens_ += r.text_events - before;
    };
    sink.on_finish = [this, &r](gateway::CallOutcome outcome) { Finished(r, outcome); };
    gateway::StartUpstreamCall(io_, options_.target, request, std::move(sink));
  }

  void Finished(RequestRecord& r, gateway::CallOutcome outcome) {
    if (outcome != gateway::CallOutcome::kDone && r.ok()) {
      r.error = outcome == gateway::CallOutcome::kUnreachable ? "unreachable" : "broken_stream";
    }
    if (r.ok() && r.first_token_s < 0) r.error = "no_output";
    r.end_s = Now();
    if (r.ok() && r.output_tokens == 0) r.output_tokens = r.text_events;
    --in_flight_;
    ++done_;
    const Conversation& c = workload_.conversations[size_t(r.conversation)];
    const size_t next = size_t(r.turn) + 1;
    if (!r.ok()) {
      ++failed_;
      total_ -= static_cast<int>(c.user_turns.size() - next);  // the rest of it is not sent
    } else if (next < c.user_turns.size()) {
      replies_[{r.conversation, size_t(r.turn)}] = r.reply;
      turns_[size_t(r.conversation)] = next;
      ready_.push_front(r.conversation);  // conversations in progress go first
    }
    Pump();
    if (done_ >= total_ && next_arrival_ >= arrivals_.size()) {
      Report();
      arrival_timer_.cancel();
      progress_timer_.cancel();
    }
  }

  const Workload& workload_;
  const RunOptions& options_;
  const std::function<void(const Progress&)>& on_progress_;
  net::io_context io_;
  net::steady_timer arrival_timer_, progress_timer_;
  Clock::time_point start_;
  std::vector<std::pair<double, int>> arrivals_;
  size_t next_arrival_ = 0;
  std::deque<int> ready_;
  std::vector<size_t> turns_;                              // next turn per conversation
  std::map<std::pair<int, size_t>, std::string> replies_;  // (conversation, turn) -> reply
  std::deque<RequestRecord> records_;                      // deque: references stay valid
  int total_ = 0, done_ = 0, failed_ = 0, in_flight_ = 0;
  int64_t events_ = 0, output_tokens_ = 0;
};

}  // namespace

RunResult RunWorkload(const Workload& workload, const RunOptions& options,
                      const std::function<void(const Progress&)>& on_progress) {
  Run run(workload, options, on_progress);
  return run.Go();
}

}  // namespace k3::loadgen
