// Scalar conversions between float32 and the narrow formats checkpoints use. These are the format
// definitions (OCP MX v1.0, IEEE 754 half, bfloat16); SIMD kernels are tested against them.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace k3::tensor {

inline float Bf16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }
// Round to nearest even; NaN stays NaN.
uint16_t FloatToBf16(float value);

float F16ToFloat(uint16_t bits);
uint16_t FloatToF16(float value);  // round to nearest even, overflow to inf

// E4M3: bias 7, subnormals, max +-448, 0x7F/0xFF NaN.
float E4M3ToFloat(uint8_t bits);
// Round to nearest even, saturating to +-448 (the MX conversion rule); NaN -> 0x7F.
uint8_t FloatToE4M3(float value);

// Whether any of the n bytes is an E4M3 NaN code (0x7F or 0xFF): one pass, ~memory speed.
bool AnyE4M3Nan(const uint8_t* bytes, size_t n);

// E8M0 scale: 2^(e-127); e = 0xFF is NaN.
float E8M0ToFloat(uint8_t e);

// E2M1 (FP4) nibble: sign<<3 | magnitude code; codes 0..7 = 0, .5, 1, 1.5, 2, 3, 4, 6.
inline constexpr float kE2M1Values[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                          -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
inline float E2M1ToFloat(uint8_t nibble) { return kE2M1Values[nibble & 0xF]; }
// compressed-tensors symmetric INT4 nibble (offset 8, uint4b8): u in 0..15 is the integer u - 8.
inline float Int4ToFloat(uint8_t nibble) { return static_cast<float>((nibble & 0xF) - 8); }

}  // namespace k3::tensor
