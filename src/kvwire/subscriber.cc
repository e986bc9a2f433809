#include "kvwire/subscriber.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "base/log.h"
#include "kvwire/codec.h"
#include "kvwire/zmq_util.h"

namespace k3::kvwire {

using cache::SequencedKvEvent;
using Clock = std::chrono::steady_clock;

namespace {
constexpr std::chrono::milliseconds kPollInterval{2};
constexpr int kMaxMessagesPerPoll = 64;  // per socket, so one busy worker cannot starve the rest
// The largest message a worker may send (a snapshot of 1M blocks is ~30 MB); ZeroMQ drops the
// connection of a peer that sends more.
constexpr int64_t kMaxMessageBytes = int64_t{256} << 20;
}  // namespace

// One followed worker. Invariants: the handler's state for it is complete up to last_sequence
// (when no resync is pending); `outstanding` means a request was sent on `dealer` and not yet
// answered, and a new request then needs a new DEALER.
struct KvEventSubscriber::Worker {
  int id = 0;
  std::string publish_endpoint;
  std::string resync_endpoint;
  zmq::socket_t sub;
  zmq::socket_t dealer;
  std::optional<uint64_t> instance_id;  // the last one seen
  uint64_t last_sequence = 0;
  bool sub_live = false;              // a message arrived on `sub`: its subscription is in effect
  bool resynced_before_live = false;  // a resync finished before that: check again once live
  bool pending = false;               // a resync is pending: events go to `buffer`
  uint64_t pending_after = 0;
  bool outstanding = false;
  int attempts = 0;  // requests sent for the pending resync
  Clock::time_point deadline;
  std::vector<SequencedKvEvent> buffer;  // arrival order
};

KvEventSubscriber::KvEventSubscriber(KvEventHandler* handler, SubscriberConfig config)
    : handler_(handler), config_(config) {}

KvEventSubscriber::~KvEventSubscriber() { Stop(); }

void KvEventSubscriber::AddWorker(int worker, std::string publish_endpoint,
                                  std::string resync_endpoint) {
  Push({Command::Kind::kAdd, worker, std::move(publish_endpoint), std::move(resync_endpoint)});
}

void KvEventSubscriber::RemoveWorker(int worker) { Push({Command::Kind::kRemove, worker}); }

void KvEventSubscriber::RequestResync(int worker, uint64_t after) {
  if (loop_thread_.load() == std::this_thread::get_id()) {  // from a handler callback
    auto it = workers_.find(worker);
    if (it != workers_.end()) BeginResync(*it->second, after);
    return;
  }
  Push({Command::Kind::kResync, worker, "", "", after});
}

void KvEventSubscriber::Push(Command command) {
  std::lock_guard lock(commands_mutex_);
  commands_.push_back(std::move(command));
}

base::Status KvEventSubscriber::Start() {
  if (thread_.joinable()) {
    return {base::StatusCode::kFailedPrecondition, "kvwire subscriber already started"};
  }
  try {
    context_ = std::make_unique<zmq::context_t>(1);
  } catch (const zmq::error_t& e) {
    return ZmqStatus(e, "kvwire subscriber: creating the ZeroMQ context");
  }
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
  return base::Status::Ok();
}

void KvEventSubscriber::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
  context_->close();
}

SubscriberStats KvEventSubscriber::stats() const {
  SubscriberStats s;
  s.workers = workers_followed_;
  s.events_received = events_received_;
  s.resyncs = resyncs_;
  s.resync_requests = resync_requests_;
  s.resync_timeouts = resync_timeouts_;
  s.decode_errors = decode_errors_;
  s.restarts = restarts_;
  s.gaps = gaps_;
  s.events_dropped = events_dropped_;
  return s;
}

void KvEventSubscriber::Run() {
  loop_thread_ = std::this_thread::get_id();
  while (!stop_) {
    try {
      DrainCommands();
      PollOnce();
      CheckTimeouts();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) break;
      K3_LOG(kWarning) << "kvwire subscriber: " << e.what();
    }
  }
  workers_.clear();  // closes every socket (linger 0) before Stop closes the context
  workers_followed_ = 0;
  loop_thread_ = std::thread::id();
}

void KvEventSubscriber::DrainCommands() {
  std::vector<Command> commands;
  {
    std::lock_guard lock(commands_mutex_);
    commands.swap(commands_);
  }
  for (const Command& command : commands) {
    switch (command.kind) {
      case Command::Kind::kAdd:
        Add(command);
        break;
      case Command::Kind::kRemove:
        workers_.erase(command.worker);
        break;
      case Command::Kind::kResync: {
        auto it = workers_.find(command.worker);
        if (it != workers_.end()) BeginResync(*it->second, command.after);
        break;
      }
    }
  }
  workers_followed_ = workers_.size();
}

