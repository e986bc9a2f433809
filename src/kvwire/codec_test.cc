// The kvwire codec (round trips, malformed input) and the publisher's state mirror.
#include "kvwire/codec.h"

#include <gtest/gtest.h>

#include <limits>
#include <msgpack.hpp>
#include <random>
#include <unordered_map>

#include "kvwire/state_mirror.h"
#include "kvwire/test_support.h"

namespace k3::kvwire {
namespace {

using cache::KvEventKind;
using cache::SequencedKvEvent;

SequencedKvEvent MakeEvent(uint64_t sequence, KvEventKind kind, std::vector<uint64_t> hashes,
                           std::optional<uint64_t> parent, int64_t position, int block_size) {
  SequencedKvEvent e;
  e.sequence = sequence;
  e.event.kind = kind;
  e.event.block_hashes = std::move(hashes);
  e.event.parent_hash = parent;
  e.event.position = position;
  e.event.block_size = block_size;
  return e;
}

// One event of every kind, with the extremes of every field.
std::vector<SequencedKvEvent> EveryKind() {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  return {
      MakeEvent(1, KvEventKind::kBlockStored, {1, 2, kMax}, std::nullopt, 48, 16),
      MakeEvent(2, KvEventKind::kBlockStored, {0}, kMax, std::numeric_limits<int64_t>::max(),
                std::numeric_limits<int32_t>::max()),
      MakeEvent(3, KvEventKind::kBlockRemoved, {kMax, 5}, std::nullopt, -7, -1),
      MakeEvent(4, KvEventKind::kAllCleared, {}, std::nullopt, std::numeric_limits<int64_t>::min(),
                std::numeric_limits<int32_t>::min()),
      MakeEvent(5, KvEventKind::kCheckpointStored, {42}, std::nullopt, 64, 16),
      MakeEvent(kMax, KvEventKind::kCheckpointRemoved, {42}, 3, 64, 0),
  };
}

void ExpectSameEvents(const std::vector<SequencedKvEvent>& got,
                      const std::vector<SequencedKvEvent>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t event_idx = 0; event_idx < got.size(); ++event_idx) {
    SCOPED_TRACE("event " + std::to_string(event_idx));
    EXPECT_EQ(got[event_idx].sequence, want[event_idx].sequence);
    EXPECT_EQ(got[event_idx].event.kind, want[event_idx].event.kind);
    EXPECT_EQ(got[event_idx].event.block_hashes, want[event_idx].event.block_hashes);
    EXPECT_EQ(got[event_idx].event.parent_hash, want[event_idx].event.parent_hash);
    EXPECT_EQ(got[event_idx].event.position, want[event_idx].event.position);
    EXPECT_EQ(got[event_idx].event.block_size, want[event_idx].event.block_size);
    EXPECT_TRUE(got[event_idx].event.token_ids.empty());
  }
}

template <typename... Fields>
std::string Pack(const Fields&... fields) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_array(sizeof...(Fields));
  (packer.pack(fields), ...);
  return {buffer.data(), buffer.size()};
}

TEST(KvwireCodec, EventsBatchRoundTripsEveryKind) {
  auto events = EveryKind();
  events[0].event.token_ids = {1, 2, 3};  // not sent
  std::string bytes = EncodeEventsBatch(0xfeedface12345678ull, events);
  auto batch = DecodeEventsBatch(bytes);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->instance_id, 0xfeedface12345678ull);
  events[0].event.token_ids.clear();
  ExpectSameEvents(batch->events, events);

  auto heartbeat = DecodeEventsBatch(EncodeEventsBatch(7, {}));
  ASSERT_TRUE(heartbeat.ok());
  EXPECT_EQ(heartbeat->instance_id, 7u);
  EXPECT_TRUE(heartbeat->events.empty());
}

// The format of codec.h byte for byte (these are also the fuzzer's seeds in scripts/fuzz.sh).
TEST(KvwireCodec, GoldenBytes) {
  const std::vector<SequencedKvEvent> batch = {
      MakeEvent(1, KvEventKind::kBlockStored, {7, 8}, std::nullopt, 32, 16)};
  EXPECT_EQ(EncodeEventsBatch(5, batch),
            std::string("\x94\x01\x01\x05\x91\x96\x01\x00\x92\x07\x08\xc0\x20\x10", 14));
  EXPECT_EQ(EncodeResyncRequest({5}), std::string("\x93\x02\x01\x05", 4));
  const ResyncReply reply{
      5, ResyncMode::kSnapshot, 10, {MakeEvent(0, KvEventKind::kBlockStored, {7}, 3, 16, 16)}};
  EXPECT_EQ(EncodeResyncReply(reply),
            std::string("\x96\x03\x01\x05\x01\x0a\x91\x96\x00\x00\x91\x07\x03\x10\x10", 15));
}

