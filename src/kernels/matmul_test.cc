#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul_detail.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_testing.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

using detail::Isa;
using detail::Regime;
using matmul_testing::AbsProducts;
using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::RandomVector;
using matmul_testing::TestWeights;

constexpr Regime kRegimes[] = {Regime::kAuto, Regime::kDecode, Regime::kGemm};

const char* RegimeName(Regime regime) {
  switch (regime) {
    case Regime::kDecode:
      return "decode";
    case Regime::kGemm:
      return "gemm";
    default:
      return "auto";
  }
}

// Runs every ISA and regime on (x, w) and compares with MatMulReference.
void ExpectMatchesReference(const std::vector<float>& x, int64_t tokens, const WeightMatrix& w,
                            const std::string& what) {
  const size_t n = static_cast<size_t>(tokens * w.rows);
  std::vector<float> want(n);
  MatMulReference(x.data(), tokens, w, want.data());
  const std::vector<double> bound = AbsProducts(x, tokens, w);
  for (Isa isa : detail::SupportedIsas()) {
    for (Regime regime : kRegimes) {
      std::vector<float> got(n, -12345.0f);
      detail::MatMulWithIsa(isa, regime, x.data(), tokens, w, got.data());
      int failures = 0;
      for (size_t i = 0; i < n && failures < 5; ++i) {
        const double tolerance = 1e-5 * bound[i] + 1e-6;
        if (std::fabs(double{got[i]} - want[i]) <= tolerance) continue;
        ++failures;
        ADD_FAILURE() << what << " " << detail::IsaName(isa) << "/" << RegimeName(regime)
                      << " token " << i / w.rows << " row " << i % w.rows << ": got " << got[i]
                      << " want " << want[i] << " (tolerance " << tolerance << ")";
      }
    }
  }
}

struct Shape {
  int64_t rows, cols_index, tokens;
};
// Every listed rows, cols and tokens value appears, small with large.
constexpr Shape kShapes[] = {{1, 0, 1},    {3, 1, 2},   {17, 2, 5},  {33, 3, 8},  {65, 0, 31},
                             {129, 1, 64}, {1, 3, 67},  {3, 2, 1},   {17, 3, 31}, {33, 1, 67},
                             {65, 2, 2},   {129, 3, 5}, {129, 2, 1}, {33, 0, 64}, {65, 3, 8},
                             {17, 1, 1},   {3, 3, 64}};
constexpr int64_t kCols[] = {7, 31, 100, 257};
constexpr int64_t kMxfp4Cols[] = {32, 64, 160, 288};

class MatMulFormatTest : public testing::TestWithParam<FormatCase> {};

