// kvwire end to end: real publishers and subscribers on loopback TCP (free ports).
#include <gtest/gtest.h>

#include <memory>

#include "kvwire/publisher.h"
#include "kvwire/subscriber.h"
#include "kvwire/test_support.h"

namespace k3::kvwire {
namespace {

using testing::Call;
using testing::EventGenerator;
using testing::RecordingHandler;

constexpr const char* kAnyPort = "tcp://127.0.0.1:*";

PublisherConfig FastConfig(std::string publish = kAnyPort, std::string resync = kAnyPort) {
  PublisherConfig config;
  config.publish_endpoint = std::move(publish);
  config.resync_endpoint = std::move(resync);
  config.heartbeat_interval = std::chrono::milliseconds(20);
  return config;
}

// A subscriber following one publisher as worker `worker`.
struct Follower {
  explicit Follower(SubscriberConfig config = {}) : subscriber(&handler, config) {
    EXPECT_TRUE(subscriber.Start().ok());
  }
  void Follow(int worker, const KvEventPublisher& publisher) {
    subscriber.AddWorker(worker, publisher.publish_endpoint(), publisher.resync_endpoint());
  }
  // Waits until `worker`'s rebuilt state is at `sequence` and equals `model`.
  bool WaitForState(int worker, uint64_t sequence, const testing::Model& model) {
    return handler.WaitFor(
        [&] { return handler.last(worker) == sequence && handler.model(worker) == model; });
  }
  RecordingHandler handler;  // declared first: outlives the subscriber
  KvEventSubscriber subscriber;
};

TEST(KvwireLive, ResyncThenEventsInOrder) {
  cache::KvEventChannel channel;
  KvEventPublisher publisher(&channel, FastConfig());
  ASSERT_TRUE(publisher.Start().ok());
  EXPECT_NE(publisher.publish_endpoint().find("tcp://127.0.0.1:"), std::string::npos);
  Follower follower;
  follower.Follow(0, publisher);
  ASSERT_TRUE(follower.handler.WaitFor([&] { return !follower.handler.calls().empty(); }));

  EventGenerator generator(1);
  generator.Publish(channel, 300);
  ASSERT_TRUE(follower.WaitForState(0, 300, generator.model()))
      << "at " << follower.handler.last(0);
  auto calls = follower.handler.CopyCalls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front().kind, Call::Kind::kResync);
  EXPECT_FALSE(calls.front().snapshot);  // the channel still had everything
  EXPECT_EQ(follower.handler.out_of_order(), 0);
  EXPECT_EQ(follower.handler.with_tokens(), 0);
  EXPECT_EQ(follower.subscriber.stats().decode_errors, 0u);
  // The state may come from a replay answered before the queue went out: wait for the sends.
  EXPECT_TRUE(testing::PollUntil([&] { return publisher.stats().events_sent == 300; }));
  EXPECT_GE(publisher.stats().resyncs_answered, 1u);
}

TEST(KvwireLive, LateSubscriberGetsSnapshotOfLiveSet) {
  cache::KvEventChannel channel(/*replay_capacity=*/8);
  KvEventPublisher publisher(&channel, FastConfig());
  ASSERT_TRUE(publisher.Start().ok());
  EventGenerator generator(2);
  generator.Publish(channel, 50);

  Follower follower;
  follower.Follow(3, publisher);
  ASSERT_TRUE(follower.WaitForState(3, 50, generator.model()));
  auto calls = follower.handler.CopyCalls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front().kind, Call::Kind::kResync);
  EXPECT_TRUE(calls.front().snapshot);
  EXPECT_EQ(calls.front().sequence, 50u);
  EXPECT_GE(publisher.stats().snapshots_sent, 1u);

  // And it keeps following.
  generator.Publish(channel, 20);
  EXPECT_TRUE(follower.WaitForState(3, 70, generator.model()));
  EXPECT_EQ(follower.handler.out_of_order(), 0);
}

TEST(KvwireLive, PublisherStartedAfterEventsSeedsItsMirror) {
  cache::KvEventChannel channel(/*replay_capacity=*/100);
  EventGenerator generator(3);
  generator.Publish(channel, 40);  // before the publisher exists: only in the replay buffer
  KvEventPublisher publisher(&channel, FastConfig());
  ASSERT_TRUE(publisher.Start().ok());
  generator.Publish(channel, 80);  // the buffer (100) now misses the first 20: snapshot
  Follower follower;
  follower.Follow(0, publisher);
  ASSERT_TRUE(follower.WaitForState(0, 120, generator.model()));
  EXPECT_TRUE(follower.handler.CopyCalls().front().snapshot);
}

