#include "gateway/workers.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace k3::gateway {

base::Result<WorkerKvInfo> ParseWorkerKvInfo(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return base::InvalidArgument("KV info: not a JSON object");
  WorkerKvInfo info;
  auto string_field = [&](const char* name, std::string* out) -> base::Status {
    auto it = json.find(name);
    if (it == json.end() || !it->is_string() || it->get<std::string>().empty()) {
      return base::InvalidArgument(std::string("KV info: '") + name + "' must be a string");
    }
    *out = it->get<std::string>();
    return base::Status::Ok();
  };
  K3_RETURN_IF_ERROR(string_field("publish", &info.publish_endpoint));
  K3_RETURN_IF_ERROR(string_field("resync", &info.resync_endpoint));
  auto size = json.find("block_size");
  if (size == json.end() || !size->is_number_integer() || *size <= 0 || *size > 1 << 20) {
    return base::InvalidArgument("KV info: 'block_size' must be a positive integer");
  }
  info.block_size = size->get<int>();
  auto checkpoints = json.find("checkpoints_required");
  if (checkpoints != json.end()) {
    if (!checkpoints->is_boolean()) {
      return base::InvalidArgument("KV info: 'checkpoints_required' must be a boolean");
    }
    info.checkpoints_required = checkpoints->get<bool>();
  }
  return info;
}

base::Result<int> WorkerTable::Add(const std::string& url, const HostPort& address,
                                   std::optional<WorkerKvInfo> kv, bool* added) {
  std::lock_guard lock(mutex_);
  *added = false;
  for (const Worker& w : workers_) {
    if (w.url == url) return w.id;
  }
  if (static_cast<int>(workers_.size()) >= capacity_) {
    return base::Status(base::StatusCode::kResourceExhausted,
                        "the router is full (" + std::to_string(capacity_) + " workers)");
  }
  Worker w;
  w.id = static_cast<int>(workers_.size());
  w.url = url;
  w.address = address;
  w.kv = std::move(kv);
  w.next_check = std::chrono::steady_clock::now() + backoff_.interval;
  workers_.push_back(std::move(w));
  *added = true;
  return workers_.back().id;
}

Worker* WorkerTable::Find(int id) {
  return id >= 0 && id < static_cast<int>(workers_.size()) ? &workers_[size_t(id)] : nullptr;
}
const Worker* WorkerTable::Find(int id) const {
  return id >= 0 && id < static_cast<int>(workers_.size()) ? &workers_[size_t(id)] : nullptr;
}

std::vector<Worker> WorkerTable::Snapshot() const {
  std::lock_guard lock(mutex_);
  return workers_;
}

std::optional<Worker> WorkerTable::Get(int id) const {
  std::lock_guard lock(mutex_);
  const Worker* w = Find(id);
  return w ? std::optional<Worker>(*w) : std::nullopt;
}

std::vector<Worker> WorkerTable::DueForCheck(SteadyTime now) const {
  std::lock_guard lock(mutex_);
  std::vector<Worker> due;
  for (const Worker& w : workers_) {
    if (w.next_check <= now) due.push_back(w);
  }
  return due;
}

bool WorkerTable::MarkUp(int id, SteadyTime now) {
  std::lock_guard lock(mutex_);
  Worker* w = Find(id);
  if (w == nullptr) return false;
  const bool changed = !w->healthy;
  w->healthy = true;
  w->failures = 0;
  w->next_check = now + backoff_.interval;
  return changed;
}

// Backoff: first_retry, doubled per consecutive failure, capped at max_retry.
bool WorkerTable::MarkDown(int id, SteadyTime now) {
  std::lock_guard lock(mutex_);
  Worker* w = Find(id);
  if (w == nullptr) return false;
  const bool changed = w->healthy;
  w->healthy = false;
  w->failures = std::min(w->failures + 1, 30);
  auto wait = backoff_.first_retry * (int64_t{1} << std::min(w->failures - 1, 16));
  w->next_check = now + std::min<std::chrono::milliseconds>(wait, backoff_.max_retry);
  return changed;
}

void WorkerTable::AddLoad(int id, int64_t prefill_tokens, int decode_seqs) {
  std::lock_guard lock(mutex_);
  if (Worker* w = Find(id)) {
    w->load.prefill_tokens = std::max<int64_t>(0, w->load.prefill_tokens + prefill_tokens);
    w->load.decode_seqs = std::max<int64_t>(0, w->load.decode_seqs + decode_seqs);
  }
}

void WorkerTable::CountRequest(int id, int64_t prompt_tokens, int64_t cached_tokens) {
  std::lock_guard lock(mutex_);
  if (Worker* w = Find(id)) {
    ++w->requests;
    w->prompt_tokens += prompt_tokens;
    w->cached_tokens += cached_tokens;
  }
}

void WorkerTable::CountError(int id) {
  std::lock_guard lock(mutex_);
  if (Worker* w = Find(id)) ++w->errors;
}

router::WorkerLoad WorkerTable::Load(int id) const {
  std::lock_guard lock(mutex_);
  const Worker* w = Find(id);
  return w ? w->load : router::WorkerLoad{};
}

int WorkerTable::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(workers_.size());
}

}  // namespace k3::gateway
