#include "model/weight_quant.h"

#include <cstring>
#include <string>
#include <vector>

namespace k3::model {
namespace {

using kernels::WeightFormat;
using Bytes = std::span<const std::byte>;

Bytes View(const void* data, int64_t bytes) {
  if (data == nullptr || bytes <= 0) return {};
  return {static_cast<const std::byte*>(data), static_cast<size_t>(bytes)};
}

// Each stored part of `m` (elements, then its scales) that is set.
void AppendBytes(const WeightMatrix& m, std::vector<Bytes>* out) {
  if (m.data == nullptr) return;
  const int64_t elements = m.format == WeightFormat::kBf16Panels
                               ? kernels::Bf16PanelsElements(m.rows, m.cols) * 2
                               : m.rows * kernels::StoredRowBytes(m);
  const int64_t groups = m.rows * ((m.cols + 31) / 32);
  const int64_t tiles = ((m.rows + m.block - 1) / m.block) * ((m.cols + m.block - 1) / m.block);
  for (Bytes part : {View(m.data, elements), View(m.mx_scales, groups),
                     View(m.group_scales, groups * 2), View(m.block_scales, tiles * 4)}) {
    if (!part.empty()) out->push_back(part);
  }
}

// Converts the matrices ConvertDenseWeights visits into memory `w` owns.
class Requantizer {
 public:
  Requantizer(ModelWeights* w, base::ThreadPool* pool, WeightQuant to)
      : w_(w), pool_(pool), to_(to) {}

  void Matrix(WeightMatrix* m) {
    if (to_ == WeightQuant::kBf16Panels) return Panels(m);
    const bool dense = m->format == WeightFormat::kBF16 || m->format == WeightFormat::kF16 ||
                       m->format == WeightFormat::kF32 || m->format == WeightFormat::kFp8Block;
    if (!dense || m->rows == 0 || m->cols == 0 || m->cols % 32 != 0) return;
    auto* data = Zeroed<uint8_t>(static_cast<size_t>(m->rows * m->cols));
    auto* scales = Zeroed<uint16_t>(static_cast<size_t>(m->rows * m->cols / 32));
    *m = kernels::QuantizeInt8Block(*m, data, scales, pool_);
    ++changed_;
  }
  void Mlp(MlpWeights* mlp) {
    for (WeightMatrix* m : {&mlp->gate, &mlp->up, &mlp->down}) Matrix(m);
  }
  int changed() const { return changed_; }

 private:
  void Panels(WeightMatrix* m) {
    if (m->format != WeightFormat::kBF16 || m->rows == 0 || m->cols % 2 != 0) return;
    auto* data =
        Zeroed<uint16_t>(static_cast<size_t>(kernels::Bf16PanelsElements(m->rows, m->cols)));
    *m = kernels::PackBf16Panels(*m, data, pool_);
    ++changed_;
  }

  template <typename T>
  T* Zeroed(size_t count) {
    T* data = w_->converted.Allocate<T>(count);
    std::memset(data, 0, count * sizeof(T));
    return data;
  }

