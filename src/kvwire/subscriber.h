// KvEventSubscriber: the router's side of kvwire. Follows many workers' KvEventPublishers (wire
// format: codec.h) and hands a clean per-worker stream to a KvEventHandler: an initial resync,
// then events in sequence order with no duplicates and no gaps.
//
// Per worker: a SUB socket (all messages) and a DEALER for resync requests (at most one request
// in flight per DEALER; a retry or a new request closes it and opens another, so a late reply to
// an abandoned request can never be mistaken for the current one).
//   - AddWorker connects the SUB and at once asks for a resync after 0. Events published before
//     the SUB's subscription takes effect are lost (ZeroMQ's slow joiner); the resync covers them,
//     and when it completes before any message arrived on the SUB, the first message (a heartbeat
//     at the latest) triggers one more resync after the last sequence.
//   - While a resync is pending, arriving events are buffered (at most max_buffered_events; past
//     that the buffer is dropped and the gap check below asks again). On the reply: OnResync,
//     then the buffered events with sequence > last_sequence, in order.
//   - An event that is not last+1 after the handler's state: older ones are dropped (the resync
//     already covered them), a gap asks for a resync after the last sequence.
//   - No reply within resync_timeout: ask again, waiting twice as long each time (capped), while
//     the worker may be down.
//   - A new instance id: OnRestart, then a resync after 0 (a pending one is asked again on a
//     fresh DEALER, since it may have reached the old instance), except when the new id arrives
//     on the reply to a pending "after 0", which is already the new instance's whole state.
//   - Undecodable messages are counted and dropped.
//
// Threading: one background thread owns every socket and makes every handler call. AddWorker,
// RemoveWorker and RequestResync are thread-safe: they queue a command that the thread drains
// every poll (<= 2 ms); RequestResync called from a handler callback takes effect at once (the
// rest of that batch is buffered). stats() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cache/kv_events.h"

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace k3::kvwire {

class KvEventHandler {
 public:
  virtual ~KvEventHandler() = default;
  // All calls come from the subscriber thread only.
  // The next event of `worker`'s stream (sequence = the previous one + 1), in arrival order.
  virtual void OnEvent(int worker, const cache::SequencedKvEvent& e) = 0;
  // snapshot: replace the worker's state with `events` (sequence 0 each), valid as of
  // last_sequence. replay: apply `events` (those after the requested sequence), then continue
  // after last_sequence.
  virtual void OnResync(int worker, bool snapshot, uint64_t last_sequence,
                        const std::vector<cache::SequencedKvEvent>& events) = 0;
  // The worker's instance id changed (it restarted): forget its state; a resync follows.
  virtual void OnRestart(int worker) = 0;
};

struct SubscriberConfig {
  std::chrono::milliseconds resync_timeout{1000};    // wait for the first reply
  std::chrono::milliseconds max_resync_wait{30000};  // retries wait 2x longer each, up to this
  size_t max_buffered_events = 100000;               // per worker while a resync is pending
};

struct SubscriberStats {
  uint64_t workers = 0;          // followed now
  uint64_t events_received = 0;  // decoded from SUB sockets
  uint64_t resyncs = 0;          // replies handed to OnResync
  uint64_t resync_requests = 0;  // sent, retries included
  uint64_t resync_timeouts = 0;
  uint64_t decode_errors = 0;
  uint64_t restarts = 0;
  uint64_t gaps = 0;            // sequence gaps that triggered a resync
  uint64_t events_dropped = 0;  // buffer overflows and events older than the handler's state
};

class KvEventSubscriber {
 public:
  // `handler` must outlive the subscriber.
  explicit KvEventSubscriber(KvEventHandler* handler, SubscriberConfig config = {});
  ~KvEventSubscriber();
  KvEventSubscriber(const KvEventSubscriber&) = delete;
  KvEventSubscriber& operator=(const KvEventSubscriber&) = delete;

  // Thread-safe; may be called before Start(). Adding a known worker replaces it. A bad endpoint
  // is logged and the worker is not added.
  void AddWorker(int worker, std::string publish_endpoint, std::string resync_endpoint);
  void RemoveWorker(int worker);
  // Ask `worker` for everything after `after` (the handler's state must be as of `after`).
  void RequestResync(int worker, uint64_t after);

  base::Status Start();
  // Joins the thread and closes every socket; the workers are forgotten. Idempotent.
  void Stop();

  SubscriberStats stats() const;

 private:
  struct Worker;
  struct Command {
    enum class Kind { kAdd, kRemove, kResync } kind;
    int worker = 0;
    std::string publish_endpoint;
    std::string resync_endpoint;
    uint64_t after = 0;
  };

  void Push(Command command);
  void Run();
  void DrainCommands();
  void Add(const Command& command);
  zmq::socket_t MakeDealer(const std::string& endpoint);  // connected; throws zmq::error_t
  void PollOnce();
  void ReadEvents(Worker& w);
  void ReadReply(Worker& w);
  // Starts (or restarts) a resync of `w` after `after`, keeping its buffer.
  void BeginResync(Worker& w, uint64_t after);
  void SendRequest(Worker& w);
  // Delivers, buffers, drops or (on a gap) resyncs, per the rules above.
  void Deliver(Worker& w, cache::SequencedKvEvent e);
  void Buffer(Worker& w, cache::SequencedKvEvent e);
  // True when `instance_id` differs from the last one seen: then the worker's state is reset
  // and OnRestart called; the caller decides on the resync.
  bool CheckInstance(Worker& w, uint64_t instance_id);
  void CheckTimeouts();

  KvEventHandler* handler_;
  SubscriberConfig config_;

  std::mutex commands_mutex_;
  std::vector<Command> commands_;  // guarded by commands_mutex_

  std::unique_ptr<zmq::context_t> context_;
  std::map<int, std::unique_ptr<Worker>> workers_;  // thread_ only
  std::thread thread_;
  std::atomic<std::thread::id> loop_thread_;
  std::atomic<bool> stop_{false};

  std::atomic<uint64_t> workers_followed_{0}, events_received_{0}, resyncs_{0}, resync_requests_{0},
      resync_timeouts_{0}, decode_errors_{0}, restarts_{0}, gaps_{0}, events_dropped_{0};
};

}  // namespace k3::kvwire
