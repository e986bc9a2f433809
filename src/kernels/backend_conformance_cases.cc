// Op cases: memory, matrix products on every stored format, norms, activations, RoPE, sampling.
// Tolerances are stated per case: float32 kernels against double oracles; FastExp/FastTanh are
// within a few ulp, so elementwise ops get rtol 1e-5.
#include <algorithm>
#include <deque>
#include <numeric>
#include <set>

#include "kernels/backend_conformance.h"
#include "kernels/matmul_testing.h"

namespace k3::kernels::conformance {
namespace {

using matmul_testing::FormatCase;
using matmul_testing::TestWeights;

// Sizes with odd tails, plus one random size in [1, 80).
std::vector<int64_t> Sizes(std::mt19937& rng, std::vector<int64_t> fixed) {
  fixed.push_back(1 + static_cast<int64_t>(rng() % 79));
  return fixed;
}

// A weight matrix in one backend's memory.
struct DeviceWeights {
  DeviceWeights(Backend& b, const TestWeights& t)
      : data(b, t.data), mx(b, t.mx_scales), group(b, t.group_scales), scales(b, t.block_scales) {
    w = t.w;
    w.data = data.get();
    w.mx_scales = t.mx_scales.empty() ? nullptr : mx.get();
    w.group_scales = t.group_scales.empty() ? nullptr : group.get();
    w.block_scales = t.block_scales.empty() ? nullptr : scales.get();
  }
  DeviceArray<uint8_t> data, mx;
  DeviceArray<uint16_t> group;
  DeviceArray<float> scales;
  WeightMatrix w;
};

// |got - want| <= 1e-5 sum_c |x w| + 1e-6 per output (as matmul_test.cc states for MatMul).
void ExpectProductsNear(const std::vector<float>& got, const std::vector<float>& want,
                        const std::vector<double>& abs_products, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tolerance = 1e-5 * abs_products[i] + 1e-6;
    if (!(std::fabs(double{got[i]} - want[i]) <= tolerance)) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i]
                    << " (tolerance " << tolerance << ")";
      return;
    }
  }
}

const std::vector<FormatCase>& Formats() {
  static const std::vector<FormatCase> formats = {
      {"f32", WeightFormat::kF32},   {"bf16", WeightFormat::kBF16},
      {"f16", WeightFormat::kF16},   {"mxfp4", WeightFormat::kMxfp4},
      {"int4", WeightFormat::kInt4}, {"fp8_block32", WeightFormat::kFp8Block, 32}};
  return formats;
}

void MemoryCase(CaseEnv& env) {
  const std::vector<float> host = Normal(env.rng, 1000);
  DeviceArray<float> a(env.backend, host), b(env.backend, std::vector<float>(1000, 1.0f));
  env.backend.Copy(b.get(), a.get(), 999 * sizeof(float));
  env.backend.Zero(a.get(), 500 * sizeof(float));
  std::vector<float> want_b = host;
  want_b[999] = 1.0f;
  std::vector<float> want_a = host;
  std::fill(want_a.begin(), want_a.begin() + 500, 0.0f);
  ExpectEqual(b.Download(), want_b, "Copy");
  ExpectEqual(a.Download(), want_a, "Zero");
}

// Products: error of a float32 sum of n terms against the double sum, relative to sum |x w|.
void MatMulCase(CaseEnv& env) {
  for (const FormatCase& fc : Formats()) {
    for (int64_t tokens : Sizes(env.rng, {1, 3, 13, 40})) {
      const int64_t rows = 1 + env.rng() % 70,
                    cols = IsFourBit(fc.format) ? 32 * (1 + env.rng() % 5) : 1 + env.rng() % 150;
      TestWeights t;
      matmul_testing::FillRandom(t, fc, rows, cols, env.rng);
      const std::vector<float> x = Normal(env.rng, tokens * cols);
      DeviceWeights dw(env.backend, t);
      DeviceArray<float> dx(env.backend, x), dy(env.backend, std::vector<float>(tokens * rows));
      env.backend.MatMul(dx.get(), tokens, dw.w, dy.get(), env.backend_ws);
      std::vector<float> want(tokens * rows);
      env.oracle.MatMul(x.data(), tokens, t.w, want.data(), env.oracle_ws);
      ExpectProductsNear(dy.Download(), want, matmul_testing::AbsProducts(x, tokens, t.w),
                         "MatMul " + fc.name + " tokens " + std::to_string(tokens));
    }
  }
}