TEST(KvwireCodec, ResyncMessagesRoundTrip) {
  for (uint64_t after : {uint64_t{0}, uint64_t{12345}, std::numeric_limits<uint64_t>::max()}) {
    auto request = DecodeResyncRequest(EncodeResyncRequest({after}));
    ASSERT_TRUE(request.ok()) << request.status().ToString();
    EXPECT_EQ(request->after, after);
  }
  for (ResyncMode mode : {ResyncMode::kReplay, ResyncMode::kSnapshot}) {
    ResyncReply reply{99, mode, 6, EveryKind()};
    auto decoded = DecodeResyncReply(EncodeResyncReply(reply));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->instance_id, 99u);
    EXPECT_EQ(decoded->mode, mode);
    EXPECT_EQ(decoded->last_sequence, 6u);
    ExpectSameEvents(decoded->events, reply.events);
  }
}

TEST(KvwireCodec, RejectsEveryTruncationAndTrailingBytes) {
  const std::string batch = EncodeEventsBatch(1, EveryKind());
  const std::string reply = EncodeResyncReply({1, ResyncMode::kSnapshot, 3, EveryKind()});
  const std::string request = EncodeResyncRequest({5});
  for (size_t size = 0; size < batch.size(); ++size) {
    EXPECT_FALSE(DecodeEventsBatch(batch.substr(0, size)).ok()) << size;
  }
  for (size_t size = 0; size < reply.size(); ++size) {
    EXPECT_FALSE(DecodeResyncReply(reply.substr(0, size)).ok()) << size;
  }
  for (size_t size = 0; size < request.size(); ++size) {
    EXPECT_FALSE(DecodeResyncRequest(request.substr(0, size)).ok()) << size;
  }
  auto trailing = DecodeEventsBatch(batch + '\0');
  ASSERT_FALSE(trailing.ok());
  EXPECT_EQ(trailing.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(trailing.status().message().find("trailing"), std::string::npos)
      << trailing.status().ToString();
  EXPECT_FALSE(DecodeResyncRequest(request + request).ok());
}

TEST(KvwireCodec, RejectsWrongTypeVersionAndFields) {
  const std::vector<uint64_t> hashes = {1, 2};
  msgpack::type::nil_t nil;
  auto event = [&](uint64_t kind) {
    return std::make_tuple(uint64_t{1}, kind, hashes, nil, 0, 16);
  };
  const std::vector<decltype(event(0))> good = {event(0)};
  ASSERT_TRUE(DecodeEventsBatch(Pack(1, 1, 5, good)).ok());
  struct Case {
    const char* name;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"request as batch", EncodeResyncRequest({1})},
      {"reply as batch", EncodeResyncReply({})},
      {"version 2", Pack(1, 2, 5, good)},
      {"version 0", Pack(1, 0, 5, good)},
      {"type 9", Pack(9, 1, 5, good)},
      {"negative type", Pack(-1, 1, 5, good)},
      {"missing events", Pack(1, 1, 5)},
      {"extra element", Pack(1, 1, 5, good, 0)},
      {"negative instance", Pack(1, 1, -5, good)},
      {"kind 5", Pack(1, 1, 5, std::vector{event(5)})},
      {"kind 255", Pack(1, 1, 5, std::vector{event(255)})},
      {"string instance", Pack(1, 1, std::string("x"), good)},
      {"float hash",
       Pack(1, 1, 5, std::vector{std::make_tuple(1, 0, std::vector{1.5}, nil, 0, 16)})},
      {"negative sequence", Pack(1, 1, 5, std::vector{std::make_tuple(-1, 0, hashes, nil, 0, 16)})},
      {"parent string",
       Pack(1, 1, 5, std::vector{std::make_tuple(1, 0, hashes, std::string("p"), 0, 16)})},
      {"position too big",
       Pack(1, 1, 5, std::vector{std::make_tuple(1, 0, hashes, nil, ~uint64_t{0}, 16)})},
      {"block size too big",
       Pack(1, 1, 5, std::vector{std::make_tuple(1, 0, hashes, nil, 0, int64_t{1} << 31)})},
      {"event of 5 fields", Pack(1, 1, 5, std::vector{std::make_tuple(1, 0, hashes, nil, 0)})},
      {"event not an array", Pack(1, 1, 5, std::vector{1, 2})},
      {"hashes nested", Pack(1, 1, 5,
                             std::vector{std::make_tuple(
                                 1, 0, std::vector<std::vector<uint64_t>>{hashes}, nil, 0, 16)})},
      {"map", std::string("\x81\x01\x01", 3)},
      {"not an array", std::string("\x05", 1)},
      {"nil", std::string("\xc0", 1)},
      {"reserved byte", std::string("\xc1", 1)},
  };
  for (const Case& c : cases) {
    auto batch = DecodeEventsBatch(c.bytes);
    EXPECT_FALSE(batch.ok()) << c.name;
    if (!batch.ok()) {
      EXPECT_EQ(batch.status().code(), base::StatusCode::kInvalidArgument) << c.name;
    }
  }
  EXPECT_FALSE(DecodeResyncReply(Pack(3, 1, 5, 2, 0, good)).ok()) << "mode 2";
  EXPECT_FALSE(DecodeResyncRequest(Pack(2, 1, -3)).ok()) << "negative after";
}

