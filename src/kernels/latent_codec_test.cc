// Latent cache entry codecs (LatentDtype, op_args.h): the CPU kernels' encoder stores the same
// bytes as the reference's (the format definitions in tensor/numeric.h) and both decode them to
// the same floats; the round trip stays within the stated bounds over many random entries and the
// edge cases (0, tiny values, 448 saturation, ties, negative values, one huge value beside tiny
// ones); no stored fp8 code is NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_ops.h"
#include "kernels/reference/reference_backend.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

constexpr LatentDtype kDtypes[] = {LatentDtype::kF32, LatentDtype::kBf16, LatentDtype::kFp8E4m3};

// Entries of `dim` values covering magnitudes from 1e-30 to 1e30 and the edge cases.
std::vector<std::vector<float>> TestEntries(int64_t dim) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> log_scale(-30.0f, 30.0f);
  std::vector<std::vector<float>> entries;
  for (int i = 0; i < 2000; ++i) {
    const float scale = std::pow(10.0f, log_scale(rng));
    std::vector<float> e(dim);
    for (float& x : e) x = normal(rng) * scale;
    if (i % 3 == 0) e[i % dim] *= 1e4f;  // one outlier: the others fall to fp8 subnormals
    entries.push_back(e);
  }
  entries.push_back(std::vector<float>(dim, 0.0f));
  entries.push_back(std::vector<float>(dim, -0.0f));
  // amax 448 (scale exactly 1): every E4M3 value, the midpoints between neighbours (ties to even)
  // and their float neighbours, both signs.
  std::vector<float> sweep = {448.0f};
  for (int code = 0; code < 0x7E; ++code) {
    const float lo = tensor::E4M3ToFloat(code), hi = tensor::E4M3ToFloat(code + 1);
    const float mid = (lo + hi) / 2;
    for (float x : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      sweep.push_back(x);
      sweep.push_back(-x);
    }
  }
  sweep.push_back(-448.0f);
  for (size_t begin = 0; begin < sweep.size(); begin += dim - 1) {
    std::vector<float> e(dim, 0.0f);
    e[0] = 448.0f;
    for (int64_t c = 1; c < dim && begin + c - 1 < sweep.size(); ++c) e[c] = sweep[begin + c - 1];
    entries.push_back(e);
  }
  return entries;
}

// The stated bound of one value's round trip (op_args.h); scale: the fp8 entry's scale. A slack of
// 2^-20 relative covers the float rounding of e / scale and scale * code.
double Bound(LatentDtype dtype, float e, float scale) {
  const double a = std::fabs(double{e});
  if (dtype == LatentDtype::kF32) return 0.0;
  if (dtype == LatentDtype::kBf16) return a * 0x1p-8 + 0x1p-134;
  const double y = a / scale;
  const double half_ulp = y >= 0x1p-6 ? std::exp2(std::floor(std::log2(y)) - 4) : 0x1p-10;
  return half_ulp * scale * (1 + 0x1p-20) + a * 0x1p-20;
}

TEST(LatentCodec, CpuAndReferenceStoreTheSameBytesAndRoundTripWithinTheBound) {
  for (int64_t dim : {576, 28, 7}) {
    const auto entries = TestEntries(dim);
    for (LatentDtype dtype : kDtypes) {
      const std::string what = std::string(LatentDtypeName(dtype)) + " dim " + std::to_string(dim);
      const int64_t bytes = LatentEntryBytes(dtype, dim);
      double worst_relative = 0.0;
      for (const std::vector<float>& e : entries) {
        std::vector<uint8_t> cpu(bytes), ref(bytes);
        cpu::EncodeLatentEntry(dtype, e.data(), dim, cpu.data());
        reference::EncodeLatentEntry(dtype, e.data(), dim, ref.data());
        ASSERT_EQ(
            std::memcmp(cpu.data(), ref.data(), dtype == LatentDtype::kFp8E4m3 ? 4 + dim : bytes),
            0)
            << what;
        std::vector<float> q(dim), q_ref(dim);
        cpu::DecodeLatentEntry(dtype, cpu.data(), dim, q.data());
        reference::DecodeLatentEntry(dtype, ref.data(), dim, q_ref.data());
        ASSERT_EQ(std::memcmp(q.data(), q_ref.data(), dim * sizeof(float)), 0) << what;
        float scale = 0.0f;
        if (dtype == LatentDtype::kFp8E4m3) std::memcpy(&scale, cpu.data(), sizeof(float));
        for (int64_t c = 0; c < dim; ++c) {
          if (dtype == LatentDtype::kFp8E4m3) {
            ASSERT_NE(cpu[4 + c] & 0x7F, 0x7F) << what;
          }
          ASSERT_FALSE(std::isnan(q[c])) << what;
          const double err = std::fabs(double{e[c]} - q[c]);
          ASSERT_LE(err, Bound(dtype, e[c], scale)) << what << " value " << e[c] << " got " << q[c];
          const bool normal = dtype != LatentDtype::kFp8E4m3 || std::fabs(e[c]) >= 0x1p-6f * scale;
          if (e[c] != 0.0f && normal) {
            worst_relative = std::max(worst_relative, err / std::fabs(double{e[c]}));
          }
        }
      }
      std::printf(
          "%s: worst relative round-trip error %.3g (fp8: over values at or above 2^-6 of the "
          "scale)\n",
          what.c_str(), worst_relative);
    }
  }
}

TEST(LatentCodec, StoredBytesPerEntry) {
  EXPECT_EQ(LatentEntryBytes(LatentDtype::kF32, 576), 2304);
  EXPECT_EQ(LatentEntryBytes(LatentDtype::kBf16, 576), 1152);
  EXPECT_EQ(LatentEntryBytes(LatentDtype::kFp8E4m3, 576), 580);
  EXPECT_EQ(LatentEntryBytes(LatentDtype::kFp8E4m3, 7), 12);  // a 4-aligned scale in every entry
}

}  // namespace
}  // namespace k3::kernels
