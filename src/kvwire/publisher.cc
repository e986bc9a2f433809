#include "kvwire/publisher.h"

#include <algorithm>
#include <mutex>
#include <random>
#include <utility>
#include <vector>
#include <zmq_addon.hpp>

#include "base/log.h"
#include "kvwire/state_mirror.h"
#include "kvwire/zmq_util.h"

namespace k3::kvwire {

using cache::SequencedKvEvent;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::chrono::milliseconds kPollInterval{2};
constexpr int kMaxRequestsPerPoll = 64;
constexpr int64_t kMaxRequestBytes = 64 * 1024;  // requests are ~12 bytes; larger peers are cut

uint64_t RandomInstanceId() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ uint64_t { device() };
}

// The event without its token ids, which are never sent.
SequencedKvEvent WithoutTokens(const SequencedKvEvent& e) {
  SequencedKvEvent copy;
  copy.sequence = e.sequence;
  copy.event.kind = e.event.kind;
  copy.event.block_hashes = e.event.block_hashes;
  copy.event.parent_hash = e.event.parent_hash;
  copy.event.block_size = e.event.block_size;
  copy.event.position = e.event.position;
  return copy;
}

}  // namespace

// Invariants (under `mutex`): `mirror` has applied exactly the events up to mirror.sequence(), in
// order, once seeding is over; `queue` holds the events not yet taken by the socket thread, in
// sequence order. Once `active` is false the callback does nothing (the channel keeps it forever:
// it has no Unsubscribe).
struct KvEventPublisher::Shared {
  std::mutex mutex;
  bool active = true;
  bool seeding = true;                  // Start() has not yet seeded the mirror
  std::vector<SequencedKvEvent> early;  // events seen while seeding
  std::vector<SequencedKvEvent> queue;  // to send
  StateMirror mirror;
  size_t max_queued = 0;
  std::shared_ptr<std::atomic<uint64_t>> dropped;  // the publisher's counter (outlives either)

  // The channel subscriber: on the publishing thread, under the channel lock. O(hashes).
  void OnEvent(const SequencedKvEvent& e) {
    std::lock_guard lock(mutex);
    if (!active) return;
    if (queue.size() >= max_queued) {
      *dropped += queue.size();
      queue.clear();
    }
    queue.push_back(WithoutTokens(e));
    if (seeding) {
      early.push_back(queue.back());
    } else {
      mirror.Apply(e);
    }
  }
};

KvEventPublisher::KvEventPublisher(cache::KvEventChannel* channel, PublisherConfig config)
    : channel_(channel),
      config_(std::move(config)),
      instance_id_(RandomInstanceId()),
      queue_dropped_(std::make_shared<std::atomic<uint64_t>>(0)) {}

KvEventPublisher::~KvEventPublisher() { Stop(); }

base::Status KvEventPublisher::Start() {
  if (thread_.joinable()) {
    return {base::StatusCode::kFailedPrecondition, "kvwire publisher already started"};
  }
  context_ = std::make_unique<zmq::context_t>(1);
  base::Status status;
  try {
    publish_socket_ = MakeSocket(*context_, zmq::socket_type::pub);
    resync_socket_ = MakeSocket(*context_, zmq::socket_type::router);
    resync_socket_.set(zmq::sockopt::maxmsgsize, kMaxRequestBytes);
    status = BindSocket(publish_socket_, config_.publish_endpoint, &bound_publish_);
    if (status.ok()) status = BindSocket(resync_socket_, config_.resync_endpoint, &bound_resync_);
  } catch (const zmq::error_t& e) {
    status = ZmqStatus(e, "creating kvwire publisher sockets");
  }
  if (!status.ok()) {
    publish_socket_.close();
    resync_socket_.close();
    context_->close();
    bound_publish_.clear();
    bound_resync_.clear();
    return status.WithContext("kvwire publisher");
  }
  SubscribeAndSeed();
  stop_ = false;
  last_send_ = Clock::now();
  thread_ = std::thread([this] { Run(); });
  K3_LOG(kInfo) << "kvwire publisher " << std::hex << instance_id_ << std::dec << ": events on "
                << bound_publish_ << ", resync on " << bound_resync_;
  return base::Status::Ok();
}

void KvEventPublisher::SubscribeAndSeed() {
  shared_ = std::make_shared<Shared>();
  shared_->max_queued = std::max<size_t>(config_.max_queued_events, 1);
  shared_->dropped = queue_dropped_;
  channel_->Subscribe([shared = shared_](const SequencedKvEvent& e) { shared->OnEvent(e); });
  // Events published before Subscribe are only in the replay buffer. Replay(0) may also return
  // some of `early`; applying in sequence order, each once, gives the mirror every event.
  auto earlier = channel_->Replay(0);
  std::lock_guard lock(shared_->mutex);
  if (earlier) {
    for (const SequencedKvEvent& e : *earlier) shared_->mirror.Apply(e);
  } else {
    K3_LOG(kWarning) << "kvwire publisher: the channel no longer holds its first events; "
                        "snapshots will miss blocks stored before sequence "
                     << channel_->last_sequence();
  }
  for (const SequencedKvEvent& e : shared_->early) {
    if (e.sequence > shared_->mirror.sequence()) shared_->mirror.Apply(e);
  }
  shared_->early.clear();
  shared_->seeding = false;
}

void KvEventPublisher::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
  {
    std::lock_guard lock(shared_->mutex);
    shared_->active = false;
    shared_->queue.clear();
    shared_->mirror.Clear();
  }
  context_->close();
}

