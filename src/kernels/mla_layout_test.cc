// AbsorbedKvBStorage and RowRange against DequantizeRow of the source matrix: every weight of the
// layout must equal the kv_b weight it stands for, exactly, in every format.
#include "kernels/mla_layout.h"

#include <gtest/gtest.h>

#include <random>

#include "kernels/matmul_testing.h"

namespace k3::kernels {
namespace {

using matmul_testing::FillRandom;
using matmul_testing::FormatCase;
using matmul_testing::TestWeights;

std::vector<float> Row(const WeightMatrix& w, int64_t row) {
  std::vector<float> out(static_cast<size_t>(w.cols));
  DequantizeRow(w, row, out.data());
  return out;
}

struct LayoutCase {
  FormatCase format;
  bool keeps_format;  // keys_t in kv_b's format and values = kv_b (else both float32)
};

class AbsorbedLayoutTest : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(AbsorbedLayoutTest, EveryWeightIsKvBs) {
  const LayoutCase& lc = GetParam();
  const MlaShape shape{3, 16, 8, 32, 64, 1.0f};  // heads, nope, rope, value, latent
  const int64_t dn = shape.nope_dim, dv = shape.value_dim, r = shape.latent_dim;
  std::mt19937 rng(7);
  TestWeights kv;
  FillRandom(kv, lc.format, shape.heads * (dn + dv), r, rng);
  const AbsorbedKvBStorage storage(kv.w, shape);
  const AbsorbedKvB& layout = storage.layout();
  const WeightFormat want = lc.keeps_format ? kv.w.format : WeightFormat::kF32;
  EXPECT_EQ(layout.keys_t.format, want);
  EXPECT_EQ(layout.values.format, want);
  EXPECT_EQ(layout.values.data == kv.w.data, lc.keeps_format);
  ASSERT_EQ(layout.keys_t.rows, shape.heads * r);
  ASSERT_EQ(layout.keys_t.cols, dn);
  for (int64_t h = 0; h < shape.heads; ++h) {
    const WeightMatrix keys = RowRange(layout.keys_t, h * r, r);
    const WeightMatrix values = RowRange(layout.values, h * (dn + dv) + dn, dv);
    for (int64_t c = 0; c < r; ++c) {
      const std::vector<float> key_row = Row(keys, c);
      for (int64_t n = 0; n < dn; ++n) {
        ASSERT_EQ(key_row[n], Row(kv.w, h * (dn + dv) + n)[c]) << "head " << h << " c " << c;
      }
    }
    for (int64_t v = 0; v < dv; ++v) {
      ASSERT_EQ(Row(values, v), Row(kv.w, h * (dn + dv) + dn + v)) << "head " << h << " v " << v;
    }
  }
  // Owned bytes: the transposed keys in the stored format (plus tile scales), or both halves
  // as float32.
  const size_t key_elements = static_cast<size_t>(shape.heads * r * dn);
  if (!lc.keeps_format) {
    EXPECT_EQ(storage.owned_bytes(), 4 * key_elements + 4 * static_cast<size_t>(kv.w.rows * r));
  } else if (kv.w.format == WeightFormat::kFp8Block) {
    const size_t tiles = key_elements / static_cast<size_t>(kv.w.block * kv.w.block);
    EXPECT_EQ(storage.owned_bytes(), key_elements + 4 * tiles);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, AbsorbedLayoutTest,
    ::testing::Values(LayoutCase{{"f32", WeightFormat::kF32}, true},
                      LayoutCase{{"bf16", WeightFormat::kBF16}, true},
                      LayoutCase{{"f16", WeightFormat::kF16}, true},
                      // 16 divides latent, nope and value: tiles transpose with their scales.
                      LayoutCase{{"fp8_16", WeightFormat::kFp8Block, 16}, true},
                      // 32 does not divide nope (16): float32 fallback.
                      LayoutCase{{"fp8_32", WeightFormat::kFp8Block, 32}, false},
                      LayoutCase{{"int8", WeightFormat::kInt8Block}, false},
                      LayoutCase{{"mxfp4", WeightFormat::kMxfp4}, false}),
    [](const auto& info) { return info.param.format.name; });

TEST(RowRange, ViewsTheRowsOfEveryFormat) {
  std::mt19937 rng(11);
  for (const FormatCase& fc :
       {FormatCase{"f32", WeightFormat::kF32}, FormatCase{"bf16", WeightFormat::kBF16},
        FormatCase{"f16", WeightFormat::kF16}, FormatCase{"mxfp4", WeightFormat::kMxfp4},
        FormatCase{"int4", WeightFormat::kInt4}, FormatCase{"int8", WeightFormat::kInt8Block},
        FormatCase{"fp8", WeightFormat::kFp8Block, 8}}) {
    TestWeights t;
    FillRandom(t, fc, 40, 96, rng);
    const WeightMatrix view = RowRange(t.w, 16, 17);
    ASSERT_EQ(view.rows, 17) << fc.name;
    for (int64_t row = 0; row < view.rows; ++row) {
      ASSERT_EQ(Row(view, row), Row(t.w, 16 + row)) << fc.name << " row " << row;
    }
  }
}

TEST(RowRangeDeathTest, Fp8ViewsStartOnATile) {
  std::mt19937 rng(3);
  TestWeights t;
  FillRandom(t, {"fp8", WeightFormat::kFp8Block, 8}, 40, 96, rng);
  EXPECT_DEATH(RowRange(t.w, 4, 8), "must start on a tile");
  EXPECT_DEATH(RowRange(t.w, 32, 9), "rows \\[32, 41\\)");
}

}  // namespace
}  // namespace k3::kernels