TEST_P(MatMulFormatTest, EveryIsaAndRegimeMatchesReference) {
  const FormatCase& fc = GetParam();
  std::mt19937 rng(1234);
  for (const Shape& s : kShapes) {
    const int64_t cols = IsFourBit(fc.format) ? kMxfp4Cols[s.cols_index] : kCols[s.cols_index];
    TestWeights t;
    FillRandom(t, fc, s.rows, cols, rng);
    std::vector<float> x = RandomVector(static_cast<size_t>(s.tokens * cols), rng);
    ExpectMatchesReference(x, s.tokens, t.w,
                           fc.name + " " + std::to_string(s.tokens) + "x" + std::to_string(cols) +
                               " * [" + std::to_string(s.rows) + "x" + std::to_string(cols) + "]");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, MatMulFormatTest,
    testing::Values(
        FormatCase{"F32", WeightFormat::kF32}, FormatCase{"BF16", WeightFormat::kBF16},
        FormatCase{"F16", WeightFormat::kF16}, FormatCase{"MXFP4", WeightFormat::kMxfp4},
        FormatCase{"INT4", WeightFormat::kInt4},
        FormatCase{"FP8_block128", WeightFormat::kFp8Block, 128},
        FormatCase{"FP8_block32", WeightFormat::kFp8Block, 32},
        FormatCase{"FP8_block48", WeightFormat::kFp8Block, 48},
        FormatCase{"FP8_block8", WeightFormat::kFp8Block, 8},
        FormatCase{"FP8_block7", WeightFormat::kFp8Block, 7},
        // As a loader marks a checkpoint without NaN codes: the decode kernels skip their check.
        FormatCase{"FP8_block128_nan_free", WeightFormat::kFp8Block, 128, 0.25f, 2.0f, 0x7E, true},
        // Scales of 2^120 and more cannot absorb the kernels' factor of 256; small
        // codes keep the products finite.
        FormatCase{"FP8_large_scales", WeightFormat::kFp8Block, 32, 0x1p118f, 0x1p121f, 0x20},
        FormatCase{"FP8_tiny_scales", WeightFormat::kFp8Block, 32, 0x1p-140f, 0x1p-100f}),
    [](const testing::TestParamInfo<FormatCase>& info) { return info.param.name; });

// Every token count up to two tiles of the widest kernels (decode tiles of 1..6 tokens, GEMM
// micro-tiles of 1..14, and their near-equal splits), over rows and columns with ragged tails.
TEST(MatMulTest, EveryTileSizeMatchesReference) {
  std::mt19937 rng(4321);
  const FormatCase cases[] = {{"F32", WeightFormat::kF32},
                              {"BF16", WeightFormat::kBF16},
                              {"F16", WeightFormat::kF16},
                              {"MXFP4", WeightFormat::kMxfp4},
                              {"INT4", WeightFormat::kInt4},
                              {"FP8_block32", WeightFormat::kFp8Block, 32},
                              {"FP8_block7", WeightFormat::kFp8Block, 7}};
  for (const FormatCase& fc : cases) {
    const int64_t rows = 37, cols = IsFourBit(fc.format) ? 96 : 83;
    TestWeights t;
    FillRandom(t, fc, rows, cols, rng);
    for (int64_t tokens = 1; tokens <= 29; ++tokens) {
      std::vector<float> x = RandomVector(static_cast<size_t>(tokens * cols), rng);
      ExpectMatchesReference(x, tokens, t.w, fc.name + " tokens " + std::to_string(tokens));
    }
  }
}

// Equal as values, or both NaN.
bool SameValue(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }
// Equal bit for bit, or both NaN.
bool SameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

// Checks DequantizeRow (scalar and each ISA) against want(row, col), and every kernel with one-hot
// activations (token j selects column j), which reproduces each weight exactly, inf/NaN included.
template <typename Want>
void ExpectExactWeights(const WeightMatrix& w, const Want& want) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (Isa isa : detail::SupportedIsas()) {
    for (int64_t r = 0; r < w.rows; ++r) {
      std::fill(row.begin(), row.end(), -12345.0f);
      detail::DequantizeRowWithIsa(isa, w, r, row.data());
      for (int64_t c = 0; c < w.cols; ++c) {
        ASSERT_TRUE(SameBits(row[c], want(r, c))) << detail::IsaName(isa) << " row " << r << " col "
                                                  << c << ": " << row[c] << " vs " << want(r, c);
      }
    }
  }
  const int64_t tokens = w.cols;
  std::vector<float> x(static_cast<size_t>(tokens * w.cols), 0.0f);
  for (int64_t j = 0; j < tokens; ++j) x[j * w.cols + j] = 1.0f;
  std::vector<float> want_y(static_cast<size_t>(tokens * w.rows));
  MatMulReference(x.data(), tokens, w, want_y.data());
  for (Isa isa : detail::SupportedIsas()) {
    for (Regime regime : kRegimes) {
      std::vector<float> y(want_y.size(), -12345.0f);
      detail::MatMulWithIsa(isa, regime, x.data(), tokens, w, y.data());
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_TRUE(SameValue(y[i], want_y[i]))
            << detail::IsaName(isa) << "/" << RegimeName(regime) << " token " << i / w.rows
            << " row " << i % w.rows << ": " << y[i] << " vs " << want_y[i];
      }
    }
    // Each one-hot token alone: the decode regime's single-token tiles (4-bit: two row groups at
    // a time, scales widened ahead) see every weight too.
    for (int64_t j = 0; j < tokens; ++j) {
      std::vector<float> y(static_cast<size_t>(w.rows), -12345.0f);
      detail::MatMulWithIsa(isa, Regime::kDecode, x.data() + j * w.cols, 1, w, y.data());
      for (int64_t r = 0; r < w.rows; ++r) {
        ASSERT_TRUE(SameValue(y[r], want_y[j * w.rows + r]))
            << detail::IsaName(isa) << " token " << j << " alone, row " << r << ": " << y[r]
            << " vs " << want_y[j * w.rows + r];
      }
    }
  }
}

