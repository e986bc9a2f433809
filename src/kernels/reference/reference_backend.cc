// Memory, matrix products, embedding rows and MXFP8 quantisation by definition.
#include "kernels/reference/reference_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/matmul_detail.h"
#include "tensor/numeric.h"

namespace k3::kernels::reference {

double SigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double SiluRef(double x) { return x * SigmoidRef(x); }

void ReferenceBackend::MatMul(const float* x, int64_t rows, const WeightMatrix& w, float* y,
                              Workspace&) {
  MatMulReference(x, rows, w, y);
}

void ReferenceBackend::GroupedMatMul(const GroupedMatMulArgs& a, Workspace&) {
  for (int64_t g = 0; g < a.num_groups; ++g) {
    const WeightMatrix& w = a.weights[g];
    const int64_t begin = a.group_offsets[g];
    MatMulReference(a.x + begin * w.cols, a.group_offsets[g + 1] - begin, w, a.y + begin * w.rows);
  }
}

// The definition: the unfused sequence of this backend's own ops, group by group.
void ReferenceBackend::GroupedMlp(const GroupedMlpArgs& a, Workspace&) {
  for (int64_t g = 0; g < a.num_groups; ++g) {
    const int64_t begin = a.group_offsets[g], rows = a.group_offsets[g + 1] - begin;
    const WeightMatrix &gate_w = a.gate[g], &down_w = a.down[g];
    const int64_t inter = gate_w.rows;
    std::vector<float> gate(rows * inter), up(rows * inter);
    MatMulReference(a.x + begin * gate_w.cols, rows, gate_w, gate.data());
    MatMulReference(a.x + begin * gate_w.cols, rows, a.up[g], up.data());
    ActivationShape act = a.act;
    act.n = rows * inter;
    Glu(act, gate.data(), up.data(), gate.data());
    if (a.mxfp8_hidden) QuantizeMxfp8(gate.data(), rows * inter);
    MatMulReference(gate.data(), rows, down_w, a.y + begin * down_w.rows);
  }
}

void ReferenceBackend::GatherRows(const WeightMatrix& table, const int32_t* ids, int64_t count,
                                  float* out) {
  for (int64_t i = 0; i < count; ++i) {
    detail::DequantizeByDefinition(table, ids[i], out + i * table.cols);
  }
}

// OCP MX v1.0: per block of 32, scale 2^(floor(log2 amax) - 8) (E4M3's largest power of two is
// 2^8), elements to E4M3 (nearest even, saturating), then back.
void ReferenceBackend::QuantizeMxfp8(float* x, int64_t n) {
  for (int64_t b = 0; b < n; b += 32) {
    float* block = x + b;
    double amax = 0.0;
    bool finite = true;
    for (int i = 0; i < 32; ++i) {
      finite = finite && std::isfinite(block[i]);
      amax = std::max(amax, std::fabs(static_cast<double>(block[i])));
    }
    if (!finite) {
      std::fill(block, block + 32, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    if (amax == 0.0) continue;
    const int exponent = std::clamp(static_cast<int>(std::floor(std::log2(amax))) - 8, -127, 127);
    const double scale = std::ldexp(1.0, exponent);
    for (int i = 0; i < 32; ++i) {
      const uint8_t code = tensor::FloatToE4M3(static_cast<float>(block[i] / scale));
      block[i] = static_cast<float>(tensor::E4M3ToFloat(code) * scale);
    }
  }
}

}  // namespace k3::kernels::reference
