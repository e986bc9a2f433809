#include "engine/sampling_params.h"

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>

#include "base/check.h"

namespace k3::engine {
namespace {

// "<field> must be <range>, got <value>". Doubles print in their shortest usual form ("0.5", "3").
template <typename T>
base::Status OutOfRangeField(const std::string& field, const char* range, T value) {
  std::ostringstream message;
  message << field << " must be " << range << ", got " << value;
  return base::InvalidArgument(message.str());
}

// Every comparison is written so that NaN fails it.
bool InClosed(double x, double lo, double hi) { return x >= lo && x <= hi; }

}  // namespace

base::Status SamplingParams::Validate(int64_t vocab_size) const {
  K3_CHECK(vocab_size > 0) << "vocab_size " << vocab_size;
  if (!std::isfinite(temperature) || !InClosed(temperature, 0.0, 2.0)) {
    return OutOfRangeField("temperature", "finite and in [0, 2]", temperature);
  }
  if (!(top_p > 0.0 && top_p <= 1.0)) return OutOfRangeField("top_p", "in (0, 1]", top_p);
  if (top_k < 0) return OutOfRangeField("top_k", ">= 0 (0 disables it)", top_k);
  if (!InClosed(min_p, 0.0, 1.0)) return OutOfRangeField("min_p", "in [0, 1]", min_p);
  if (!InClosed(presence_penalty, -2.0, 2.0)) {
    return OutOfRangeField("presence_penalty", "in [-2, 2]", presence_penalty);
  }
  if (!InClosed(frequency_penalty, -2.0, 2.0)) {
    return OutOfRangeField("frequency_penalty", "in [-2, 2]", frequency_penalty);
  }
  if (!(repetition_penalty > 0.0 && repetition_penalty <= 2.0)) {
    return OutOfRangeField("repetition_penalty", "in (0, 2]", repetition_penalty);
  }
  if (max_tokens < 1) return OutOfRangeField("max_tokens", ">= 1", max_tokens);
  for (size_t idx = 0; idx < stop_token_ids.size(); ++idx) {
    const int32_t id = stop_token_ids[idx];
    if (id < 0 || id >= vocab_size) {
      const std::string range = "in [0, " + std::to_string(vocab_size) + ")";
      return OutOfRangeField("stop_token_ids[" + std::to_string(idx) + "]", range.c_str(), id);
    }
  }
  if (logprobs < -1 || logprobs > 20) {
    return OutOfRangeField("logprobs", "in [-1, 20] (-1 disables it)", logprobs);
  }
  if (n < 1 || n > 128) return OutOfRangeField("n", "in [1, 128]", n);
  for (size_t idx = 0; idx < forced_tokens.size(); ++idx) {
    const int32_t id = forced_tokens[idx];
    if (id < 0 || id >= vocab_size) {
      const std::string range = "in [0, " + std::to_string(vocab_size) + ")";
      return OutOfRangeField("forced_tokens[" + std::to_string(idx) + "]", range.c_str(), id);
    }
  }
  return base::Status::Ok();
}

}  // namespace k3::engine
