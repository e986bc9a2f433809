// The vectorisable exp/sigmoid/tanh/softplus against libm in double, across the whole useful range,
// and vectorize.h's DotInDouble against long double.
#include "kernels/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/vectorize.h"

namespace k3::kernels {
namespace {

double RelativeError(double got, double want) {
  return std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
}

TEST(VectorMath, ExpIsWithinFewUlp) {
  double worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.00137f)
    worst = std::max(worst, RelativeError(FastExp(x), std::exp(double(x))));
  EXPECT_LT(worst, 4e-7);
  EXPECT_EQ(FastExp(0.0f), 1.0f);
  EXPECT_GT(FastExp(-200.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(FastExp(200.0f)));
}

TEST(VectorMath, TanhAndSigmoidAreAccurateIncludingNearZero) {
  double worst_tanh = 0, worst_sigmoid = 0;
  for (float x = -30.0f; x < 30.0f; x += 0.00071f) {
    worst_tanh = std::max(worst_tanh, RelativeError(FastTanh(x), std::tanh(double(x))));
    worst_sigmoid =
        std::max(worst_sigmoid, RelativeError(FastSigmoid(x), 1.0 / (1.0 + std::exp(-double(x)))));
  }
  for (float x = 1e-8f; x < 0.2f; x *= 1.01f) {
    worst_tanh = std::max(worst_tanh, RelativeError(FastTanh(x), std::tanh(double(x))));
    worst_tanh = std::max(worst_tanh, RelativeError(FastTanh(-x), std::tanh(-double(x))));
  }
  EXPECT_LT(worst_tanh, 1e-6);
  EXPECT_LT(worst_sigmoid, 1e-6);
}

TEST(VectorMath, SoftplusIsWithinFewUlpForEverySign) {
  double worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.00093f) {
    const double want = std::log1p(std::exp(double(x)));
    worst = std::max(worst, RelativeError(FastSoftplus(x), want));
  }
  for (float x = 1e-8f; x < 0.5f; x *= 1.01f) {  // near zero: log 2 +- x / 2
    worst = std::max(worst, RelativeError(FastSoftplus(x), std::log1p(std::exp(double(x)))));
    worst = std::max(worst, RelativeError(FastSoftplus(-x), std::log1p(std::exp(-double(x)))));
  }
  EXPECT_LT(worst, 6e-7);
  EXPECT_EQ(FastSoftplus(100.0f), 100.0f);
  EXPECT_GT(FastSoftplus(-80.0f), 0.0f);
}

TEST(VectorMath, DotInDoubleSumsEveryElementIncludingTails) {
  for (int64_t n : {0, 1, 7, 8, 9, 100, 2051}) {
    std::vector<float> a(static_cast<size_t>(n)), b(a.size());
    long double want = 0;
    for (int64_t i = 0; i < n; ++i) {
      a[i] = std::ldexp(1.0f + static_cast<float>(i % 13) / 16, static_cast<int>(i % 9) - 4);
      b[i] = static_cast<float>((i * 7919) % 29) - 14.5f;
      want += static_cast<long double>(a[i]) * b[i];
    }
    // The products are exact in double; only the additions round (n of them, ~1e-16 each).
    EXPECT_NEAR(DotInDouble(a.data(), b.data(), n), static_cast<double>(want),
                1e-15 * (1 + std::fabs(static_cast<double>(want))) * (n + 1))
        << n;
  }
}

}  // namespace
}  // namespace k3::kernels
