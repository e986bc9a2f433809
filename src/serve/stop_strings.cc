#include "serve/stop_strings.h"

#include <algorithm>

namespace k3::serve {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops, bool include_stop)
    : stops_(std::move(stops)), include_stop_(include_stop) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

bool StopStringMatcher::Feed(std::string_view delta, std::string* out) {
  if (stopped_) return true;
  if (stops_.empty()) {
    out->append(delta);
    return false;
  }
  pending_.append(delta);
  // Earliest match wins; among matches at one position, the longest.
  size_t best = std::string::npos;
  const std::string* best_stop = nullptr;
  for (const std::string& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at == std::string::npos) continue;
    if (at < best || (at == best && stop.size() > best_stop->size())) {
      best = at;
      best_stop = &stop;
    }
  }
  if (best_stop != nullptr) {
    stopped_ = true;
    matched_ = *best_stop;
    out->append(pending_, 0, include_stop_ ? best + best_stop->size() : best);
    pending_.clear();
    return true;
  }
  const size_t keep = PartialSuffix();
  out->append(pending_, 0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return false;
}

void StopStringMatcher::Finish(std::string* out) {
  if (!stopped_) out->append(pending_);
  pending_.clear();
}

size_t StopStringMatcher::PartialSuffix() const {
  size_t longest = 0;
  for (const std::string& stop : stops_) {
    const size_t max_len = std::min(stop.size() - 1, pending_.size());
    for (size_t len = max_len; len > longest; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) ==
          std::string_view(stop).substr(0, len)) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

}  // namespace k3::serve
