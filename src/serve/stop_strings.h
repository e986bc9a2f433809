// Stop strings over a stream of text deltas. Text that could still become the start of a stop
// string is held back (at most the longest stop string minus one byte), so a stop string is never
// partly streamed. Both the held-back suffix and the stop strings are valid UTF-8, so a hold-back
// point is always a character boundary.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace k3::serve {

class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops, bool include_stop = false);

  // Appends the text that is safe to emit to *out. Returns true once a stop string matched;
  // *out then ends at the match (or after it with include_stop) and later calls emit nothing.
  bool Feed(std::string_view delta, std::string* out);
  // End of stream: releases the held-back text.
  void Finish(std::string* out);

  bool stopped() const { return stopped_; }
  const std::string& matched() const { return matched_; }

 private:
  // Length of the longest suffix of pending_ that is a proper prefix of some stop string.
  size_t PartialSuffix() const;

  std::vector<std::string> stops_;
  bool include_stop_;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace k3::serve
