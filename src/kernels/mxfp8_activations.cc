// MXFP8 activation quantisation (matmul.h, QuantizeMxfp8InPlace): per 32 values, the OCP MX
// E8M0 scale and round-to-nearest-even E4M3 elements, written back dequantised.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/check.h"
#include "kernels/matmul.h"

namespace k3::kernels {

void QuantizeMxfp8InPlace(float* x, int64_t n) {
  K3_CHECK(n % 32 == 0) << "MXFP8 quantisation needs n % 32 == 0, got " << n;
  for (int64_t b = 0; b < n; b += 32) {
    float* block = x + b;
    float amax = 0.0f;
    bool finite = true;
    for (int i = 0; i < 32; ++i) {
      finite = finite && std::isfinite(block[i]);
      amax = std::max(amax, std::fabs(block[i]));
    }
    if (!finite) {  // the E8M0 scale is NaN
      std::fill(block, block + 32, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    if (amax == 0.0f) continue;
    // 2^(floor(log2 amax) - 8): E4M3's largest power of two is 2^8. E8M0 spans 2^-127..2^127, and
    // amax < 2^128 keeps the exponent <= 119, so `down` is a normal float and both scalings are
    // exact (`up` may be subnormal, but every E4M3 value times it is representable).
    const int exponent = std::clamp(std::ilogb(amax) - 8, -127, 127);
    const float down = std::ldexp(1.0f, -exponent), up = std::ldexp(1.0f, exponent);
    for (int i = 0; i < 32; ++i) {
      // |v| < 512. E4M3 steps are 2^(e - 3) in binade e >= -6 and 2^-9 below; adding and
      // subtracting 1.5 * 2^23 * step rounds to a multiple of the step, to nearest even, exactly
      // as tensor::FloatToE4M3 does, without its library calls.
      const float v = std::fabs(block[i] * down);
      const int binade = static_cast<int>(std::bit_cast<uint32_t>(v) >> 23) - 127;
      const int step = std::max(binade, -6) - 3;
      const float magic = 1.5f * std::bit_cast<float>(static_cast<uint32_t>(step + 150) << 23);
      const float rounded = std::min((v + magic) - magic, 448.0f);  // saturate like MX
      block[i] = std::copysign(rounded, block[i]) * up;
    }
  }
}

}  // namespace k3::kernels