TEST(DequantizeTest, Mxfp4EveryByteWithEveryScale) {
  // Row 16 * e + g holds bytes 16g .. 16g + 15 under scale byte e: all 256 bytes (both nibbles)
  // under all 256 E8M0 scales, including 2^-127, the overflowing 2^127 and NaN.
  TestWeights t;
  FillEveryMxfp4ByteUnderEveryScale(&t);
  ExpectExactWeights(t.w, [](int64_t r, int64_t c) {
    const uint8_t byte = static_cast<uint8_t>(16 * (r % 16) + c / 2);
    const uint8_t nibble = c % 2 == 0 ? byte & 0xF : byte >> 4;
    return tensor::E2M1ToFloat(nibble) * tensor::E8M0ToFloat(static_cast<uint8_t>(r / 16));
  });
}

// A NaN scale (0xFF) makes its block's weights NaN, not infinite: with every product of one sign
// an infinite block would sum to inf. 20 rows: two single-token row-group pairs and a 4-row tail.
TEST(DequantizeTest, Mxfp4NanScaleMakesEveryProductNan) {
  TestWeights t;
  t.Allocate(WeightFormat::kMxfp4, 20, 64);
  std::fill(t.data.begin(), t.data.end(), static_cast<uint8_t>(0x22));  // E2M1 1.0, 1.0
  for (int64_t r = 0; r < 20; ++r) t.mx_scales[static_cast<size_t>(r * 2 + r % 2)] = 0xFF;
  for (int64_t tokens : {1, 3}) {
    const std::vector<float> x(static_cast<size_t>(tokens * 64), 1.0f);
    for (Isa isa : detail::SupportedIsas()) {
      for (Regime regime : kRegimes) {
        std::vector<float> y(static_cast<size_t>(tokens * 20), 0.0f);
        detail::MatMulWithIsa(isa, regime, x.data(), tokens, t.w, y.data());
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_TRUE(std::isnan(y[i])) << detail::IsaName(isa) << "/" << RegimeName(regime)
                                        << " tokens " << tokens << " output " << i << ": " << y[i];
        }
      }
    }
  }
}

// compressed-tensors INT4 by its definition (checkpoints.md A1.3): nibble u of byte j is element 2j
// (low) or 2j + 1 (high), worth (u - 8) * scale; every byte under BF16 scales from the smallest
// subnormal to the largest finite, signed, and the worked example's 2^-7.
TEST(DequantizeTest, Int4EveryByteUnderManyScales) {
  std::vector<uint16_t> scales = {0x3C00, 0x0001, 0x0080, 0x3F80, 0x7F7F, 0xBF80, 0x3DCD, 0x4120};
  std::mt19937 rng(7);
  for (int i = 0; i < 24; ++i) scales.push_back(static_cast<uint16_t>(rng() & 0x7F7F));
  TestWeights t;
  FillEveryInt4ByteUnderScales(&t, scales);
  ExpectExactWeights(t.w, [&](int64_t r, int64_t c) {
    const uint8_t byte = static_cast<uint8_t>(32 * (r % 8) + c / 2);
    const int u = c % 2 == 0 ? byte & 0xF : byte >> 4;
    return static_cast<float>(u - 8) * tensor::Bf16ToFloat(scales[static_cast<size_t>(r / 8)]);
  });
}

// The worked example of checkpoints.md A1.4: word 0x9A7F0818 (bytes 18 08 7F 9A) under scale
// 0x3C00 = 2^-7 holds 0, -7, 0, -8, 7, -1, 2, 1 times 2^-7.
TEST(DequantizeTest, Int4WorkedExample) {
  TestWeights t;
  t.Allocate(WeightFormat::kInt4, 1, 32);
  const uint8_t word[4] = {0x18, 0x08, 0x7F, 0x9A};
  std::copy(word, word + 4, t.data.begin());
  t.group_scales[0] = 0x3C00;
  std::vector<float> row(32);
  DequantizeRow(t.w, 0, row.data());
  const float want[8] = {0,          -0.0546875f, 0,         -0.0625f,
                         0.0546875f, -0.0078125f, 0.015625f, 0.0078125f};
  for (int c = 0; c < 8; ++c) EXPECT_EQ(row[c], want[c]) << "column " << c;
  for (int c = 8; c < 32; ++c) EXPECT_EQ(row[c], -0.0625f) << "column " << c;  // zero bytes: u 0
}

