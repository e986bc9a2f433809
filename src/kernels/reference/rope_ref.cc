// Rotary embedding by definition: (a, b) -> amplitude (a cos - b sin, a sin + b cos) per pair.
#include <cmath>

#include "kernels/reference/reference_backend.h"

namespace k3::kernels::reference {

void ReferenceBackend::ApplyRope(const RopeArgs& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t h = 0; h < a.heads; ++h) {
      float* x = a.x + r * a.row_stride + h * a.head_stride;
      for (int64_t i = 0; i < a.table.pairs; ++i) {
        const double angle = static_cast<double>(a.positions[r]) * a.table.inv_freq[i];
        const double re = x[2 * i], im = x[2 * i + 1];
        x[2 * i] =
            static_cast<float>(a.table.amplitude * (re * std::cos(angle) - im * std::sin(angle)));
        x[2 * i + 1] =
            static_cast<float>(a.table.amplitude * (re * std::sin(angle) + im * std::cos(angle)));
      }
    }
  }
}

}  // namespace k3::kernels::reference
