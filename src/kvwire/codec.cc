#include "kvwire/codec.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <msgpack.hpp>
#include <new>
#include <optional>
#include <utility>

#include "base/check.h"

namespace k3::kvwire {
namespace {

using cache::KvEventKind;
using cache::SequencedKvEvent;
using Packer = msgpack::packer<msgpack::sbuffer>;

constexpr uint32_t kEventFields = 6;
constexpr uint8_t kMaxKind = static_cast<uint8_t>(KvEventKind::kCheckpointRemoved);
// Deepest array nesting: message -> events -> event -> hashes.
constexpr size_t kMaxDepth = 4;

// ---- encoding ----

void PackHeader(Packer& packer, MessageType type, uint32_t num_fields) {
  packer.pack_array(num_fields);
  packer.pack_uint8(static_cast<uint8_t>(type));
  packer.pack_uint64(kWireVersion);
}

void PackEvents(Packer& packer, std::span<const SequencedKvEvent> events) {
  K3_CHECK(events.size() <= kMaxEventsPerMessage) << events.size() << " events in one message";
  K3_CHECK(CountHashes(events) <= kMaxHashesPerMessage) << "too many hashes in one message";
  packer.pack_array(static_cast<uint32_t>(events.size()));
  for (const SequencedKvEvent& e : events) {
    packer.pack_array(kEventFields);
    packer.pack_uint64(e.sequence);
    packer.pack_uint8(static_cast<uint8_t>(e.event.kind));
    packer.pack_array(static_cast<uint32_t>(e.event.block_hashes.size()));
    for (cache::BlockHash hash : e.event.block_hashes) packer.pack_uint64(hash);
    if (e.event.parent_hash) {
      packer.pack_uint64(*e.event.parent_hash);
    } else {
      packer.pack_nil();
    }
    packer.pack_int64(e.event.position);
    packer.pack_int32(static_cast<int32_t>(e.event.block_size));
  }
}

std::string ToString(const msgpack::sbuffer& buffer) { return {buffer.data(), buffer.size()}; }

// ---- decoding ----

base::Status Malformed(std::string_view message, std::string_view what) {
  return base::InvalidArgument("kvwire " + std::string(message) + ": " + std::string(what));
}

std::optional<uint64_t> AsU64(const msgpack::object& o) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) return o.via.u64;
  return std::nullopt;
}

std::optional<int64_t> AsI64(const msgpack::object& o) {
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  if (o.type == msgpack::type::POSITIVE_INTEGER &&
      o.via.u64 <= uint64_t{std::numeric_limits<int64_t>::max()}) {
    return static_cast<int64_t>(o.via.u64);
  }
  return std::nullopt;
}

// Exactly one msgpack value spanning all of `bytes`. Every array element takes at least one byte,
// so no valid array is longer than the input: capping arrays at the input size (and the message
// caps) bounds what the unpacker allocates before it finds a truncation.
base::Result<msgpack::object_handle> UnpackOne(std::string_view bytes, std::string_view message) {
  if (bytes.empty()) return Malformed(message, "empty message");
  const size_t max_array = std::min({bytes.size(), kMaxEventsPerMessage, kMaxHashesPerMessage});
  // Maps, strings, binaries and extensions never appear in our messages: allow none.
  const msgpack::unpack_limit limit(max_array, 0, 0, 0, 0, kMaxDepth);
  size_t offset = 0;
  try {
    msgpack::object_handle handle =
        msgpack::unpack(bytes.data(), bytes.size(), offset, nullptr, nullptr, limit);
    if (offset != bytes.size()) {
      return Malformed(message, std::to_string(bytes.size() - offset) + " trailing bytes");
    }
    return handle;
  } catch (const msgpack::insufficient_bytes&) {
    return Malformed(message, "truncated");
  } catch (const std::bad_alloc&) {
    return Malformed(message, "too large to unpack");
  } catch (const std::exception& e) {
    return Malformed(message, std::string("not valid msgpack (") + e.what() + ")");
  }
}

// Checks [type, version, ...] with `num_fields` elements; returns the elements.
base::Result<const msgpack::object*> CheckHeader(const msgpack::object& root, MessageType type,
                                                 uint32_t num_fields, std::string_view message) {
  if (root.type != msgpack::type::ARRAY) return Malformed(message, "not an array");
  const msgpack::object_array& fields = root.via.array;
  if (fields.size < 2) return Malformed(message, "fewer than 2 elements");
  auto got_type = AsU64(fields.ptr[0]);
  if (!got_type || *got_type != static_cast<uint8_t>(type)) {
    return Malformed(message, "wrong message type");
  }
  auto version = AsU64(fields.ptr[1]);
  if (!version || *version != kWireVersion) {
    return Malformed(message,
                     "unsupported format version (want " + std::to_string(kWireVersion) + ")");
  }
  if (fields.size != num_fields) {
    return Malformed(message,
                     std::to_string(fields.size) + " elements, want " + std::to_string(num_fields));
  }
  return fields.ptr;
}