void ExpectFp8EveryByte(const std::vector<float>& tile_scales) {
  // Column c holds byte c in every row; 70 rows leave a partial row tile.
  constexpr int64_t kBlock = 32;
  TestWeights t;
  t.Allocate(WeightFormat::kFp8Block, 70, 256, kBlock);
  for (int64_t r = 0; r < 70; ++r) {
    for (int c = 0; c < 256; ++c) t.data[r * 256 + c] = static_cast<uint8_t>(c);
  }
  for (size_t i = 0; i < t.block_scales.size(); ++i) {
    t.block_scales[i] = tile_scales[i % tile_scales.size()];
  }
  const float* scales = t.block_scales.data();
  ExpectExactWeights(t.w, [scales](int64_t r, int64_t c) {
    return tensor::E4M3ToFloat(static_cast<uint8_t>(c)) * scales[r / kBlock * 8 + c / kBlock];
  });
}

TEST(DequantizeTest, Fp8EveryByteWithTileScales) {
  ExpectFp8EveryByte({1.0f, 0.5f, 0x1p-20f, 3.3f, 1e-3f, 200.0f, 0x1p-130f, 7e-5f, 0.1f});
}

TEST(DequantizeTest, Fp8EveryByteWithLargeAndNonFiniteTileScales) {
  ExpectFp8EveryByte({1.0f, 1000.0f, 0x1p100f, 3e38f, INFINITY, NAN, 0.0f, -2.5f, 0x1p120f});
}

// The flag only skips the check: on NaN-free weights results are the same bit for bit, and an
// unflagged matrix holding a NaN code still gives NaN for that row (ExpectFp8EveryByte).
TEST(MatMulTest, Fp8NanFreeFlagChangesNoResult) {
  std::mt19937 rng(99);
  TestWeights t;
  FillRandom(t, {"fp8", WeightFormat::kFp8Block, 128}, 37, 384, rng);
  ASSERT_FALSE(tensor::AnyE4M3Nan(t.data.data(), t.data.size()));
  for (int64_t tokens : {1, 3, 8, 40}) {
    const std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 384), rng);
    for (Isa isa : detail::SupportedIsas()) {
      for (Regime regime : kRegimes) {
        std::vector<float> checked(static_cast<size_t>(tokens * 37)), skipped(checked.size());
        t.w.fp8_nan_free = false;
        detail::MatMulWithIsa(isa, regime, x.data(), tokens, t.w, checked.data());
        t.w.fp8_nan_free = true;
        detail::MatMulWithIsa(isa, regime, x.data(), tokens, t.w, skipped.data());
        ASSERT_EQ(std::memcmp(checked.data(), skipped.data(), checked.size() * sizeof(float)), 0)
            << detail::IsaName(isa) << "/" << RegimeName(regime) << " tokens " << tokens;
      }
    }
  }
}

TEST(DequantizeTest, Bf16AndF16EveryValue) {
  for (WeightFormat format : {WeightFormat::kBF16, WeightFormat::kF16}) {
    TestWeights t;
    t.Allocate(format, 256, 256);
    for (int i = 0; i < 65536; ++i) t.As<uint16_t>()[i] = static_cast<uint16_t>(i);
    std::vector<float> row(256);
    for (Isa isa : detail::SupportedIsas()) {
      for (int r = 0; r < 256; ++r) {
        detail::DequantizeRowWithIsa(isa, t.w, r, row.data());
        for (int c = 0; c < 256; ++c) {
          const uint16_t bits = static_cast<uint16_t>(r * 256 + c);
          const float want =
              format == WeightFormat::kBF16 ? tensor::Bf16ToFloat(bits) : tensor::F16ToFloat(bits);
          ASSERT_TRUE(SameBits(row[c], want)) << detail::IsaName(isa) << " bits " << bits;
        }
      }
    }
  }
}

