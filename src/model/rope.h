// Rotary position embedding with YaRN frequency interpolation, as DeepSeek-V3 / Kimi K2 use it on
// the MLA rope dims (spec/model.md §3.1). Pairs are adjacent channels (2i, 2i+1) rotated by
// position * inv_freq[i]; angles are formed in double so long positions keep their precision.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace k3::model {

class Rope {
 public:
  Rope(const RopeConfig& config, int dim);
  void Apply(float* x, int64_t position) const;
  // The factor YaRN multiplies into the softmax scale: mscale(factor, mscale_all_dim)^2, or 1.
  double softmax_scale_factor() const { return softmax_factor_; }
  const std::vector<double>& inv_freq() const { return inv_freq_; }

 private:
  std::vector<double> inv_freq_;
  double amplitude_ = 1.0;  // cos/sin multiplier mscale(factor, mscale)/mscale(factor, all_dim)
  double softmax_factor_ = 1.0;
};

}  // namespace k3::model
