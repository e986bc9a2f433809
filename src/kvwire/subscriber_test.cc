// KvEventSubscriber against a scripted worker: the test owns the PUB and ROUTER sockets, so it
// decides what is lost, what is late and when a resync is answered.
#include "kvwire/subscriber.h"

#include <gtest/gtest.h>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "kvwire/codec.h"
#include "kvwire/test_support.h"

namespace k3::kvwire {
namespace {

using cache::SequencedKvEvent;
using testing::Call;
using testing::RecordingHandler;

SequencedKvEvent Stored(uint64_t sequence, uint64_t hash) {
  SequencedKvEvent e;
  e.sequence = sequence;
  e.event.kind = cache::KvEventKind::kBlockStored;
  e.event.block_hashes = {hash};
  e.event.block_size = 16;
  return e;
}

std::vector<SequencedKvEvent> StoredRange(uint64_t first, uint64_t last) {
  std::vector<SequencedKvEvent> events;
  for (uint64_t sequence = first; sequence <= last; ++sequence) {
    events.push_back(Stored(sequence, 1000 + sequence));
  }
  return events;
}

class FakeWorker {
 public:
  FakeWorker()
      : pub_(context_, zmq::socket_type::pub), router_(context_, zmq::socket_type::router) {
    pub_.set(zmq::sockopt::linger, 0);
    router_.set(zmq::sockopt::linger, 0);
    router_.set(zmq::sockopt::rcvtimeo, 60000);
    pub_.bind("tcp://127.0.0.1:*");
    router_.bind("tcp://127.0.0.1:*");
  }
  std::string publish_endpoint() { return pub_.get(zmq::sockopt::last_endpoint); }
  std::string resync_endpoint() { return router_.get(zmq::sockopt::last_endpoint); }

  void Send(std::string_view bytes) { pub_.send(zmq::buffer(bytes)); }
  void SendEvents(uint64_t instance, std::vector<SequencedKvEvent> events) {
    Send(EncodeEventsBatch(instance, events));
  }
  // Sends garbage until the subscriber has counted one: its subscription is then in effect.
  bool MakeLive(KvEventSubscriber& subscriber) {
    const uint64_t errors = subscriber.stats().decode_errors;
    return testing::PollUntil([&] {
      Send("not msgpack \xc1");
      return subscriber.stats().decode_errors > errors;
    });
  }
  // The next resync request: its `after` and the peer's identity (empty optional on timeout).
  std::optional<std::pair<uint64_t, std::string>> NextRequest() {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(router_, std::back_inserter(frames)) || frames.size() != 2) {
      return std::nullopt;
    }
    auto request = DecodeResyncRequest(frames[1].to_string_view());
    if (!request.ok()) return std::nullopt;
    return std::make_pair(request->after, frames[0].to_string());
  }
  void Reply(const std::string& peer, const ResyncReply& reply) {
    std::vector<zmq::message_t> frames;
    frames.emplace_back(peer.data(), peer.size());
    frames.emplace_back(EncodeResyncReply(reply));
    zmq::send_multipart(router_, frames);
  }

 private:
  zmq::context_t context_{1};
  zmq::socket_t pub_;
  zmq::socket_t router_;
};

constexpr uint64_t kInstanceA = 0xaaaa;
constexpr uint64_t kInstanceB = 0xbbbb;

SubscriberConfig PatientConfig() {
  SubscriberConfig config;
  config.resync_timeout = std::chrono::seconds(120);  // the test answers when it wants to
  return config;
}

TEST(KvwireSubscriber, BuffersEventsWhileResyncPendsAndDeliversTheNewerOnes) {
  FakeWorker worker;
  RecordingHandler handler;
  KvEventSubscriber subscriber(&handler, PatientConfig());
  ASSERT_TRUE(subscriber.Start().ok());
  subscriber.AddWorker(0, worker.publish_endpoint(), worker.resync_endpoint());
  auto request = worker.NextRequest();
  ASSERT_TRUE(request);
  EXPECT_EQ(request->first, 0u);
  ASSERT_TRUE(worker.MakeLive(subscriber));

  worker.SendEvents(kInstanceA, StoredRange(1, 4));
  worker.SendEvents(kInstanceA, StoredRange(5, 6));
  ASSERT_TRUE(testing::PollUntil([&] { return subscriber.stats().events_received == 6; }));
  EXPECT_TRUE(handler.CopyCalls().empty());  // all buffered

  worker.Reply(request->second, {kInstanceA, ResyncMode::kReplay, 3, StoredRange(1, 3)});
  ASSERT_TRUE(handler.WaitFor([&] { return handler.last(0) == 6; }));
  auto calls = handler.CopyCalls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].kind, Call::Kind::kResync);
  EXPECT_EQ(calls[0].sequence, 3u);
  EXPECT_EQ(calls[0].num_events, 3u);
  for (uint64_t sequence = 4; sequence <= 6; ++sequence) {
    EXPECT_EQ(calls[sequence - 3].kind, Call::Kind::kEvent);
    EXPECT_EQ(calls[sequence - 3].sequence, sequence);
  }
  EXPECT_EQ(subscriber.stats().events_dropped, 3u);  // 1..3 came with the reply
  EXPECT_EQ(subscriber.stats().resyncs, 1u);
}

