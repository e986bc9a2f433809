// kvwire_fuzzer: arbitrary bytes as each kvwire message (src/kvwire/codec.h): an events batch, a
// resync request and a resync reply. Checks:
//  - no decoder crashes, throws or leaks; every failure is INVALID_ARGUMENT;
//  - an accepted message respects the caps (events, hashes) and the enums' ranges, carries no
//    token ids, and re-encodes to bytes that decode to the same message, whose encoding is then a
//    fixed point (our encoder is canonical even where the input used wider integer forms).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "kvwire/codec.h"

namespace {

using k3::cache::KvEventKind;
using k3::cache::SequencedKvEvent;
using k3::kvwire::CountHashes;

void CheckEvents(const std::vector<SequencedKvEvent>& events) {
  K3_CHECK(events.size() <= k3::kvwire::kMaxEventsPerMessage);
  K3_CHECK(CountHashes(events) <= k3::kvwire::kMaxHashesPerMessage);
  for (const SequencedKvEvent& e : events) {
    K3_CHECK(static_cast<int>(e.event.kind) >= 0 &&
             e.event.kind <= KvEventKind::kCheckpointRemoved);
    K3_CHECK(e.event.token_ids.empty());
  }
}

bool SameEvents(const std::vector<SequencedKvEvent>& a, const std::vector<SequencedKvEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t event_idx = 0; event_idx < a.size(); ++event_idx) {
    const auto& x = a[event_idx];
    const auto& y = b[event_idx];
    if (x.sequence != y.sequence || x.event.kind != y.event.kind ||
        x.event.block_hashes != y.event.block_hashes ||
        x.event.parent_hash != y.event.parent_hash || x.event.position != y.event.position ||
        x.event.block_size != y.event.block_size) {
      return false;
    }
  }
  return true;
}

template <typename T>
void CheckFailure(const k3::base::Result<T>& result) {
  K3_CHECK(result.status().code() == k3::base::StatusCode::kInvalidArgument)
      << result.status().ToString();
}

void FuzzBatch(std::string_view bytes) {
  auto batch = k3::kvwire::DecodeEventsBatch(bytes);
  if (!batch.ok()) return CheckFailure(batch);
  CheckEvents(batch->events);
  const std::string encoded = k3::kvwire::EncodeEventsBatch(batch->instance_id, batch->events);
  auto again = k3::kvwire::DecodeEventsBatch(encoded);
  K3_CHECK(again.ok()) << again.status().ToString();
  K3_CHECK(again->instance_id == batch->instance_id && SameEvents(again->events, batch->events));
  K3_CHECK(k3::kvwire::EncodeEventsBatch(again->instance_id, again->events) == encoded);
}

void FuzzRequest(std::string_view bytes) {
  auto request = k3::kvwire::DecodeResyncRequest(bytes);
  if (!request.ok()) return CheckFailure(request);
  auto again = k3::kvwire::DecodeResyncRequest(k3::kvwire::EncodeResyncRequest(*request));
  K3_CHECK(again.ok() && again->after == request->after);
}

void FuzzReply(std::string_view bytes) {
  auto reply = k3::kvwire::DecodeResyncReply(bytes);
  if (!reply.ok()) return CheckFailure(reply);
  K3_CHECK(reply->mode == k3::kvwire::ResyncMode::kReplay ||
           reply->mode == k3::kvwire::ResyncMode::kSnapshot);
  CheckEvents(reply->events);
  const std::string encoded = k3::kvwire::EncodeResyncReply(*reply);
  auto again = k3::kvwire::DecodeResyncReply(encoded);
  K3_CHECK(again.ok()) << again.status().ToString();
  K3_CHECK(again->instance_id == reply->instance_id && again->mode == reply->mode &&
           again->last_sequence == reply->last_sequence &&
           SameEvents(again->events, reply->events));
  K3_CHECK(k3::kvwire::EncodeResyncReply(*again) == encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  FuzzBatch(bytes);
  FuzzRequest(bytes);
  FuzzReply(bytes);
  return 0;
}
