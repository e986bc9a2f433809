#include "tensor/numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace k3::tensor {
namespace {

// The E4M3 value table written out from the format definition (OCP MX v1.0 §5.3.2).
double E4M3FromDefinition(int code) {
  int sign = code >> 7, e = (code >> 3) & 15, m = code & 7;
  double v = e == 0 ? m / 8.0 * std::pow(2.0, -6) : (1 + m / 8.0) * std::pow(2.0, e - 7);
  return sign ? -v : v;
}

TEST(Numeric, E4M3DecodesEveryCodeAsDefined) {
  for (int code = 0; code < 256; ++code) {
    float got = E4M3ToFloat(static_cast<uint8_t>(code));
    if ((code & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(got)) << code;
    } else {
      EXPECT_EQ(got, E4M3FromDefinition(code)) << code;
    }
  }
  EXPECT_EQ(E4M3ToFloat(0x7E), 448.0f);
}

// Every code at every position of buffers around the vector widths: found iff it decodes to NaN.
TEST(Numeric, AnyE4M3NanFindsEveryNanCodeAnywhere) {
  for (size_t n : {1, 15, 16, 17, 63, 64, 65, 200}) {
    std::vector<uint8_t> bytes(n, 0x7E);  // 448, the largest finite magnitude
    EXPECT_FALSE(AnyE4M3Nan(bytes.data(), n)) << n;
    for (size_t at = 0; at < n; ++at) {
      for (int code = 0; code < 256; ++code) {
        bytes[at] = static_cast<uint8_t>(code);
        ASSERT_EQ(AnyE4M3Nan(bytes.data(), n), std::isnan(E4M3ToFloat(bytes[at])))
            << n << " " << at << " " << code;
      }
      bytes[at] = 0xFE;  // -448
    }
  }
  EXPECT_FALSE(AnyE4M3Nan(nullptr, 0));
}

// Brute force: the nearest finite code, ties to the even code, saturating at 448.
uint8_t NearestE4M3(float x) {
  int best = 0;
  double best_err = INFINITY;
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7F) == 0x7F) continue;
    double err = std::fabs(E4M3FromDefinition(code) - x);
    if (err < best_err || (err == best_err && (code & 1) == 0 && (best & 1) == 1)) {
      best = code;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(best);
}

TEST(Numeric, E4M3EncodeRoundsToNearestEvenAndSaturates) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-12.0f, 10.0f);
  for (int i = 0; i < 20000; ++i) {
    float x = std::exp2(exponent(rng)) * (rng() & 1 ? -1.0f : 1.0f);
    uint8_t want = NearestE4M3(x);
    uint8_t got = FloatToE4M3(x);
    // +0 and -0 are both exact encodings of a value that rounds to zero.
    if (E4M3FromDefinition(want) == 0.0) {
      EXPECT_EQ(E4M3ToFloat(got), 0.0f) << x;
    } else {
      EXPECT_EQ(got, want) << x;
    }
  }
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7F) == 0x7F) continue;
    EXPECT_EQ(FloatToE4M3(E4M3ToFloat(static_cast<uint8_t>(code))), code) << code;
  }
  EXPECT_EQ(FloatToE4M3(1e6f), 0x7E);
  EXPECT_EQ(FloatToE4M3(-1e6f), 0xFE);
}

TEST(Numeric, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
  // 1 + 2^-8 is exactly between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(FloatToBf16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(FloatToBf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
  EXPECT_EQ(FloatToBf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  for (uint32_t bits = 0; bits < 0x10000; bits += 7) {
    float v = Bf16ToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(v)) {
      EXPECT_EQ(FloatToBf16(v), bits);
    }
  }
}

TEST(Numeric, F16RoundTripsEveryFiniteCode) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float v = F16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(v)) continue;
    EXPECT_EQ(FloatToF16(v), bits);
  }
  EXPECT_EQ(F16ToFloat(0x3C00), 1.0f);
  EXPECT_EQ(F16ToFloat(0x0001), std::ldexp(1.0f, -24));
}

// Nearest half by search over all finite codes (ties to the even code), or inf past 65520.
uint16_t NearestF16(float x) {
  if (std::fabs(x) >= 65520.0f) return x < 0 ? 0xFC00 : 0x7C00;
  uint16_t best = 0;
  double best_err = INFINITY;
  for (uint32_t code = 0; code < 0x7C00; ++code) {
    for (uint32_t sign : {0u, 0x8000u}) {
      double err = std::fabs(double(F16ToFloat(static_cast<uint16_t>(code | sign))) - x);
      if (err < best_err || (err == best_err && (code & 1) == 0)) {
        best = static_cast<uint16_t>(code | sign);
        best_err = err;
      }
    }
  }
  return best;
}

TEST(Numeric, F16EncodeRoundsToNearestEven) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> exponent(-26.0f, 17.0f);
  for (int i = 0; i < 300; ++i) {
    float x = std::exp2(exponent(rng)) * (i & 1 ? -1.0f : 1.0f);
    uint16_t got = FloatToF16(x), want = NearestF16(x);
    if ((want & 0x7FFF) == 0) {
      EXPECT_EQ(got & 0x7FFF, 0) << x;
    } else {
      EXPECT_EQ(got, want) << x;
    }
  }
  // Exact ties: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 and goes to the even 1.
  EXPECT_EQ(FloatToF16(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(FloatToF16(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(FloatToF16(65504.0f), 0x7BFF);
}

TEST(Numeric, E8M0AndE2M1MatchTheMxTables) {
  EXPECT_EQ(E8M0ToFloat(127), 1.0f);
  EXPECT_EQ(E8M0ToFloat(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(E8M0ToFloat(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(E8M0ToFloat(255)));
  const float magnitudes[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int code = 0; code < 16; ++code) {
    float want = magnitudes[code & 7] * (code & 8 ? -1.0f : 1.0f);
    EXPECT_EQ(E2M1ToFloat(static_cast<uint8_t>(code)), want);
    EXPECT_EQ(std::signbit(E2M1ToFloat(static_cast<uint8_t>(code))), (code & 8) != 0);
  }
}

}  // namespace
}  // namespace k3::tensor