TEST(KvwireLive, RestartedPublisherMakesSubscriberForgetAndResync) {
  EventGenerator generator(4);
  auto channel = std::make_unique<cache::KvEventChannel>();
  auto publisher = std::make_unique<KvEventPublisher>(channel.get(), FastConfig());
  ASSERT_TRUE(publisher->Start().ok());
  const std::string publish = publisher->publish_endpoint();
  const std::string resync = publisher->resync_endpoint();
  const uint64_t first_instance = publisher->instance_id();
  Follower follower;
  follower.Follow(0, *publisher);
  generator.Publish(*channel, 30);
  ASSERT_TRUE(follower.WaitForState(0, 30, generator.model()));

  // A new process: new channel (sequences from 1), new instance id, same endpoints.
  publisher.reset();
  channel = std::make_unique<cache::KvEventChannel>();
  publisher = std::make_unique<KvEventPublisher>(channel.get(), FastConfig(publish, resync));
  ASSERT_TRUE(testing::PollUntil([&] { return publisher->Start().ok(); }));  // port released
  EXPECT_NE(publisher->instance_id(), first_instance);
  EventGenerator second(5);
  second.Publish(*channel, 10);
  ASSERT_TRUE(follower.WaitForState(0, 10, second.model())) << follower.handler.last(0);
  auto calls = follower.handler.CopyCalls();
  auto restart = std::find_if(calls.begin(), calls.end(),
                              [](const Call& c) { return c.kind == Call::Kind::kRestart; });
  ASSERT_NE(restart, calls.end());
  EXPECT_TRUE(std::any_of(restart, calls.end(),
                          [](const Call& c) { return c.kind == Call::Kind::kResync; }));
  EXPECT_GE(follower.subscriber.stats().restarts, 1u);
  EXPECT_EQ(follower.handler.out_of_order(), 0);
}

TEST(KvwireLive, RequestResyncReplaysFromTheGivenSequence) {
  cache::KvEventChannel channel;
  KvEventPublisher publisher(&channel, FastConfig());
  ASSERT_TRUE(publisher.Start().ok());
  Follower follower;
  follower.Follow(0, publisher);
  EventGenerator generator(6);
  generator.Publish(channel, 40);
  ASSERT_TRUE(follower.WaitForState(0, 40, generator.model()));

  // From another thread, as after a gap the handler noticed itself.
  const size_t before = follower.handler.CopyCalls().size();
  follower.subscriber.RequestResync(0, 35);
  auto is_replay_after_35 = [](const Call& c) {
    return c.kind == Call::Kind::kResync && !c.snapshot && c.first_sequence == 36 &&
           c.sequence == 40 && c.num_events == 5;
  };
  ASSERT_TRUE(follower.handler.WaitFor([&] {
    const auto& calls = follower.handler.calls();
    return std::any_of(calls.begin() + long(before), calls.end(), is_replay_after_35);
  }));

  // The state at 40 may have come from resync replies alone, before the SUB's subscription took
  // effect (slow joiner under load); its first message would then ask once more, and events
  // arriving meanwhile (45 among them) would reach the handler inside that reply, not as events.
  // One event that reaches the state (as an event, or in that last resync) shows the SUB is live
  // and nothing is pending.
  generator.Publish(channel, 1);
  ASSERT_TRUE(follower.WaitForState(0, 41, generator.model()));

  // From inside a callback, on the subscriber thread: takes effect before the next event.
  follower.handler.SetEventHook([&](int worker, const cache::SequencedKvEvent& e) {
    if (e.sequence == 45) follower.subscriber.RequestResync(worker, 42);
  });
  generator.Publish(channel, 19);
  ASSERT_TRUE(follower.WaitForState(0, 60, generator.model()));
  auto calls = follower.handler.CopyCalls();
  auto at_45 = std::find_if(calls.begin(), calls.end(), [](const Call& c) {
    return c.kind == Call::Kind::kEvent && c.sequence == 45;
  });
  ASSERT_NE(at_45, calls.end());
  ASSERT_NE(at_45 + 1, calls.end());
  EXPECT_EQ(at_45[1].kind, Call::Kind::kResync);
  EXPECT_FALSE(at_45[1].snapshot);
  EXPECT_EQ(at_45[1].first_sequence, 43u);
  EXPECT_EQ(follower.handler.out_of_order(), 0);
}

TEST(KvwireLive, BindErrorsAreStatuses) {
  cache::KvEventChannel channel;
  KvEventPublisher first(&channel, FastConfig());
  ASSERT_TRUE(first.Start().ok());
  KvEventPublisher clash(&channel, FastConfig(first.publish_endpoint()));
  base::Status in_use = clash.Start();
  EXPECT_EQ(in_use.code(), base::StatusCode::kUnavailable) << in_use.ToString();
  KvEventPublisher bad(&channel, FastConfig("nonsense://x"));
  base::Status invalid = bad.Start();
  EXPECT_FALSE(invalid.ok());
  EXPECT_NE(invalid.code(), base::StatusCode::kInternal) << invalid.ToString();
  EXPECT_EQ(first.Start().code(), base::StatusCode::kFailedPrecondition);
  first.Stop();
  first.Stop();  // idempotent
}

}  // namespace
}  // namespace k3::kvwire
