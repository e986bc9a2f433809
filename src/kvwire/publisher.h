// KvEventPublisher: puts one replica's KV events (a cache::KvEventChannel) on ZeroMQ for routers
// (wire format: codec.h). Two sockets, both bound:
//   - PUB on publish_endpoint: event batches, whatever was queued since the last send, plus an
//     empty batch (a heartbeat naming the instance) after heartbeat_interval without events;
//   - ROUTER on resync_endpoint: answers ResyncRequest{after} with a replay when the channel still
//     holds every event after `after` (KvEventChannel::Replay), else with a snapshot of the
//     mirror (state_mirror.h) and the sequence it is valid as of.
//
// Threading: the channel subscriber runs on the engine's publishing thread under the channel lock;
// it only copies the event into a queue and applies it to the mirror, under this publisher's
// mutex, so mirror and mirror sequence always agree. One background thread owns both sockets
// (ZeroMQ sockets are not thread-safe): it polls the ROUTER every <= 2 ms, answers requests and
// sends the queue. Public methods are called from one controlling thread; stats() from any.
//
// The mirror needs every event from sequence 1: Start() seeds it from the channel's replay buffer
// when events were published before it, and logs a warning when the buffer no longer has them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "base/status.h"
#include "cache/kv_events.h"
#include "kvwire/codec.h"

namespace k3::kvwire {

struct PublisherConfig {
  std::string publish_endpoint;  // e.g. "tcp://*:5557"; "tcp://127.0.0.1:*" picks a free port
  std::string resync_endpoint;   // e.g. "tcp://*:5558"
  std::chrono::milliseconds heartbeat_interval{1000};
  size_t max_events_per_batch = 4096;
  // Queue cap when the socket thread falls behind: beyond it the queue is dropped (subscribers
  // see a sequence gap and resync).
  size_t max_queued_events = size_t{1} << 20;
};

struct PublisherStats {
  uint64_t events_sent = 0;
  uint64_t batches_sent = 0;  // heartbeats included
  uint64_t resyncs_answered = 0;
  uint64_t snapshots_sent = 0;  // of resyncs_answered
  uint64_t bad_requests = 0;    // undecodable resync requests, dropped
  uint64_t events_dropped = 0;  // queue overflow or an event over the message caps
};

class KvEventPublisher {
 public:
  // `channel` must outlive the publisher's Start()..Stop().
  KvEventPublisher(cache::KvEventChannel* channel, PublisherConfig config);
  ~KvEventPublisher();
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

  // Binds both sockets (UNAVAILABLE when an address is in use, INVALID_ARGUMENT for a bad
  // endpoint), subscribes to the channel and starts the socket thread.
  base::Status Start();
  // Joins the thread and closes the sockets (linger 0). Idempotent.
  void Stop();

  uint64_t instance_id() const { return instance_id_; }
  // The bound addresses (ZMQ_LAST_ENDPOINT, wildcards resolved); empty before Start().
  const std::string& publish_endpoint() const { return bound_publish_; }
  const std::string& resync_endpoint() const { return bound_resync_; }
  PublisherStats stats() const;

 private:
  struct Shared;  // what the channel subscriber touches; outlives us (the channel keeps it)

  void SubscribeAndSeed();
  void Run();
  void AnswerRequests();
  // A replay when the channel still has every event after `after`, else a snapshot.
  ResyncReply BuildReply(uint64_t after);
  void SendQueued();
  void SendBatch(std::span<const cache::SequencedKvEvent> events);

  cache::KvEventChannel* channel_;
  PublisherConfig config_;
  uint64_t instance_id_;
  std::string bound_publish_;
  std::string bound_resync_;

  std::shared_ptr<Shared> shared_;                        // a fresh one per Start()
  std::shared_ptr<std::atomic<uint64_t>> queue_dropped_;  // shared with every Shared
  std::unique_ptr<zmq::context_t> context_;               // one per Start(); closed by Stop()
  zmq::socket_t publish_socket_;                          // owned by thread_ while it runs
  zmq::socket_t resync_socket_;                           // owned by thread_ while it runs
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point last_send_;  // thread_ only

  std::atomic<uint64_t> events_sent_{0}, batches_sent_{0}, resyncs_answered_{0}, snapshots_sent_{0},
      bad_requests_{0}, oversized_dropped_{0};
};

}  // namespace k3::kvwire
