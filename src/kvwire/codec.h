// kvwire codec: the wire format of a replica's KV cache events (cache/kv_events.h) between a
// worker's KvEventPublisher and the router's KvEventSubscriber. Pure functions, no sockets;
// thread-safe (no state).
//
// Every message is exactly one msgpack value: an array whose element 0 is the message type (a
// small positive integer) and element 1 the format version (kWireVersion = 1). Nothing may follow
// the value. Types:
//
//   kEventsBatch   (PUB socket)        [1, 1, instance_id u64, [event...]]
//   kResyncRequest (router -> worker)  [2, 1, after u64]       "send me everything after `after`"
//   kResyncReply   (worker -> router)  [3, 1, instance_id u64, mode u8, last_sequence u64,
//                                       [event...]]
//
//   event = [sequence u64, kind u8 (cache::KvEventKind, 0..4), [block hash u64...],
//            parent (nil or u64), position i64, block_size i32]
//
// instance_id is random per publisher: a new one means the worker restarted and its sequence
// numbers started again. Token ids are never sent (decoded events have empty token_ids).
// Reply modes: kReplay = the channel's events with sequence > after, oldest first, ending at
// last_sequence (empty when nothing happened since `after`); kSnapshot = the worker's whole cache
// as of last_sequence: kBlockStored events with one hash each and its parent, parents before
// children, then kCheckpointStored events; snapshot events carry sequence 0.
//
// A batch with no events is a heartbeat (it still names the instance).
//
// Decoders take untrusted bytes: anything malformed (not msgpack, truncated, trailing bytes, wrong
// type or version, integers out of range, more than kMaxEventsPerMessage events or
// kMaxHashesPerMessage hashes) is an INVALID_ARGUMENT Status, never a crash or an exception.
// Encoders K3_CHECK the same caps (callers split batches; see publisher.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cache/kv_events.h"

namespace k3::kvwire {

inline constexpr uint64_t kWireVersion = 1;
inline constexpr size_t kMaxEventsPerMessage = size_t{1} << 20;
inline constexpr size_t kMaxHashesPerMessage = size_t{1} << 20;

enum class MessageType : uint8_t {
  kEventsBatch = 1,    // PUB: a batch of sequenced events (or a heartbeat)
  kResyncRequest = 2,  // router -> worker
  kResyncReply = 3,    // worker -> router
};

enum class ResyncMode : uint8_t {
  kReplay = 0,    // the events after the requested sequence
  kSnapshot = 1,  // the whole current state; replaces what the router knew
};

struct EventsBatch {
  uint64_t instance_id = 0;
  std::vector<cache::SequencedKvEvent> events;  // ascending sequence (not checked on decode)
};

struct ResyncRequest {
  uint64_t after = 0;
};

struct ResyncReply {
  uint64_t instance_id = 0;
  ResyncMode mode = ResyncMode::kReplay;
  uint64_t last_sequence = 0;  // the state the reply brings the router to
  std::vector<cache::SequencedKvEvent> events;
};

// Total block hashes in `events` (what kMaxHashesPerMessage limits).
size_t CountHashes(std::span<const cache::SequencedKvEvent> events);

std::string EncodeEventsBatch(uint64_t instance_id,
                              std::span<const cache::SequencedKvEvent> events);
std::string EncodeResyncRequest(const ResyncRequest& request);
std::string EncodeResyncReply(const ResyncReply& reply);

base::Result<EventsBatch> DecodeEventsBatch(std::string_view bytes);
base::Result<ResyncRequest> DecodeResyncRequest(std::string_view bytes);
base::Result<ResyncReply> DecodeResyncReply(std::string_view bytes);

}  // namespace k3::kvwire
