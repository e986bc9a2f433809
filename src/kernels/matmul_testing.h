// Random weight matrices of every format, and the error bound, for the MatMul tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "tensor/numeric.h"

namespace k3::kernels::matmul_testing {

// A weight matrix and the storage it views.
struct TestWeights {
  WeightMatrix w;
  std::vector<uint8_t> data;
  std::vector<uint8_t> mx_scales;
  std::vector<uint16_t> group_scales;  // kInt4: BF16 bits
  std::vector<float> block_scales;

  TestWeights() = default;
  TestWeights(const TestWeights&) = delete;
  TestWeights& operator=(const TestWeights&) = delete;

  void Allocate(WeightFormat format, int64_t rows, int64_t cols, int64_t block = 128) {
    w.format = format;
    w.rows = rows;
    w.cols = cols;
    w.block = block;
    int64_t bytes = rows * cols;
    if (format == WeightFormat::kF32) bytes *= 4;
    if (format == WeightFormat::kBF16 || format == WeightFormat::kF16) bytes *= 2;
    if (IsFourBit(format)) bytes /= 2;
    if (format == WeightFormat::kMxfp4) {
      mx_scales.assign(static_cast<size_t>(rows * cols / 32), 127);
      w.mx_scales = mx_scales.data();
    }
    if (format == WeightFormat::kInt4 || format == WeightFormat::kInt8Block) {
      group_scales.assign(static_cast<size_t>(rows * cols / 32), tensor::FloatToBf16(1.0f));
      w.group_scales = group_scales.data();
    }
    if (format == WeightFormat::kFp8Block) {
      block_scales.assign(
          static_cast<size_t>((rows + block - 1) / block * ((cols + block - 1) / block)), 1.0f);
      w.block_scales = block_scales.data();
    }
    data.assign(static_cast<size_t>(bytes), 0);
    w.data = data.data();
  }
  template <typename T>
  T* As() {
    return reinterpret_cast<T*>(data.data());
  }
};

// 256 x 16 rows of 32 MXFP4 weights: row 16 * e + g holds bytes 16g .. 16g + 15 under scale byte
// e, i.e. all 256 bytes (both nibbles) under all 256 E8M0 scales (2^-127, 2^127, NaN included).
inline void FillEveryMxfp4ByteUnderEveryScale(TestWeights* t) {
  t->Allocate(WeightFormat::kMxfp4, 256 * 16, 32);
  for (int e = 0; e < 256; ++e) {
    for (int g = 0; g < 16; ++g) {
      const int r = 16 * e + g;
      t->mx_scales[r] = static_cast<uint8_t>(e);
      for (int i = 0; i < 16; ++i) t->data[r * 16 + i] = static_cast<uint8_t>(16 * g + i);
    }
  }
}

// 256 x 8 rows of 32 INT4 weights: row 8 * s + g holds bytes 32 * (g % 8) .. + 31 (the byte
// values 0..255, both nibbles) under the s-th scale of `scales`.
inline void FillEveryInt4ByteUnderScales(TestWeights* t, const std::vector<uint16_t>& scales) {
  const int64_t rows = 8 * static_cast<int64_t>(scales.size());
  t->Allocate(WeightFormat::kInt4, rows, 64);
  for (int64_t r = 0; r < rows; ++r) {
    t->group_scales[r * 2] = scales[r / 8];
    t->group_scales[r * 2 + 1] = scales[r / 8];
    for (int i = 0; i < 32; ++i) t->data[r * 32 + i] = static_cast<uint8_t>(32 * (r % 8) + i);
  }
}

// What a weight format configuration draws: the format, the FP8 block and its scale range.
struct FormatCase {
  std::string name;
  WeightFormat format;
  int64_t block = 128;
  float min_scale = 0.25f, max_scale = 2.0f;
  int max_fp8_code = 0x7E;    // largest E4M3 magnitude code drawn
  bool fp8_nan_free = false;  // set WeightMatrix::fp8_nan_free (codes above 0x7E make it a lie)
};

inline void FillRandom(TestWeights& t, const FormatCase& fc, int64_t rows, int64_t cols,
                       std::mt19937& rng) {
  t.Allocate(fc.format, rows, cols, fc.block);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const size_t n = static_cast<size_t>(rows * cols);
  switch (fc.format) {
    case WeightFormat::kF32:
      for (size_t i = 0; i < n; ++i) t.As<float>()[i] = uniform(rng);
      break;
    case WeightFormat::kBF16:
      for (size_t i = 0; i < n; ++i) t.As<uint16_t>()[i] = tensor::FloatToBf16(uniform(rng));
      break;
    case WeightFormat::kF16:
      for (size_t i = 0; i < n; ++i) t.As<uint16_t>()[i] = tensor::FloatToF16(2 * uniform(rng));
      break;
    case WeightFormat::kMxfp4:
      for (uint8_t& b : t.data) b = static_cast<uint8_t>(rng());
      for (uint8_t& s : t.mx_scales) s = static_cast<uint8_t>(123 + rng() % 9);
      break;
    case WeightFormat::kInt4: {
      // Scales as the minmax observer makes them (amax / 7.5) for weights of magnitude ~0.01..1.
      std::uniform_real_distribution<float> log_scale(-10.0f, -3.0f);
      for (uint8_t& b : t.data) b = static_cast<uint8_t>(rng());
      for (uint16_t& s : t.group_scales) s = tensor::FloatToBf16(std::exp2(log_scale(rng)));
      break;
    }
    case WeightFormat::kInt8Block: {  // bytes 1..255 (values -127..127), as QuantizeInt8Block makes
      std::uniform_real_distribution<float> log_scale(-14.0f, -7.0f);
      for (uint8_t& b : t.data) b = static_cast<uint8_t>(1 + rng() % 255);
      for (uint16_t& s : t.group_scales) s = tensor::FloatToBf16(std::exp2(log_scale(rng)));
      break;
    }
    case WeightFormat::kFp8Block: {
      // NaN codes (0x7F, 0xFF) have their own test.
      for (uint8_t& b : t.data) {
        b = static_cast<uint8_t>((rng() & 0x80) | rng() % (fc.max_fp8_code + 1));
      }
      std::uniform_real_distribution<float> log_scale(std::log2(fc.min_scale),
                                                      std::log2(fc.max_scale));
      for (float& s : t.block_scales) s = std::exp2(log_scale(rng));
      t.w.fp8_nan_free = fc.fp8_nan_free;
      break;
    }
    case WeightFormat::kBf16Panels:  // made from kBF16 by PackBf16Panels (matmul_panels_test.cc)
      break;
  }
}

inline std::vector<float> RandomVector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = uniform(rng);
  return v;
}