void GroupedMatMulCase(CaseEnv& env) {
  for (const FormatCase& fc : {Formats()[1], Formats()[3], Formats()[4]}) {
    const int64_t groups = 5, rows = 24, cols = 64;
    std::vector<TestWeights> weights(groups);
    std::vector<WeightMatrix> host_w;
    std::vector<std::unique_ptr<DeviceWeights>> dev;
    std::vector<WeightMatrix> dev_w;
    for (auto& t : weights) {
      matmul_testing::FillRandom(t, fc, rows, cols, env.rng);
      host_w.push_back(t.w);
      dev.push_back(std::make_unique<DeviceWeights>(env.backend, t));
      dev_w.push_back(dev.back()->w);
    }
    const std::vector<int64_t> offsets = {0, 3, 3, 10, 11, 17};  // an empty group included
    const std::vector<float> x = Normal(env.rng, 17 * cols);
    DeviceArray<float> dx(env.backend, x), dy(env.backend, std::vector<float>(17 * rows));
    env.backend.GroupedMatMul({groups, offsets.data(), dev_w.data(), dx.get(), dy.get()},
                              env.backend_ws);
    std::vector<float> want(17 * rows);
    env.oracle.GroupedMatMul({groups, offsets.data(), host_w.data(), x.data(), want.data()},
                             env.oracle_ws);
    const std::vector<float> got = dy.Download();
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t n = offsets[g + 1] - offsets[g];
      const std::vector<float> xg(x.begin() + offsets[g] * cols, x.begin() + offsets[g + 1] * cols);
      ExpectProductsNear(
          std::vector<float>(got.begin() + offsets[g] * rows, got.begin() + offsets[g + 1] * rows),
          std::vector<float>(want.begin() + offsets[g] * rows,
                             want.begin() + offsets[g + 1] * rows),
          matmul_testing::AbsProducts(xg, n, host_w[g]),
          "GroupedMatMul " + fc.name + " group " + std::to_string(g));
    }
  }
}

// Expert matrices of one shape in both backends' memories.
struct ExpertSet {
  ExpertSet(CaseEnv& env, const FormatCase& fc, int64_t groups, int64_t rows, int64_t cols) {
    for (int64_t g = 0; g < groups; ++g) {
      TestWeights& t = weights.emplace_back();
      matmul_testing::FillRandom(t, fc, rows, cols, env.rng);
      host.push_back(t.w);
      dev.push_back(std::make_unique<DeviceWeights>(env.backend, t));
      device.push_back(dev.back()->w);
    }
  }
  std::deque<TestWeights> weights;  // TestWeights does not move
  std::vector<WeightMatrix> host, device;
  std::vector<std::unique_ptr<DeviceWeights>> dev;
};

