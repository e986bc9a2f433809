// The CPU kernels' encoding and decoding of latent cache entries (formats: LatentDtype in
// op_args.h). Encoding runs once per new token per MLA layer (WriteLatentCache); decoding once per
// sequence per layer per attention call, for the forms that read float entries
// (mla_attention.cc). Both are plain bit manipulation that GCC vectorises, except the FP8 decode's
// 256-entry table look-up.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/cpu_ops.h"
#include "kernels/vectorize.h"
#include "tensor/numeric.h"

namespace k3::kernels {

const char* LatentDtypeName(LatentDtype dtype) {
  switch (dtype) {
    case LatentDtype::kBf16:
      return "bf16";
    case LatentDtype::kFp8E4m3:
      return "fp8_e4m3";
    case LatentDtype::kF32:
      break;
  }
  return "fp32";
}

namespace cpu {
namespace {

// Round to nearest even. Entries are finite (a NaN would not stay NaN).
__attribute__((always_inline)) inline uint16_t ToBf16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

// E4M3 rounded to nearest even, saturating at +-448 (and mapping NaN there: never the NaN code).
// Equal to tensor::FloatToE4M3 on every other input (backend conformance compares the bytes the
// reference writes with it), without its ilogb/ldexp/division.
__attribute__((always_inline)) inline uint8_t ToE4m3(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t mag = bits & 0x7FFFFFFF;
  const float a = std::bit_cast<float>(mag);
  // Subnormal E4M3 counts steps of 2^-9; 8 steps is the smallest normal, code 0x08.
  if (a < 0x1p-6f) return sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f));
  // Keep 3 mantissa bits (round the 20 dropped ones to nearest even; a carry into the exponent is
  // right), then rebias the exponent from 127 to 7.
  const uint32_t rounded = (mag + 0x7FFFF + ((mag >> 20) & 1)) >> 20;
  return sign | static_cast<uint8_t>(std::min<uint32_t>(rounded - ((127 - 7) << 3), 0x7E));
}

const std::array<float, 256>& E4m3Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int code = 0; code < 256; ++code)
      t[code] = tensor::E4M3ToFloat(static_cast<uint8_t>(code));
    return t;
  }();
  return table;
}

// scale = amax / 448 (an entry whose amax is below 448 x the smallest float stores zeros).
void EncodeFp8(const float* e, int64_t dim, uint8_t* out) {
  float amax = 0.0f;
  for (int64_t i = 0; i < dim; ++i) amax = std::max(amax, std::fabs(e[i]));
  const float scale = amax / 448.0f;
  std::memcpy(out, &scale, sizeof(float));
  uint8_t* codes = out + sizeof(float);
  if (scale == 0.0f) {
    std::memset(codes, 0, dim);
    return;
  }
  for (int64_t i = 0; i < dim; ++i) codes[i] = ToE4m3(e[i] / scale);
}

}  // namespace

K3_MULTIVERSION void EncodeLatentEntry(LatentDtype dtype, const float* e, int64_t dim,
                                       uint8_t* out) {
  switch (dtype) {
    case LatentDtype::kF32:
      std::memcpy(out, e, dim * sizeof(float));
      return;
    case LatentDtype::kBf16: {
      uint16_t* q = reinterpret_cast<uint16_t*>(out);
      for (int64_t i = 0; i < dim; ++i) q[i] = ToBf16(e[i]);
      return;
    }
    case LatentDtype::kFp8E4m3:
      return EncodeFp8(e, dim, out);
  }
}

K3_MULTIVERSION void DecodeLatentEntry(LatentDtype dtype, const uint8_t* stored, int64_t dim,
                                       float* out) {
  switch (dtype) {
    case LatentDtype::kF32:
      std::memcpy(out, stored, dim * sizeof(float));
      return;
    case LatentDtype::kBf16: {
      const uint16_t* q = reinterpret_cast<const uint16_t*>(stored);
      for (int64_t i = 0; i < dim; ++i) out[i] = Bf16Value(q[i]);
      return;
    }
    case LatentDtype::kFp8E4m3: {
      float scale;
      std::memcpy(&scale, stored, sizeof(float));
      const std::array<float, 256>& table = E4m3Table();
      const uint8_t* codes = stored + sizeof(float);
      for (int64_t i = 0; i < dim; ++i) out[i] = scale * table[codes[i]];
      return;
    }
  }
}

}  // namespace cpu
}  // namespace k3::kernels
