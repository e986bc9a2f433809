#include "tensor/numeric.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace k3::tensor {

uint16_t FloatToBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float F16ToFloat(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1;
  const uint32_t exponent = (bits >> 10) & 0x1F;
  const uint32_t mantissa = bits & 0x3FF;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

uint16_t FloatToF16(float value) {
  // Written out rather than using _Float16, which clang 14 (the fuzz build) lacks on x86-64.
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if (std::isnan(value)) return sign | 0x7E00;
  const float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) return sign | 0x7C00;  // rounds past the largest half (65504)
  if (magnitude < 0x1p-14f) {
    // Subnormal half: multiples of 2^-24, rounded to nearest even by nearbyint.
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 0x1p24f));
  }
  // Normal: keep 10 mantissa bits, rounding the 13 dropped bits to nearest even (a carry into
  // the exponent is the correct result).
  const uint32_t mag_bits = bits & 0x7FFFFFFF;
  const uint32_t rounded = mag_bits + 0xFFF + ((mag_bits >> 13) & 1);
  return sign | static_cast<uint16_t>(((rounded >> 13) - ((127 - 15) << 10)) & 0x7FFF);
}

float E4M3ToFloat(uint8_t bits) {
  const bool negative = bits & 0x80;
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9)
                                  : std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
  return negative ? -magnitude : magnitude;
}

bool AnyE4M3Nan(const uint8_t* bytes, size_t n) {
  // The largest low-7-bit pattern is 0x7F exactly when a NaN code is present; a max over bytes
  // vectorises (pand + pmaxub per 16 bytes), where an early exit would not.
  uint8_t largest = 0;
  for (size_t i = 0; i < n; ++i) largest = std::max<uint8_t>(largest, bytes[i] & 0x7F);
  return largest == 0x7F;
}

uint8_t FloatToE4M3(float value) {
  if (std::isnan(value)) return 0x7F;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  float magnitude = std::fabs(value);
  if (magnitude >= 448.0f) return sign | 0x7E;
  // Candidates are spaced 2^(e-3) within binade e (e >= -6); subnormal spacing 2^-9.
  int exponent = magnitude < 0x1p-6f ? -6 : std::ilogb(magnitude);
  float step = std::ldexp(1.0f, exponent - 3);
  float steps = std::nearbyint(magnitude / step);  // default rounding mode: nearest even
  float rounded = steps * step;
  if (rounded >= 448.0f) return sign | 0x7E;
  if (rounded == 0.0f) return sign;
  int e = std::ilogb(rounded);
  if (e < -6) {  // subnormal: mantissa counts 2^-9 units
    return sign | static_cast<uint8_t>(std::lround(rounded * 512.0f));
  }
  int mantissa = static_cast<int>(std::lround(std::ldexp(rounded, 3 - e))) - 8;
  return sign | static_cast<uint8_t>(((e + 7) << 3) | mantissa);
}

float E8M0ToFloat(uint8_t e) {
  if (e == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(e) - 127);
}

}  // namespace k3::tensor
