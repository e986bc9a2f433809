// The rotary position embedding table with YaRN frequency interpolation, as DeepSeek-V3 / Kimi K2
// use it on the MLA rope dims (spec/model.md §3.1): per pair of adjacent channels (2i, 2i+1) the
// inverse frequency, and YaRN's amplitude and softmax factors. kernels::Backend::ApplyRope turns
// the pairs by position * inv_freq[i] (angles in double, so long positions keep their precision).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/op_args.h"
#include "model/config.h"

namespace k3::model {

class Rope {
 public:
  Rope(const RopeConfig& config, int dim);
  // The table the ApplyRope op reads (views this object).
  kernels::RopeTable table() const {
    return {inv_freq_.data(), static_cast<int64_t>(inv_freq_.size()), amplitude_};
  }
  // The factor YaRN multiplies into the softmax scale: mscale(factor, mscale_all_dim)^2, or 1.
  double softmax_scale_factor() const { return softmax_factor_; }
  const std::vector<double>& inv_freq() const { return inv_freq_; }

 private:
  std::vector<double> inv_freq_;
  double amplitude_ = 1.0;  // cos/sin multiplier mscale(factor, mscale)/mscale(factor, all_dim)
  double softmax_factor_ = 1.0;
};

}  // namespace k3::model