PublisherStats KvEventPublisher::stats() const {
  PublisherStats s;
  s.events_sent = events_sent_;
  s.batches_sent = batches_sent_;
  s.resyncs_answered = resyncs_answered_;
  s.snapshots_sent = snapshots_sent_;
  s.bad_requests = bad_requests_;
  s.events_dropped = oversized_dropped_ + *queue_dropped_;
  return s;
}

void KvEventPublisher::Run() {
  zmq::pollitem_t items[] = {{resync_socket_.handle(), 0, ZMQ_POLLIN, 0}};
  while (!stop_) {
    try {
      zmq::poll(items, 1, kPollInterval);
      if (items[0].revents & ZMQ_POLLIN) AnswerRequests();
      SendQueued();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) break;
      K3_LOG(kWarning) << "kvwire publisher: " << e.what();
    }
  }
  publish_socket_.close();
  resync_socket_.close();
}

void KvEventPublisher::AnswerRequests() {
  for (int request_idx = 0; request_idx < kMaxRequestsPerPoll; ++request_idx) {
    // ROUTER frames: [peer identity, (empty delimiter from a REQ peer,) request].
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(resync_socket_, std::back_inserter(frames),
                             zmq::recv_flags::dontwait)) {
      return;
    }
    auto request = frames.size() == 2 || frames.size() == 3
                       ? DecodeResyncRequest(frames.back().to_string_view())
                       : base::Result<ResyncRequest>(base::InvalidArgument("bad framing"));
    if (!request.ok()) {
      ++bad_requests_;
      K3_LOG(kDebug) << "kvwire publisher: dropped a request: " << request.status().ToString();
      continue;
    }
    ResyncReply reply = BuildReply(request->after);
    frames.back() = zmq::message_t(EncodeResyncReply(reply));
    // Counted before sending, so whoever saw the reply also sees the count.
    ++resyncs_answered_;
    if (reply.mode == ResyncMode::kSnapshot) ++snapshots_sent_;
    // A vanished peer's reply is dropped by the ROUTER; a full pipe drops it too (dontwait) and
    // the peer retries.
    zmq::send_multipart(resync_socket_, frames, zmq::send_flags::dontwait);
  }
}

ResyncReply KvEventPublisher::BuildReply(uint64_t after) {
  ResyncReply reply;
  reply.instance_id = instance_id_;
  // Replay and last_sequence() are two channel calls; events published between them make an
  // empty replay ambiguous, so look again a few times before settling for a snapshot.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto events = channel_->Replay(after);
    if (!events) break;  // the channel dropped some of them
    if (!events->empty()) {
      if (events->size() > kMaxEventsPerMessage || CountHashes(*events) > kMaxHashesPerMessage) {
        break;
      }
      reply.mode = ResyncMode::kReplay;
      reply.last_sequence = events->back().sequence;
      reply.events.reserve(events->size());
      for (const SequencedKvEvent& e : *events) reply.events.push_back(WithoutTokens(e));
      return reply;
    }
    const uint64_t last = channel_->last_sequence();
    if (last == after) {  // nothing happened since `after`
      reply.mode = ResyncMode::kReplay;
      reply.last_sequence = after;
      return reply;
    }
    if (last < after) break;  // the peer knows sequences this channel never had
  }
  reply.mode = ResyncMode::kSnapshot;
  {
    std::lock_guard lock(shared_->mutex);
    reply.events = shared_->mirror.Snapshot();
    reply.last_sequence = shared_->mirror.sequence();
  }
  if (reply.events.size() > kMaxEventsPerMessage) {
    // Parents come first, so the kept prefix is still a set of whole prefixes.
    K3_LOG(kError) << "kvwire publisher: snapshot of " << reply.events.size()
                   << " entries truncated to " << kMaxEventsPerMessage;
    reply.events.resize(kMaxEventsPerMessage);
  }
  return reply;
}

void KvEventPublisher::SendQueued() {
  std::vector<SequencedKvEvent> events;
  {
    std::lock_guard lock(shared_->mutex);
    events.swap(shared_->queue);
  }
  const Clock::time_point now = Clock::now();
  if (events.empty()) {
    if (now - last_send_ >= config_.heartbeat_interval) SendBatch({});
    return;
  }
  // Batches within both message caps and max_events_per_batch.
  const size_t max_events =
      std::clamp<size_t>(config_.max_events_per_batch, 1, kMaxEventsPerMessage);
  size_t begin = 0;
  while (begin < events.size()) {
    size_t end = begin;
    size_t hashes = 0;
    while (end < events.size() && end - begin < max_events &&
           hashes + events[end].event.block_hashes.size() <= kMaxHashesPerMessage) {
      hashes += events[end].event.block_hashes.size();
      ++end;
    }
    if (end == begin) {  // one event over the hash cap: subscribers will see a gap and resync
      ++oversized_dropped_;
      ++begin;
      continue;
    }
    SendBatch(std::span(events).subspan(begin, end - begin));
    begin = end;
  }
}

void KvEventPublisher::SendBatch(std::span<const SequencedKvEvent> events) {
  // PUB never blocks: a subscriber whose pipe is full loses the message (and resyncs on the gap).
  const std::string message = EncodeEventsBatch(instance_id_, events);
  events_sent_ += events.size();  // counted first, as replies are
  ++batches_sent_;
  publish_socket_.send(zmq::buffer(message), zmq::send_flags::dontwait);
  last_send_ = Clock::now();
}

}  // namespace k3::kvwire