// GroupedMlp (y written over x, as the MoE block calls it) against (a) this backend's own unfused
// ops, which the cases above test one by one (CPU: bit-identical), and (b) the oracle, MXFP8 off,
// within a bound carried through the GLU: each hidden value h = act(g) u' is off by at most
// e = 1e-5 (1.2 A_g |u| + |act(g)| A_u) (A: sum |x w| of its product; |act'| <= 1.1 for SiLU and
// SiTU, |u'| <= |u|), so each output by 1e-5 sum |h D| + sum |e D| + 1e-6.
void GroupedMlpCase(CaseEnv& env) {
  const int64_t groups = 5, width = 64, inter = 96, total = 17;
  const std::vector<int64_t> offsets = {0, 3, 3, 10, 11, 17};  // an empty group included
  for (const FormatCase& fc : {Formats()[1], Formats()[3], Formats()[4]}) {
    ExpertSet gate(env, fc, groups, inter, width), up(env, fc, groups, inter, width),
        down(env, fc, groups, width, inter);
    for (ActivationKind kind : {ActivationKind::kSilu, ActivationKind::kSitu}) {
      for (bool mxfp8 : {false, true}) {
        const std::string what = "GroupedMlp " + fc.name + " kind " +
                                 std::to_string(static_cast<int>(kind)) + " mxfp8 " +
                                 std::to_string(mxfp8);
        const ActivationShape act{kind, 0, 4.0f, 25.0f};
        const std::vector<float> x = Normal(env.rng, total * width, 0.5f);
        DeviceArray<float> dx(env.backend, x), dg(env.backend, std::vector<float>(total * inter)),
            du(env.backend, std::vector<float>(total * inter)),
            dy(env.backend, std::vector<float>(total * width));
        env.backend.GroupedMatMul({groups, offsets.data(), gate.device.data(), dx.get(), dg.get()},
                                  env.backend_ws);
        env.backend.GroupedMatMul({groups, offsets.data(), up.device.data(), dx.get(), du.get()},
                                  env.backend_ws);
        env.backend.Glu({kind, total * inter, 4.0f, 25.0f}, dg.get(), du.get(), dg.get());
        if (mxfp8) env.backend.QuantizeMxfp8(dg.get(), total * inter);
        env.backend.GroupedMatMul({groups, offsets.data(), down.device.data(), dg.get(), dy.get()},
                                  env.backend_ws);
        env.backend.GroupedMlp({groups, offsets.data(), gate.device.data(), up.device.data(),
                                down.device.data(), act, mxfp8, dx.get(), dx.get()},
                               env.backend_ws);
        const std::vector<float> got = dx.Download();
        ExpectNear(got, dy.Download(), {1e-6, 1e-5}, what + " vs unfused");
        if (mxfp8) continue;
        std::vector<float> g(total * inter), u(total * inter), a(total * inter), h(total * inter);
        std::vector<float> want(total * width);
        env.oracle.GroupedMatMul({groups, offsets.data(), gate.host.data(), x.data(), g.data()},
                                 env.oracle_ws);
        env.oracle.GroupedMatMul({groups, offsets.data(), up.host.data(), x.data(), u.data()},
                                 env.oracle_ws);
        env.oracle.Activate({kind, total * inter, 4.0f, 25.0f}, g.data(), a.data());
        env.oracle.Glu({kind, total * inter, 4.0f, 25.0f}, g.data(), u.data(), h.data());
        env.oracle.GroupedMlp({groups, offsets.data(), gate.host.data(), up.host.data(),
                               down.host.data(), act, false, x.data(), want.data()},
                              env.oracle_ws);
        for (int64_t k = 0; k < groups; ++k) {
          const int64_t b = offsets[k], n = offsets[k + 1] - b;
          auto part = [](const std::vector<float>& v, int64_t from, int64_t count) {
            return std::vector<float>(v.begin() + from, v.begin() + from + count);
          };
          const std::vector<float> xk = part(x, b * width, n * width);
          const std::vector<double> ag = matmul_testing::AbsProducts(xk, n, gate.host[k]);
          const std::vector<double> au = matmul_testing::AbsProducts(xk, n, up.host[k]);
          std::vector<float> e(n * inter), hk = part(h, b * inter, n * inter);
          for (int64_t j = 0; j < n * inter; ++j) {
            const int64_t i = b * inter + j;
            e[j] = static_cast<float>(1e-5 *
                                      (1.2 * ag[j] * std::fabs(u[i]) + std::fabs(a[i]) * au[j]));
          }
          const std::vector<double> ah = matmul_testing::AbsProducts(hk, n, down.host[k]);
          const std::vector<double> ae = matmul_testing::AbsProducts(e, n, down.host[k]);
          const std::vector<float> gk = part(got, b * width, n * width);
          const std::vector<float> wk = part(want, b * width, n * width);
          for (int64_t i = 0; i < n * width; ++i) {
            const double tolerance = 1e-5 * ah[i] + ae[i] + 1e-6;
            ASSERT_LE(std::fabs(double{gk[i]} - wk[i]), tolerance)
                << what << " group " << k << " element " << i << " vs oracle";
          }
        }
      }
    }
  }
}

void GatherAndQuantizeCase(CaseEnv& env) {
  for (const FormatCase& fc : Formats()) {
    TestWeights t;
    matmul_testing::FillRandom(t, fc, 37, 64, env.rng);
    const std::vector<int32_t> ids = {5, 0, 36, 5, 17};
    DeviceWeights dw(env.backend, t);
    DeviceArray<float> out(env.backend, std::vector<float>(ids.size() * 64));
    env.backend.GatherRows(dw.w, ids.data(), 5, out.get());
    std::vector<float> want(ids.size() * 64);
    env.oracle.GatherRows(t.w, ids.data(), 5, want.data());
    ExpectEqual(out.Download(), want, "GatherRows " + fc.name);
  }
  std::vector<float> x = Normal(env.rng, 32 * 9, 3.0f);
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block
  x[100] = 1e-30f;                                  // a subnormal-scale neighbour
  DeviceArray<float> dx(env.backend, x);
  env.backend.QuantizeMxfp8(dx.get(), 32 * 9);
  env.oracle.QuantizeMxfp8(x.data(), 32 * 9);
  ExpectEqual(dx.Download(), x, "QuantizeMxfp8");
}

