// Rotary position embedding: adjacent channel pairs (2i, 2i+1) turned by position * inv_freq[i],
// the angle and the rotation in double (long positions keep their precision). cos and sin are
// formed once per row and shared by its heads.
#include <cmath>

#include "kernels/cpu_ops.h"

namespace k3::kernels::cpu {

void ApplyRope(const RopeArgs& a) {
  const RopeTable& t = a.table;
  for (int64_t r = 0; r < a.rows; ++r) {
    const double position = static_cast<double>(a.positions[r]);
    for (int64_t i = 0; i < t.pairs; ++i) {
      const double angle = position * t.inv_freq[i];
      const double cos = std::cos(angle) * t.amplitude, sin = std::sin(angle) * t.amplitude;
      for (int64_t h = 0; h < a.heads; ++h) {
        float* x = a.x + r * a.row_stride + h * a.head_stride;
        const double re = x[2 * i], im = x[2 * i + 1];
        x[2 * i] = static_cast<float>(re * cos - im * sin);
        x[2 * i + 1] = static_cast<float>(re * sin + im * cos);
      }
    }
  }
}

}  // namespace k3::kernels::cpu