// The weight formats the integer-activation path takes (matmul_int8.h).
inline const FormatCase kInt8Formats[] = {{"MXFP4", WeightFormat::kMxfp4},
                                          {"INT4", WeightFormat::kInt4},
                                          {"INT8_block", WeightFormat::kInt8Block}};

// Activations with outliers and sign changes, as hidden states have them.
inline std::vector<float> OutlierActivations(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng) * (rng() % 17 == 0 ? 20.0f : 1.0f);
  return x;
}

// sum_c |x[t, c] * W[r, c]| for the error bound.
inline std::vector<double> AbsProducts(const std::vector<float>& x, int64_t tokens,
                                       const WeightMatrix& w) {
  std::vector<double> out(static_cast<size_t>(tokens * w.rows));
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    DequantizeRow(w, r, row.data());
    for (int64_t t = 0; t < tokens; ++t) {
      double sum = 0;
      for (int64_t c = 0; c < w.cols; ++c) sum += std::fabs(double{x[t * w.cols + c]} * row[c]);
      out[t * w.rows + r] = sum;
    }
  }
  return out;
}

// Sets the process-wide GEMM precision for a scope and restores the previous one.
class ScopedGemmPrecision {
 public:
  explicit ScopedGemmPrecision(GemmPrecision p) : saved_(GetGemmPrecision()) {
    SetGemmPrecision(p);
  }
  ~ScopedGemmPrecision() { SetGemmPrecision(saved_); }
  ScopedGemmPrecision(const ScopedGemmPrecision&) = delete;
  ScopedGemmPrecision& operator=(const ScopedGemmPrecision&) = delete;

 private:
  GemmPrecision saved_;
};

// The bound on |GemmPrecision::kBf16 result - exact| given S = sum_c |x[t, c] * W[r, c]|, with
// u = 2^-8 the unit roundoff of BF16 (8 significant bits) and 2^-24 that of float32:
//   each factor rounds once to BF16: |x~ w~ - x w| <= (2u + u^2) |x w|;
//   the BF16 products are exact in float32, and `cols` float32 additions (in any order, any
//   tree: vdpbf16ps lanes plus horizontal sums) add at most cols * 2^-24 * (1 + 2u + u^2) * S;
//   rounding the reference to float adds 2^-24 * S;
//   flushing subnormal inputs, products and sums adds at most 2^-126 per term times a factor of
//   magnitude <= 2 (the draws of FillRandom and RandomVector), plus 2^-126 per addition.
inline double Bf16Tolerance(double abs_products, int64_t cols) {
  const double u = 0x1p-8;
  const double relative = 2 * u + u * u + static_cast<double>(cols + 1) * 0x1p-23;
  return relative * abs_products + 4.0 * static_cast<double>(cols + 1) * 0x1p-126;
}

inline float RoundToBf16(float v) { return tensor::Bf16ToFloat(tensor::FloatToBf16(v)); }

}  // namespace k3::kernels::matmul_testing