void NormCase(CaseEnv& env) {
  for (int64_t dim : Sizes(env.rng, {1, 7, 16, 33, 129})) {
    const int64_t rows = 5, stride = dim + 3;
    const std::vector<float> x = Normal(env.rng, rows * stride, 2.0f), w = Normal(env.rng, dim);
    const std::vector<float> gate = Normal(env.rng, rows * stride);
    const RmsNormShape strided{rows, dim, 1e-5f, stride, dim};
    for (bool weighted : {true, false}) {
      DeviceArray<float> dx(env.backend, x), dw(env.backend, w);
      DeviceArray<float> out(env.backend, std::vector<float>(rows * dim));
      env.backend.RmsNorm(strided, dx.get(), weighted ? dw.get() : nullptr, out.get());
      std::vector<float> want(rows * dim);
      env.oracle.RmsNorm(strided, x.data(), weighted ? w.data() : nullptr, want.data());
      ExpectNear(out.Download(), want, {1e-6, 1e-5}, "RmsNorm dim " + std::to_string(dim));
    }
    const RmsNormShape same{rows, dim, 1e-6f, stride, stride};
    DeviceArray<float> dx(env.backend, x), dw(env.backend, w), dg(env.backend, gate);
    env.backend.GatedRmsNorm(same, dx.get(), dw.get(), dg.get(), dx.get());  // in place
    std::vector<float> want = x;
    env.oracle.GatedRmsNorm(same, want.data(), w.data(), gate.data(), want.data());
    ExpectNear(dx.Download(), want, {1e-6, 1e-5}, "GatedRmsNorm dim " + std::to_string(dim));
    std::vector<float> v = Normal(env.rng, rows * dim);
    DeviceArray<float> dv(env.backend, v);
    env.backend.L2Normalize({rows, dim, 0.125f}, dv.get());
    env.oracle.L2Normalize({rows, dim, 0.125f}, v.data());
    ExpectNear(dv.Download(), v, {1e-7, 1e-5}, "L2Normalize dim " + std::to_string(dim));
    std::vector<float> a = Normal(env.rng, rows * dim), b = Normal(env.rng, rows * dim);
    DeviceArray<float> da(env.backend, a), db(env.backend, b);
    env.backend.Add(da.get(), db.get(), rows * dim);
    env.oracle.Add(a.data(), b.data(), rows * dim);
    ExpectNear(da.Download(), a, {0.0, 1e-7}, "Add");
  }
}

void ActivationCase(CaseEnv& env) {
  for (ActivationKind kind : {ActivationKind::kSilu, ActivationKind::kSitu, ActivationKind::kGelu,
                              ActivationKind::kSigmoid}) {
    for (int64_t n : Sizes(env.rng, {1, 15, 33, 1000})) {
      const ActivationShape shape{kind, n, 4.0f, 25.0f};
      const std::vector<float> g = Normal(env.rng, n, 6.0f), u = Normal(env.rng, n, 20.0f);
      const std::string what =
          "kind " + std::to_string(static_cast<int>(kind)) + " n " + std::to_string(n);
      DeviceArray<float> dg(env.backend, g), du(env.backend, u);
      DeviceArray<float> out(env.backend, std::vector<float>(n));
      std::vector<float> want(n);
      env.backend.Activate(shape, dg.get(), out.get());
      env.oracle.Activate(shape, g.data(), want.data());
      ExpectNear(out.Download(), want, {1e-7, 1e-5}, "Activate " + what);
      env.backend.Glu(shape, dg.get(), du.get(), out.get());
      env.oracle.Glu(shape, g.data(), u.data(), want.data());
      ExpectNear(out.Download(), want, {1e-6, 1e-5}, "Glu " + what);
      std::vector<float> x = u;
      DeviceArray<float> dx(env.backend, x);
      env.backend.SigmoidGate(dx.get(), dg.get(), n);
      env.oracle.SigmoidGate(x.data(), g.data(), n);
      ExpectNear(dx.Download(), x, {1e-6, 1e-5}, "SigmoidGate " + what);
    }
  }
}