// One event; `hashes_left` counts down the message's hash budget.
base::Status DecodeEvent(const msgpack::object& o, size_t* hashes_left, SequencedKvEvent* out) {
  if (o.type != msgpack::type::ARRAY || o.via.array.size != kEventFields) {
    return base::InvalidArgument("not an array of 6 elements");
  }
  const msgpack::object* f = o.via.array.ptr;
  auto sequence = AsU64(f[0]);
  if (!sequence) return base::InvalidArgument("sequence is not a u64");
  auto kind = AsU64(f[1]);
  if (!kind || *kind > kMaxKind) return base::InvalidArgument("kind out of range");
  if (f[2].type != msgpack::type::ARRAY) return base::InvalidArgument("hashes not an array");
  const msgpack::object_array& hashes = f[2].via.array;
  if (hashes.size > *hashes_left) return base::InvalidArgument("too many block hashes");
  *hashes_left -= hashes.size;
  std::optional<uint64_t> parent;
  if (f[3].type != msgpack::type::NIL) {
    parent = AsU64(f[3]);
    if (!parent) return base::InvalidArgument("parent is neither nil nor a u64");
  }
  auto position = AsI64(f[4]);
  if (!position) return base::InvalidArgument("position is not an i64");
  auto block_size = AsI64(f[5]);
  if (!block_size || *block_size < std::numeric_limits<int32_t>::min() ||
      *block_size > std::numeric_limits<int32_t>::max()) {
    return base::InvalidArgument("block_size is not an i32");
  }
  out->sequence = *sequence;
  out->event.kind = static_cast<KvEventKind>(*kind);
  out->event.block_hashes.resize(hashes.size);
  for (uint32_t hash_idx = 0; hash_idx < hashes.size; ++hash_idx) {
    auto hash = AsU64(hashes.ptr[hash_idx]);
    if (!hash) return base::InvalidArgument("block hash is not a u64");
    out->event.block_hashes[hash_idx] = *hash;
  }
  out->event.parent_hash = parent;
  out->event.position = *position;
  out->event.block_size = static_cast<int>(*block_size);
  return base::Status::Ok();
}

base::Result<std::vector<SequencedKvEvent>> DecodeEvents(const msgpack::object& o,
                                                         std::string_view message) {
  if (o.type != msgpack::type::ARRAY) return Malformed(message, "events are not an array");
  const msgpack::object_array& array = o.via.array;
  if (array.size > kMaxEventsPerMessage) return Malformed(message, "too many events");
  std::vector<SequencedKvEvent> events(array.size);
  size_t hashes_left = kMaxHashesPerMessage;
  for (uint32_t event_idx = 0; event_idx < array.size; ++event_idx) {
    base::Status status = DecodeEvent(array.ptr[event_idx], &hashes_left, &events[event_idx]);
    if (!status.ok()) {
      return Malformed(message, "event " + std::to_string(event_idx) + ": " + status.message());
    }
  }
  return events;
}

}  // namespace

size_t CountHashes(std::span<const SequencedKvEvent> events) {
  size_t total = 0;
  for (const SequencedKvEvent& e : events) total += e.event.block_hashes.size();
  return total;
}

std::string EncodeEventsBatch(uint64_t instance_id, std::span<const SequencedKvEvent> events) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  PackHeader(packer, MessageType::kEventsBatch, 4);
  packer.pack_uint64(instance_id);
  PackEvents(packer, events);
  return ToString(buffer);
}

std::string EncodeResyncRequest(const ResyncRequest& request) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  PackHeader(packer, MessageType::kResyncRequest, 3);
  packer.pack_uint64(request.after);
  return ToString(buffer);
}

std::string EncodeResyncReply(const ResyncReply& reply) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  PackHeader(packer, MessageType::kResyncReply, 6);
  packer.pack_uint64(reply.instance_id);
  packer.pack_uint8(static_cast<uint8_t>(reply.mode));
  packer.pack_uint64(reply.last_sequence);
  PackEvents(packer, reply.events);
  return ToString(buffer);
}

base::Result<EventsBatch> DecodeEventsBatch(std::string_view bytes) {
  constexpr std::string_view kName = "events batch";
  K3_ASSIGN_OR_RETURN(msgpack::object_handle handle, UnpackOne(bytes, kName));
  K3_ASSIGN_OR_RETURN(const msgpack::object* fields,
                      CheckHeader(handle.get(), MessageType::kEventsBatch, 4, kName));
  EventsBatch batch;
  auto instance_id = AsU64(fields[2]);
  if (!instance_id) return Malformed(kName, "instance id is not a u64");
  batch.instance_id = *instance_id;
  K3_ASSIGN_OR_RETURN(batch.events, DecodeEvents(fields[3], kName));
  return batch;
}

base::Result<ResyncRequest> DecodeResyncRequest(std::string_view bytes) {
  constexpr std::string_view kName = "resync request";
  K3_ASSIGN_OR_RETURN(msgpack::object_handle handle, UnpackOne(bytes, kName));
  K3_ASSIGN_OR_RETURN(const msgpack::object* fields,
                      CheckHeader(handle.get(), MessageType::kResyncRequest, 3, kName));
  auto after = AsU64(fields[2]);
  if (!after) return Malformed(kName, "`after` is not a u64");
  return ResyncRequest{*after};
}

base::Result<ResyncReply> DecodeResyncReply(std::string_view bytes) {
  constexpr std::string_view kName = "resync reply";
  K3_ASSIGN_OR_RETURN(msgpack::object_handle handle, UnpackOne(bytes, kName));
  K3_ASSIGN_OR_RETURN(const msgpack::object* fields,
                      CheckHeader(handle.get(), MessageType::kResyncReply, 6, kName));
  ResyncReply reply;
  auto instance_id = AsU64(fields[2]);
  if (!instance_id) return Malformed(kName, "instance id is not a u64");
  reply.instance_id = *instance_id;
  auto mode = AsU64(fields[3]);
  if (!mode || *mode > static_cast<uint8_t>(ResyncMode::kSnapshot)) {
    return Malformed(kName, "mode out of range");
  }
  reply.mode = static_cast<ResyncMode>(*mode);
  auto last_sequence = AsU64(fields[4]);
  if (!last_sequence) return Malformed(kName, "last_sequence is not a u64");
  reply.last_sequence = *last_sequence;
  K3_ASSIGN_OR_RETURN(reply.events, DecodeEvents(fields[5], kName));
  return reply;
}

}  // namespace k3::kvwire