TEST(DequantizeTest, F32IsACopy) {
  TestWeights t;
  t.Allocate(WeightFormat::kF32, 3, 37);
  std::mt19937 rng(5);
  for (int i = 0; i < 3 * 37; ++i) t.As<float>()[i] = std::uniform_real_distribution<float>()(rng);
  std::vector<float> row(37);
  for (Isa isa : detail::SupportedIsas()) {
    detail::DequantizeRowWithIsa(isa, t.w, 2, row.data());
    EXPECT_EQ(0, std::memcmp(row.data(), t.As<float>() + 74, 37 * sizeof(float)));
  }
}

TEST(MatMulTest, PoolMatchesCallingThreadBitForBit) {
  base::ThreadPool pool(3);
  std::mt19937 rng(99);
  const FormatCase cases[] = {{"F32", WeightFormat::kF32},
                              {"BF16", WeightFormat::kBF16},
                              {"F16", WeightFormat::kF16},
                              {"MXFP4", WeightFormat::kMxfp4},
                              {"INT4", WeightFormat::kInt4},
                              {"FP8", WeightFormat::kFp8Block, 128},
                              {"FP8_fallback", WeightFormat::kFp8Block, 7}};
  for (const FormatCase& fc : cases) {
    TestWeights t;
    FillRandom(t, fc, 263, 1024, rng);  // 263 x 1024 > the single-thread cutoff
    for (int64_t tokens : {1, 5, 40}) {
      std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 1024), rng);
      for (Isa isa : detail::SupportedIsas()) {
        for (Regime regime : kRegimes) {
          if (isa == Isa::kScalar && regime != Regime::kAuto) continue;  // one scalar kernel
          std::vector<float> alone(static_cast<size_t>(tokens * 263));
          std::vector<float> pooled(alone.size()), again(alone.size());
          detail::MatMulWithIsa(isa, regime, x.data(), tokens, t.w, alone.data(), nullptr);
          detail::MatMulWithIsa(isa, regime, x.data(), tokens, t.w, pooled.data(), &pool);
          detail::MatMulWithIsa(isa, regime, x.data(), tokens, t.w, again.data(), &pool);
          EXPECT_EQ(0, std::memcmp(alone.data(), pooled.data(), alone.size() * sizeof(float)))
              << fc.name << " " << detail::IsaName(isa) << "/" << RegimeName(regime) << " tokens "
              << tokens;
          EXPECT_EQ(0, std::memcmp(pooled.data(), again.data(), alone.size() * sizeof(float)))
              << fc.name << " " << detail::IsaName(isa) << "/" << RegimeName(regime) << " tokens "
              << tokens;
        }
      }
    }
  }
}

TEST(MatMulTest, PublicEntryPointUsesBestIsa) {
  std::mt19937 rng(3);
  TestWeights t;
  FillRandom(t, {"BF16", WeightFormat::kBF16}, 40, 96, rng);
  for (int64_t tokens : {1, 20}) {
    std::vector<float> x = RandomVector(static_cast<size_t>(tokens * 96), rng);
    std::vector<float> a(static_cast<size_t>(tokens * 40)), b(a.size());
    MatMul(x.data(), tokens, t.w, a.data());
    detail::MatMulWithIsa(detail::BestIsa(), Regime::kAuto, x.data(), tokens, t.w, b.data());
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  }
  // The name, plus what the VBMI table changes (matmul_kernels.h, Avx512VbmiKernels).
  const std::string name = detail::IsaName(detail::BestIsa());
  EXPECT_EQ(MatMulIsa(),
            detail::HasAvx512VbmiKernels() && name == "avx512" ? name + " (+vbmi fp8)" : name);
  EXPECT_TRUE(detail::IsaSupported(Isa::kScalar));
}

TEST(MatMulTest, EmptyShapes) {
  TestWeights t;
  t.Allocate(WeightFormat::kBF16, 4, 0);
  std::vector<float> y(8, 7.0f);
  float x = 0;
  MatMul(&x, 2, t.w, y.data());
  for (float v : y) EXPECT_EQ(v, 0.0f);
  MatMul(nullptr, 0, t.w, nullptr);
}

// ---- MXFP8 activation quantisation ----

double E4M3Value(int code) {  // OCP MX v1.0 E4M3, from the definition
  int sign = code >> 7, e = (code >> 3) & 15, m = code & 7;
  double v = e == 0 ? m / 8.0 * std::pow(2.0, -6) : (1 + m / 8.0) * std::pow(2.0, e - 7);
  return sign ? -v : v;
}