  ModelWeights* w_;
  base::ThreadPool* pool_;
  WeightQuant to_;
  int changed_ = 0;
};

// Applies q to every matrix weight_quant.h lists; calls layer_done after each layer.
int ConvertDenseWeights(ModelWeights* w, Requantizer q, const std::function<void()>& layer_done) {
  for (LayerWeights& layer : w->layers) {
    KdaWeights& kda = layer.kda;
    for (WeightMatrix* m : {&kda.q, &kda.k, &kda.v, &kda.f_a, &kda.f_b, &kda.beta, &kda.g, &kda.g_a,
                            &kda.g_b, &kda.o}) {
      q.Matrix(m);
    }
    MlaWeights& mla = layer.mla;
    for (WeightMatrix* m : {&mla.q_a, &mla.q_b, &mla.q, &mla.kv_a, &mla.g, &mla.o}) q.Matrix(m);
    q.Mlp(&layer.dense);
    MoeWeights& moe = layer.moe_weights;
    if (moe.has_shared) q.Mlp(&moe.shared);
    q.Matrix(&moe.latent_down);
    q.Matrix(&moe.latent_up);
    // Routed experts stored at 8 bits or more convert too (int8: K2's FP8 blocks and
    // Kimi-Linear's BF16, as llama.cpp's Q8_0 runs them; panels: BF16 ones); 4-bit experts keep
    // their own format.
    for (MlpWeights& expert : moe.experts) q.Mlp(&expert);
    if (layer_done) layer_done();
  }
  q.Matrix(&w->lm_head);
  if (layer_done) layer_done();
  return q.changed();
}

}  // namespace

std::vector<Bytes> MatrixBytes(const ModelWeights& w) {
  std::vector<Bytes> out;
  auto mlp = [&](const MlpWeights& m) {
    for (const WeightMatrix* x : {&m.gate, &m.up, &m.down}) AppendBytes(*x, &out);
  };
  for (const WeightMatrix* m : {&w.embed, &w.lm_head}) AppendBytes(*m, &out);
  for (const LayerWeights& layer : w.layers) {
    const KdaWeights& kda = layer.kda;
    for (const WeightMatrix* m : {&kda.q, &kda.k, &kda.v, &kda.f_a, &kda.f_b, &kda.beta, &kda.g,
                                  &kda.g_a, &kda.g_b, &kda.o}) {
      AppendBytes(*m, &out);
    }
    const MlaWeights& mla = layer.mla;
    for (const WeightMatrix* m : {&mla.q_a, &mla.q_b, &mla.q, &mla.kv_a, &mla.kv_b, &mla.g, &mla.o})
      AppendBytes(*m, &out);
    mlp(layer.dense);
    const MoeWeights& moe = layer.moe_weights;
    for (const WeightMatrix* m : {&moe.router, &moe.latent_down, &moe.latent_up})
      AppendBytes(*m, &out);
    mlp(moe.shared);
    for (const MlpWeights& expert : moe.experts) mlp(expert);
  }
  return out;
}

base::Result<WeightQuant> ParseWeightQuant(std::string_view name) {
  for (WeightQuant q :
       {WeightQuant::kAuto, WeightQuant::kNone, WeightQuant::kInt8, WeightQuant::kBf16Panels}) {
    if (name == WeightQuantName(q)) return q;
  }
  return base::InvalidArgument("--weight-quant must be auto, none, int8 or bf16-panels, not '" +
                               std::string(name) + "'");
}

std::string_view WeightQuantName(WeightQuant quant) {
  switch (quant) {
    case WeightQuant::kNone:
      return "none";
    case WeightQuant::kInt8:
      return "int8";
    case WeightQuant::kBf16Panels:
      return "bf16-panels";
    case WeightQuant::kAuto:
      return "auto";
  }
  return "?";
}

WeightQuant ResolveWeightQuant(WeightQuant quant) {
  if (quant != WeightQuant::kAuto) return quant;
  const bool panels =
      kernels::Bf16PanelsRunFast() && kernels::GetGemmPrecision() != kernels::GemmPrecision::kBf16;
  return panels ? WeightQuant::kBf16Panels : WeightQuant::kNone;
}

std::string DescribeAutoWeightQuant() {
  const WeightQuant chosen = ResolveWeightQuant(WeightQuant::kAuto);
  const char* why = chosen != WeightQuant::kNone ? "AVX-512 panel tiles"
                    : kernels::Bf16PanelsRunFast()
                        ? "--gemm-precision bf16 reads the row-major matrices"
                        : "no AVX-512 for the panel tiles";
  return "--weight-quant auto: " + std::string(WeightQuantName(chosen)) + " (" + why + ")";
}

int QuantizeDenseWeights(ModelWeights* w, base::ThreadPool* pool,
                         const std::function<void()>& layer_done) {
  return ConvertDenseWeights(w, Requantizer(w, pool, WeightQuant::kInt8), layer_done);
}

int PackDenseWeightsIntoPanels(ModelWeights* w, base::ThreadPool* pool,
                               const std::function<void()>& layer_done) {
  return ConvertDenseWeights(w, Requantizer(w, pool, WeightQuant::kBf16Panels), layer_done);
}

}  // namespace k3::model
