// `k3 serve --responses-store N`: the last N responses kept in memory, so that
// previous_response_id and item_reference input items resolve (clients that leave `store` on,
// such as the AI SDK's default provider, send item_reference for earlier output items). Each
// kept response holds its whole conversation as input items (its resolved input, then its
// output items); evicted oldest first. Not shared between replicas: behind `k3 route` a
// follow-up may reach a replica that does not hold it (then a 400 naming the id).
// Thread-safe.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "api/api_error.h"

namespace k3::api {

class ResponsesStore {
 public:
  explicit ResponsesStore(size_t capacity) : capacity_(capacity) {}

  // Keeps response `id`: `input` (resolved input items) then `output` (its output items).
  void Put(const std::string& id, const Json& input, const Json& output);
  // The conversation of response `id` as input items; false when not kept.
  bool Conversation(const std::string& id, Json* items) const;
  // An output item by its id; false when not kept.
  bool Item(const std::string& id, Json* item) const;

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::deque<std::string> order_;  // response ids, oldest first
  std::unordered_map<std::string, Json> conversations_;
  std::unordered_map<std::string, Json> items_;
};

// The body with previous_response_id and item_reference items replaced by what `store` holds
// (the previous conversation before `input`); `store` null: both are a 400 (nothing stored).
bool ResolveStored(const Json& body, const ResponsesStore* store, Json* resolved, ApiError* error);

}  // namespace k3::api
