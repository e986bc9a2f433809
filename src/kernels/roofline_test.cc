#include "kernels/roofline.h"

#include <gtest/gtest.h>

#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_int8.h"
#include "kernels/roofline_detail.h"

namespace k3::kernels {
namespace {

TEST(RooflineTest, ReadBandwidthIsPositive) {
  base::ThreadPool pool(2);
  EXPECT_GT(MeasureReadBandwidthGBs(&pool, size_t{8} << 20, 2), 0.1);
  EXPECT_GT(MeasureReadBandwidthGBs(nullptr, size_t{1} << 20, 1), 0.1);
}

// One buffer read again and again, by the pool's threads and by the calling thread alone.
TEST(RooflineTest, ABandwidthProbeReadsItsBufferAgain) {
  base::ThreadPool pool(2);
  const ReadBandwidthProbe probe(size_t{8} << 20);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(probe.MeasureGBs(&pool, 2), 0.1);
    EXPECT_GT(probe.MeasureGBs(nullptr, 1), 0.1);
  }
}

TEST(RooflineTest, PeakGflopsPerIsaIsPositive) {
  base::ThreadPool pool(2);
  for (detail::Isa isa : detail::SupportedIsas()) {
    EXPECT_GT(detail::MeasurePeakFp32GflopsWithIsa(isa, &pool, 20000, 2), 0.1)
        << detail::IsaName(isa);
    EXPECT_GT(detail::MeasurePeakFp32GflopsWithIsa(isa, nullptr, 20000, 1), 0.1)
        << detail::IsaName(isa);
  }
}

// Positive wherever an integer kernel set runs (any AVX2 core: matmul_int8.h), else 0.
TEST(RooflineTest, IntegerPeakIsPositiveWhereTheCpuHasIntegerDots) {
  base::ThreadPool pool(2);
  const double gops = MeasurePeakInt8Gops(&pool);
  if (MatMulHasInt8Dot()) {
    EXPECT_GT(gops, 0.1);
  } else {
    EXPECT_EQ(gops, 0.0);
  }
}

// The AMX peak exists only with AMX; a tile instruction does 16 x 16 x 32 products, so its chains
// outrun FP32 FMAs on the same threads by far (6.0-7.1 TFLOP/s against ~0.45 on a 2-thread VM).
TEST(RooflineTest, AmxPeakIsMeasuredOnlyWithAmxAndBeatsFp32) {
  base::ThreadPool pool(2);
  const double amx = MeasurePeakAmxBf16Gflops(&pool);
  if (!MatMulHasAmx()) {
    EXPECT_EQ(amx, 0.0);
    return;
  }
  EXPECT_GT(amx, MeasurePeakFp32Gflops(&pool));
}

}  // namespace
}  // namespace k3::kernels