TEST(KvwireSubscriber, GapsDuplicatesAndRestarts) {
  FakeWorker worker;
  RecordingHandler handler;
  KvEventSubscriber subscriber(&handler, PatientConfig());
  ASSERT_TRUE(subscriber.Start().ok());
  subscriber.AddWorker(7, worker.publish_endpoint(), worker.resync_endpoint());
  auto request = worker.NextRequest();
  ASSERT_TRUE(request);
  ASSERT_TRUE(worker.MakeLive(subscriber));
  worker.Reply(request->second, {kInstanceA, ResyncMode::kReplay, 0, {}});
  worker.SendEvents(kInstanceA, StoredRange(1, 3));
  ASSERT_TRUE(handler.WaitFor([&] { return handler.last(7) == 3; }));

  // 4 is lost: 5 and 6 wait for a resync after 3.
  worker.SendEvents(kInstanceA, StoredRange(5, 6));
  request = worker.NextRequest();
  ASSERT_TRUE(request);
  EXPECT_EQ(request->first, 3u);
  EXPECT_EQ(handler.CopyCalls().size(), 4u);
  worker.Reply(request->second, {kInstanceA, ResyncMode::kReplay, 6, StoredRange(4, 6)});
  worker.SendEvents(kInstanceA, StoredRange(2, 2));  // a stale duplicate: dropped
  worker.SendEvents(kInstanceA, StoredRange(7, 7));
  ASSERT_TRUE(handler.WaitFor([&] { return handler.last(7) == 7; }));
  auto calls = handler.CopyCalls();
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[4].kind, Call::Kind::kResync);
  EXPECT_EQ(calls[4].first_sequence, 4u);
  EXPECT_EQ(calls[5].sequence, 7u);
  EXPECT_EQ(subscriber.stats().gaps, 1u);
  EXPECT_EQ(subscriber.stats().events_dropped, 3u);  // 5, 6 (in the reply) and 2

  // A new instance: forget, resync after 0, and its event 1 waits for the snapshot.
  worker.SendEvents(kInstanceB, StoredRange(1, 1));
  request = worker.NextRequest();
  ASSERT_TRUE(request);
  EXPECT_EQ(request->first, 0u);
  SequencedKvEvent snapshot_entry = Stored(0, 555);
  worker.Reply(request->second, {kInstanceB, ResyncMode::kSnapshot, 0, {snapshot_entry}});
  ASSERT_TRUE(handler.WaitFor([&] { return handler.last(7) == 1; }));
  calls = handler.CopyCalls();
  ASSERT_EQ(calls.size(), 9u);
  EXPECT_EQ(calls[6].kind, Call::Kind::kRestart);
  EXPECT_EQ(calls[7].kind, Call::Kind::kResync);
  EXPECT_TRUE(calls[7].snapshot);
  EXPECT_EQ(calls[8].kind, Call::Kind::kEvent);
  EXPECT_EQ(handler.model(7).blocks, (std::set<uint64_t>{555, 1001}));
  EXPECT_EQ(handler.out_of_order(), 0);
  EXPECT_EQ(subscriber.stats().restarts, 1u);
}

TEST(KvwireSubscriber, RetriesOnAFreshSocketAndIgnoresTheAbandonedRequest) {
  FakeWorker worker;
  RecordingHandler handler;
  SubscriberConfig config;
  config.resync_timeout = std::chrono::milliseconds(100);
  config.max_resync_wait = std::chrono::milliseconds(400);
  KvEventSubscriber subscriber(&handler, config);
  ASSERT_TRUE(subscriber.Start().ok());
  subscriber.AddWorker(1, worker.publish_endpoint(), worker.resync_endpoint());
  auto first = worker.NextRequest();  // left unanswered: the worker is "down"
  ASSERT_TRUE(first);
  auto second = worker.NextRequest();
  ASSERT_TRUE(second);
  EXPECT_NE(first->second, second->second) << "a retry should come from a new DEALER";
  EXPECT_GE(subscriber.stats().resync_timeouts, 1u);
  // The late answer to the first request goes nowhere; retries continue until one is answered.
  worker.Reply(first->second, {kInstanceA, ResyncMode::kReplay, 9, StoredRange(1, 9)});
  while (auto next = worker.NextRequest()) {
    worker.Reply(next->second, {kInstanceA, ResyncMode::kReplay, 2, StoredRange(1, 2)});
    if (handler.WaitFor([&] { return !handler.calls().empty(); })) break;
  }
  auto calls = handler.CopyCalls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].sequence, 2u);
}

TEST(KvwireSubscriber, RemovedWorkerIsNoLongerFollowedAndBadEndpointsAreSkipped) {
  FakeWorker worker;
  RecordingHandler handler;
  KvEventSubscriber subscriber(&handler, PatientConfig());
  subscriber.AddWorker(4, "nonsense://x", "nonsense://y");  // logged, skipped
  ASSERT_TRUE(subscriber.Start().ok());
  subscriber.AddWorker(5, worker.publish_endpoint(), worker.resync_endpoint());
  auto request = worker.NextRequest();
  ASSERT_TRUE(request);
  ASSERT_TRUE(worker.MakeLive(subscriber));
  EXPECT_EQ(subscriber.stats().workers, 1u);  // worker 4 was skipped
  subscriber.RemoveWorker(5);
  ASSERT_TRUE(testing::PollUntil([&] { return subscriber.stats().workers == 0; }));
  const uint64_t errors_after_removal = subscriber.stats().decode_errors;
  worker.Reply(request->second, {kInstanceA, ResyncMode::kReplay, 0, {}});
  worker.Send("junk");
  subscriber.Stop();
  EXPECT_EQ(subscriber.stats().decode_errors, errors_after_removal);
  EXPECT_TRUE(handler.CopyCalls().empty());
}

}  // namespace
}  // namespace k3::kvwire