void KvEventSubscriber::Add(const Command& command) {
  auto w = std::make_unique<Worker>();
  w->id = command.worker;
  w->publish_endpoint = command.publish_endpoint;
  w->resync_endpoint = command.resync_endpoint;
  try {
    w->sub = MakeSocket(*context_, zmq::socket_type::sub);
    w->sub.set(zmq::sockopt::maxmsgsize, kMaxMessageBytes);
    w->sub.set(zmq::sockopt::subscribe, "");
    w->sub.connect(w->publish_endpoint);
    w->dealer = MakeDealer(w->resync_endpoint);
  } catch (const zmq::error_t& e) {
    K3_LOG(kError) << ZmqStatus(e, "kvwire subscriber: worker " + std::to_string(w->id) + " (" +
                                       w->publish_endpoint + ", " + w->resync_endpoint + ")")
                          .ToString();
    return;
  }
  Worker& worker = *w;
  workers_[command.worker] = std::move(w);  // replaces (and closes) an older one
  BeginResync(worker, 0);
}

zmq::socket_t KvEventSubscriber::MakeDealer(const std::string& endpoint) {
  zmq::socket_t dealer = MakeSocket(*context_, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::maxmsgsize, kMaxMessageBytes);
  dealer.connect(endpoint);
  return dealer;
}

void KvEventSubscriber::PollOnce() {
  std::vector<zmq::pollitem_t> items;
  std::vector<Worker*> owners;
  items.reserve(2 * workers_.size());
  for (auto& [id, w] : workers_) {
    items.push_back({w->sub.handle(), 0, ZMQ_POLLIN, 0});
    items.push_back({w->dealer.handle(), 0, ZMQ_POLLIN, 0});
    owners.push_back(w.get());
  }
  if (items.empty()) {
    std::this_thread::sleep_for(kPollInterval);
    return;
  }
  zmq::poll(items.data(), items.size(), kPollInterval);
  // Handler callbacks may replace a worker's DEALER (RequestResync), so the reads below use the
  // worker's current sockets, not the polled handles; workers themselves only change in
  // DrainCommands.
  for (size_t worker_idx = 0; worker_idx < owners.size(); ++worker_idx) {
    if (items[2 * worker_idx].revents & ZMQ_POLLIN) ReadEvents(*owners[worker_idx]);
    if (items[2 * worker_idx + 1].revents & ZMQ_POLLIN) ReadReply(*owners[worker_idx]);
  }
}

void KvEventSubscriber::ReadEvents(Worker& w) {
  for (int message_idx = 0; message_idx < kMaxMessagesPerPoll; ++message_idx) {
    zmq::message_t message;
    if (!w.sub.recv(message, zmq::recv_flags::dontwait)) return;
    if (message.more()) {  // we only ever publish single-frame messages: skip the rest
      ++decode_errors_;
      while (message.more() && w.sub.recv(message, zmq::recv_flags::dontwait)) {
      }
      continue;
    }
    auto batch = DecodeEventsBatch(message.to_string_view());
    if (!batch.ok()) {
      ++decode_errors_;
      K3_LOG(kDebug) << "kvwire subscriber: worker " << w.id << ": " << batch.status().ToString();
      continue;
    }
    const bool first_live = !w.sub_live;
    w.sub_live = true;
    // Even when a resync after 0 is pending, ask again on a fresh DEALER: the pending request
    // may have gone to the old instance, and its reply must not be taken for the new one's.
    if (CheckInstance(w, batch->instance_id)) BeginResync(w, 0);
    events_received_ += batch->events.size();
    for (SequencedKvEvent& e : batch->events) Deliver(w, std::move(e));
    // A heartbeat as the first live message: events between an earlier resync and the
    // subscription may have been lost without a later event to show the gap.
    if (first_live && w.resynced_before_live && batch->events.empty() && !w.pending) {
      BeginResync(w, w.last_sequence);
    }
    w.resynced_before_live = false;
  }
}

