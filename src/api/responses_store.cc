#include "api/responses_store.h"

#include "api/fields.h"

namespace k3::api {

void ResponsesStore::Put(const std::string& id, const Json& input, const Json& output) {
  if (capacity_ == 0) return;
  Json conversation = input;
  for (const Json& item : output) conversation.push_back(item);
  std::lock_guard lock(mu_);
  if (conversations_.contains(id)) return;
  while (order_.size() >= capacity_) {
    auto oldest = conversations_.find(order_.front());
    for (const Json& item : oldest->second) items_.erase(StringOr(item, "id"));
    conversations_.erase(oldest);
    order_.pop_front();
  }
  for (const Json& item : output) items_[StringOr(item, "id")] = item;
  conversations_.emplace(id, std::move(conversation));
  order_.push_back(id);
}

bool ResponsesStore::Conversation(const std::string& id, Json* items) const {
  std::lock_guard lock(mu_);
  auto it = conversations_.find(id);
  if (it == conversations_.end()) return false;
  *items = it->second;
  return true;
}

bool ResponsesStore::Item(const std::string& id, Json* item) const {
  std::lock_guard lock(mu_);
  auto it = items_.find(id);
  if (it == items_.end()) return false;
  *item = it->second;
  return true;
}

namespace {

constexpr char kNotStored[] =
    "this server does not store responses (start it with --responses-store N); send the whole "
    "conversation in 'input'";

bool StoredFail(ApiError* error, std::string message, std::string param) {
  *error = BadRequest(std::move(message), std::move(param));
  return false;
}

}  // namespace

bool ResolveStored(const Json& body, const ResponsesStore* store, Json* resolved, ApiError* error) {
  *resolved = body;
  if (!body.is_object()) return true;
  Fields f(body);
  Json items = Json::array();
  if (const Json* previous = f.Get("previous_response_id")) {
    if (store == nullptr) {
      return StoredFail(error,
                        std::string("'previous_response_id' is not supported: ") + kNotStored,
                        "previous_response_id");
    }
    if (!previous->is_string() || !store->Conversation(previous->get<std::string>(), &items)) {
      return StoredFail(error, "previous response " + previous->dump() + " is not kept here",
                        "previous_response_id");
    }
    resolved->erase("previous_response_id");
  }
  const Json* input = f.Get("input");
  if (input != nullptr && input->is_string()) {
    items.push_back({{"role", "user"}, {"content", *input}});
  } else if (input != nullptr && input->is_array()) {
    for (size_t i = 0; i < input->size(); ++i) {
      const Json& item = (*input)[i];
      if (StringOr(item, "type") != "item_reference") {
        items.push_back(item);
        continue;
      }
      const std::string where = "input[" + std::to_string(i) + "]";
      if (store == nullptr)
        return StoredFail(error, where + ": item_reference: " + kNotStored, where);
      Json stored;
      if (!store->Item(StringOr(item, "id"), &stored)) {
        return StoredFail(error,
                          where + ": item " + item.value("id", Json()).dump() + " is not kept here",
                          where);
      }
      items.push_back(std::move(stored));
    }
  } else if (input != nullptr || f.Get("previous_response_id") == nullptr) {
    return true;  // the converter reports a missing or malformed input
  }
  (*resolved)["input"] = std::move(items);
  return true;
}

}  // namespace k3::api
