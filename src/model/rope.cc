#include "model/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace k3::model {
namespace {

double YarnMscale(double factor, double mscale) {
  return factor <= 1.0 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

// The dimension whose wavelength makes `rotations` turns over the original context.
double CorrectionDim(double rotations, int dim, double base, double original) {
  return dim * std::log(original / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

}  // namespace

Rope::Rope(const RopeConfig& c, int dim) {
  const int half = dim / 2;
  inv_freq_.resize(half);
  for (int i = 0; i < half; ++i) inv_freq_[i] = std::pow(c.theta, -2.0 * i / dim);
  if (!c.yarn) return;
  const double original = static_cast<double>(c.original_max_position);
  double low = std::floor(CorrectionDim(c.beta_fast, dim, c.theta, original));
  double high = std::ceil(CorrectionDim(c.beta_slow, dim, c.theta, original));
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;
  for (int i = 0; i < half; ++i) {
    // ramp 0 below `low` (keep the original frequency), 1 above `high` (interpolate by factor).
    const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
    const double keep = 1.0 - ramp;
    inv_freq_[i] = inv_freq_[i] / c.factor * (1.0 - keep) + inv_freq_[i] * keep;
  }
  amplitude_ = YarnMscale(c.factor, c.mscale) / YarnMscale(c.factor, c.mscale_all_dim);
  if (c.mscale_all_dim != 0.0) {
    const double m = YarnMscale(c.factor, c.mscale_all_dim);
    softmax_factor_ = m * m;
  }
}

}  // namespace k3::model