void KvEventSubscriber::ReadReply(Worker& w) {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(w.dealer, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
    return;
  }
  w.outstanding = false;
  auto reply = DecodeResyncReply(frames.back().to_string_view());
  if (!reply.ok()) {
    ++decode_errors_;
    K3_LOG(kWarning) << "kvwire subscriber: worker " << w.id << ": " << reply.status().ToString();
    return;  // still pending: the timeout asks again
  }
  if (!w.pending) return;
  const uint64_t asked_after = w.pending_after;
  if (CheckInstance(w, reply->instance_id)) {
    // The first word from a new instance. A reply to "after 0" is its whole state; any other
    // answered a question about the old instance's sequences.
    if (asked_after != 0) {
      BeginResync(w, 0);
      return;
    }
  }
  w.pending = false;
  w.attempts = 0;
  w.last_sequence = reply->last_sequence;
  if (!w.sub_live) w.resynced_before_live = true;
  ++resyncs_;
  handler_->OnResync(w.id, reply->mode == ResyncMode::kSnapshot, reply->last_sequence,
                     reply->events);
  std::vector<SequencedKvEvent> buffered;
  buffered.swap(w.buffer);
  for (SequencedKvEvent& e : buffered) Deliver(w, std::move(e));
}

bool KvEventSubscriber::CheckInstance(Worker& w, uint64_t instance_id) {
  if (!w.instance_id || *w.instance_id == instance_id) {
    w.instance_id = instance_id;
    return false;
  }
  K3_LOG(kInfo) << "kvwire subscriber: worker " << w.id << " restarted (instance " << std::hex
                << *w.instance_id << " -> " << instance_id << std::dec << ")";
  w.instance_id = instance_id;
  ++restarts_;
  events_dropped_ += w.buffer.size();
  w.buffer.clear();  // the old instance's events
  w.last_sequence = 0;
  handler_->OnRestart(w.id);
  return true;
}

void KvEventSubscriber::BeginResync(Worker& w, uint64_t after) {
  w.pending = true;
  w.pending_after = after;
  w.attempts = 0;
  SendRequest(w);
}

void KvEventSubscriber::SendRequest(Worker& w) {
  if (w.outstanding) {  // a fresh DEALER, so the old request's reply can never arrive
    try {
      w.dealer = MakeDealer(w.resync_endpoint);
    } catch (const zmq::error_t& e) {
      K3_LOG(kWarning) << "kvwire subscriber: worker " << w.id << ": " << e.what();
    }
  }
  const std::string request = EncodeResyncRequest({w.pending_after});
  // A DEALER queues the request until it connects; a full queue fails and the timeout retries.
  (void)w.dealer.send(zmq::buffer(request), zmq::send_flags::dontwait);
  w.outstanding = true;
  ++resync_requests_;
  // resync_timeout, then twice as long after each unanswered request, up to max_resync_wait.
  auto wait = config_.resync_timeout;
  for (int attempt = 0; attempt < w.attempts && wait < config_.max_resync_wait; ++attempt) {
    wait *= 2;
  }
  w.deadline =
      Clock::now() + std::min(wait, std::max(config_.max_resync_wait, config_.resync_timeout));
  ++w.attempts;
}

void KvEventSubscriber::Deliver(Worker& w, SequencedKvEvent e) {
  if (w.pending) {
    Buffer(w, std::move(e));
    return;
  }
  if (e.sequence <= w.last_sequence) {  // already part of the handler's state
    ++events_dropped_;
    return;
  }
  if (e.sequence != w.last_sequence + 1) {  // lost events: ask for them, keep this one
    ++gaps_;
    BeginResync(w, w.last_sequence);
    Buffer(w, std::move(e));
    return;
  }
  w.last_sequence = e.sequence;
  handler_->OnEvent(w.id, e);
}

void KvEventSubscriber::Buffer(Worker& w, SequencedKvEvent e) {
  if (w.buffer.size() >= config_.max_buffered_events) {
    // The events after the resync's last_sequence are lost with it; the gap check on the next
    // event asks again (by then the channel's replay may be gone: a snapshot).
    events_dropped_ += w.buffer.size();
    w.buffer.clear();
  }
  w.buffer.push_back(std::move(e));
}

void KvEventSubscriber::CheckTimeouts() {
  const Clock::time_point now = Clock::now();
  for (auto& [id, w] : workers_) {
    if (!w->pending || now < w->deadline) continue;
    ++resync_timeouts_;
    K3_LOG(kWarning) << "kvwire subscriber: worker " << id << ": no resync reply from "
                     << w->resync_endpoint << " (attempt " << w->attempts << "), asking again";
    SendRequest(*w);
  }
}

}  // namespace k3::kvwire