void RopeCase(CaseEnv& env) {
  for (int64_t pairs : {1, 4, 13, 32}) {
    std::vector<double> inv_freq(pairs);
    for (int64_t i = 0; i < pairs; ++i) inv_freq[i] = std::pow(10000.0, -2.0 * i / (2 * pairs));
    const int64_t rows = 6, heads = 3, head_stride = 2 * pairs + 5,
                  row_stride = heads * head_stride;
    const std::vector<int64_t> positions = {0, 1, 17, 4095, 70000, 3};
    std::vector<float> x = Normal(env.rng, rows * row_stride);
    DeviceArray<float> dx(env.backend, x);
    DeviceArray<int64_t> dp(env.backend, positions);
    const RopeTable table{inv_freq.data(), pairs, 1.2};
    env.backend.ApplyRope({table, rows, heads, row_stride, head_stride, dp.get(), dx.get()});
    env.oracle.ApplyRope({table, rows, heads, row_stride, head_stride, positions.data(), x.data()});
    ExpectNear(dx.Download(), x, {1e-6, 1e-5}, "ApplyRope pairs " + std::to_string(pairs));
  }
}

void SamplingCase(CaseEnv& env) {
  for (int64_t vocab : Sizes(env.rng, {1, 63, 64, 65, 1000})) {
    const VocabRows shape{3, vocab};
    std::vector<float> logits = Normal(env.rng, 3 * vocab, 5.0f);
    std::vector<uint64_t> mask(3 * shape.mask_words());
    for (uint64_t& word : mask) word = (uint64_t{env.rng()} << 32) | env.rng();
    mask[0] |= 1;  // each row keeps at least one token
    mask[shape.mask_words()] |= 1;
    mask[2 * shape.mask_words()] |= 1;
    const std::string what = " vocab " + std::to_string(vocab);
    DeviceArray<float> dl(env.backend, logits);
    DeviceArray<uint64_t> dm(env.backend, mask);
    env.backend.ApplyTokenBitmask(shape, dm.get(), dl.get());
    env.oracle.ApplyTokenBitmask(shape, mask.data(), logits.data());
    ExpectEqual(dl.Download(), logits, "ApplyTokenBitmask" + what);
    DeviceArray<float> max(env.backend, std::vector<float>(3));
    DeviceArray<int32_t> arg(env.backend, std::vector<int32_t>(3));
    std::vector<float> want_max(3);
    std::vector<int32_t> want_arg(3);
    env.backend.MaxArgmax(shape, dl.get(), max.get(), arg.get());
    env.oracle.MaxArgmax(shape, logits.data(), want_max.data(), want_arg.data());
    ExpectEqual(max.Download(), want_max, "MaxArgmax max" + what);
    ExpectEqual(arg.Download(), want_arg, "MaxArgmax argmax" + what);
    DeviceArray<float> out(env.backend, std::vector<float>(3 * vocab));
    std::vector<float> want(3 * vocab);
    env.backend.ScaledExp(shape, dl.get(), max.get(), 1.7f, out.get());
    env.oracle.ScaledExp(shape, logits.data(), want_max.data(), 1.7f, want.data());
    // The exponent is formed in float32: its rounding (|x| 2^-24, |x| <= 87) is relative error.
    ExpectNear(out.Download(), want, {1e-30, 2e-5}, "ScaledExp" + what);
    env.backend.Softmax(shape, dl.get(), out.get());
    env.oracle.Softmax(shape, logits.data(), want.data());
    ExpectNear(out.Download(), want, {1e-30, 2e-5}, "Softmax" + what);
    env.backend.LogSoftmax(shape, dl.get(), dl.get());  // in place
    env.oracle.LogSoftmax(shape, logits.data(), want.data());
    ExpectNear(dl.Download(), want, {1e-5, 1e-6}, "LogSoftmax" + what);
  }
}

}  // namespace

std::vector<OpCase> AllOpCases() {
  return {{"Memory", MemoryCase},
          {"MatMul", MatMulCase},
          {"GroupedMatMul", GroupedMatMulCase},
          {"GroupedMlp", GroupedMlpCase},
          {"GatherRowsAndQuantizeMxfp8", GatherAndQuantizeCase},
          {"Norms", NormCase},
          {"Activations", ActivationCase},
          {"Rope", RopeCase},
          {"Sampling", SamplingCase}};
}

}  // namespace k3::kernels::conformance