// The nearest finite E4M3 value to v, ties to the even code (saturates at +-448 by nearness).
double NearestE4M3(double v) {
  int best = 0;
  double best_err = INFINITY;
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7F) == 0x7F) continue;
    double err = std::fabs(E4M3Value(code) - v);
    if (err < best_err || (err == best_err && (code & 1) == 0 && (best & 1) == 1)) {
      best = code;
      best_err = err;
    }
  }
  return E4M3Value(best);
}

std::vector<float> QuantizeByDefinition(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (size_t b = 0; b < x.size(); b += 32) {
    double amax = 0;
    bool finite = true;
    for (size_t i = b; i < b + 32; ++i) {
      finite = finite && std::isfinite(x[i]);
      amax = std::max(amax, std::fabs(double{x[i]}));
    }
    for (size_t i = b; i < b + 32; ++i) {
      if (!finite) {
        out[i] = NAN;
      } else if (amax == 0) {
        out[i] = x[i];
      } else {
        int k = -160;  // floor(log2(amax)) by search
        while (std::ldexp(1.0, k + 1) <= amax) ++k;
        const int exponent = std::clamp(k - 8, -127, 127);
        const double scale = std::ldexp(1.0, exponent);
        out[i] = static_cast<float>(NearestE4M3(x[i] / scale) * scale);
      }
    }
  }
  return out;
}

TEST(QuantizeMxfp8Test, MatchesBruteForceDefinition) {
  std::mt19937 rng(11);
  std::vector<float> x;
  for (int block = 0; block < 400; ++block) {
    // Each block draws magnitudes from its own window of binades, from subnormal to huge.
    const float top = std::uniform_real_distribution<float>(-140.0f, 127.0f)(rng);
    const float width = std::uniform_real_distribution<float>(0.0f, 30.0f)(rng);
    std::uniform_real_distribution<float> exponent(top - width, top);
    for (int i = 0; i < 32; ++i) {
      float v = std::exp2(exponent(rng)) * (rng() & 1 ? -1.0f : 1.0f);
      if (block % 7 == 3 && i % 5 == 0) v = 0.0f;
      x.push_back(v);
    }
  }
  for (int i = 0; i < 32; ++i) x.push_back(0.0f);  // all-zero block
  x.insert(x.end(), {448.0f, 480.0f, 500.0f, 511.9f, -1.0f, 0.0625f, 1.0f + 1.0f / 16});
  x.resize((x.size() + 31) / 32 * 32, 0.25f);
  // A block with scale 1 (amax in [256, 512)) holding exact ties, normal and subnormal.
  const float ties[] = {464.0f,        472.0f,    17.0f,      19.0f,        1.0625f,
                        1.1875f,       -1.1875f,  0x1p-10f,   3 * 0x1p-10f, 5 * 0x1p-10f,
                        -3 * 0x1p-10f, 0x1.2p-6f, 0x1.1p-6f,  0.0f,         -0.0f,
                        0x1p-30f,      300.0f,    -0x1.12p-4f};
  x.insert(x.end(), std::begin(ties), std::end(ties));
  x.resize((x.size() + 31) / 32 * 32, 256.0f);
  for (int i = 0; i < 32; ++i) x.push_back(i == 5 ? INFINITY : 1.0f);  // non-finite blocks
  for (int i = 0; i < 32; ++i) x.push_back(i == 9 ? NAN : 1.0f);
  const std::vector<float> want = QuantizeByDefinition(x);
  std::vector<float> got = x;
  QuantizeMxfp8InPlace(got.data(), static_cast<int64_t>(got.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(SameValue(got[i], want[i]))
        << i << ": " << x[i] << " -> " << got[i] << " want " << want[i];
  }
}

TEST(QuantizeMxfp8Test, QuantisedValuesAreFixedPoints) {
  std::mt19937 rng(12);
  std::vector<float> x = RandomVector(256, rng);
  QuantizeMxfp8InPlace(x.data(), 256);
  std::vector<float> again = x;
  QuantizeMxfp8InPlace(again.data(), 256);
  EXPECT_EQ(0, std::memcmp(x.data(), again.data(), x.size() * sizeof(float)));
}

}  // namespace
}  // namespace k3::kernels