TEST(KvwireCodec, RejectsOversizedArraysWithoutAllocatingThem) {
  // An events array that claims 2^32-1 elements, and one claiming more hashes than the cap.
  std::string huge = Pack(1, 1, 5);
  huge[0] = '\x94';  // 4 elements: append the events array header by hand
  huge += std::string("\xdd\xff\xff\xff\xff", 5);
  EXPECT_FALSE(DecodeEventsBatch(huge).ok());
  std::vector<uint64_t> many(kMaxHashesPerMessage + 1, 1);
  msgpack::type::nil_t nil;
  auto too_many =
      DecodeEventsBatch(Pack(1, 1, 5, std::vector{std::make_tuple(1, 0, many, nil, 0, 16)}));
  EXPECT_FALSE(too_many.ok());
  // Within one event the cap holds; across events too.
  std::vector<uint64_t> half(kMaxHashesPerMessage / 2 + 1, 1);
  auto across = DecodeEventsBatch(Pack(1, 1, 5,
                                       std::vector{std::make_tuple(1, 0, half, nil, 0, 16),
                                                   std::make_tuple(2, 0, half, nil, 0, 16)}));
  ASSERT_FALSE(across.ok());
  EXPECT_NE(across.status().message().find("too many"), std::string::npos)
      << across.status().ToString();
}

TEST(KvwireCodec, RandomAndMutatedBytesNeverCrash) {
  std::mt19937 rng(12345);
  const std::string valid[] = {EncodeEventsBatch(3, EveryKind()), EncodeResyncRequest({77}),
                               EncodeResyncReply({3, ResyncMode::kReplay, 9, EveryKind()})};
  int decoded_ok = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes;
    if (trial % 2 == 0) {  // random bytes
      bytes.resize(rng() % 64);
      for (char& c : bytes) c = static_cast<char>(rng());
    } else {  // a valid message with a few bytes changed
      bytes = valid[rng() % 3];
      for (int flip = 0, flips = 1 + int(rng() % 3); flip < flips; ++flip) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
    }
    decoded_ok += DecodeEventsBatch(bytes).ok();
    decoded_ok += DecodeResyncRequest(bytes).ok();
    decoded_ok += DecodeResyncReply(bytes).ok();
  }
  EXPECT_GT(decoded_ok, 0);  // some mutations only change values
}

// ---- StateMirror ----

TEST(KvwireStateMirror, SnapshotListsParentsBeforeChildrenAndCheckpoints) {
  StateMirror mirror;
  mirror.Apply(MakeEvent(1, KvEventKind::kBlockStored, {10, 11, 12}, std::nullopt, 48, 16));
  mirror.Apply(MakeEvent(2, KvEventKind::kBlockStored, {20}, 11, 48, 16));  // a branch at 11
  mirror.Apply(MakeEvent(3, KvEventKind::kCheckpointStored, {11}, std::nullopt, 32, 16));
  mirror.Apply(MakeEvent(4, KvEventKind::kBlockRemoved, {12}, std::nullopt, 48, 16));
  mirror.Apply(MakeEvent(5, KvEventKind::kBlockStored, {30}, 999, 80, 16));  // parent unknown
  EXPECT_EQ(mirror.sequence(), 5u);
  auto snapshot = mirror.Snapshot();
  ASSERT_EQ(snapshot.size(), 5u);
  std::unordered_map<uint64_t, size_t> index;
  for (size_t event_idx = 0; event_idx < snapshot.size(); ++event_idx) {
    const auto& e = snapshot[event_idx];
    EXPECT_EQ(e.sequence, 0u);
    ASSERT_EQ(e.event.block_hashes.size(), 1u);
    if (e.event.kind == KvEventKind::kBlockStored) index[e.event.block_hashes[0]] = event_idx;
  }
  ASSERT_EQ(index.size(), 4u);
  EXPECT_LT(index[10], index[11]);
  EXPECT_LT(index[11], index[20]);
  const auto& b11 = snapshot[index[11]].event;
  EXPECT_EQ(b11.parent_hash, std::optional<uint64_t>(10));
  EXPECT_EQ(b11.position, 32);  // the middle block of a 3-block event ending at 48
  EXPECT_EQ(snapshot[index[30]].event.parent_hash, std::optional<uint64_t>(999));
  EXPECT_EQ(snapshot.back().event.kind, KvEventKind::kCheckpointStored);
  EXPECT_EQ(snapshot.back().event.block_hashes[0], 11u);

  mirror.Apply(MakeEvent(6, KvEventKind::kAllCleared, {}, std::nullopt, 0, 16));
  EXPECT_TRUE(mirror.Snapshot().empty());
  EXPECT_EQ(mirror.sequence(), 6u);
}

TEST(KvwireStateMirror, SnapshotRebuildsTheGeneratedState) {
  testing::EventGenerator generator(7);
  StateMirror mirror;
  for (uint64_t sequence = 1; sequence <= 500; ++sequence) {
    mirror.Apply({sequence, generator.Next()});
  }
  testing::Model rebuilt;
  for (const auto& e : mirror.Snapshot()) rebuilt.Apply(e.event);
  EXPECT_EQ(rebuilt, generator.model());
  EXPECT_EQ(mirror.num_blocks(), generator.model().blocks.size());
}

}  // namespace
}  // namespace k3::kvwire
