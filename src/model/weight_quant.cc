#include "model/weight_quant.h"

#include <cstring>
#include <string>
#include <vector>

namespace k3::model {
namespace {

using kernels::WeightFormat;

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

// Applies q to every matrix weight_quant.h lists.
int ConvertDenseWeights(ModelWeights* w, Requantizer& q) {
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
  }
  q.Matrix(&w->lm_head);
  return q.changed();
}

}  // namespace

base::Result<WeightQuant> ParseWeightQuant(std::string_view name) {
  if (name == "none") return WeightQuant::kNone;
  if (name == "int8") return WeightQuant::kInt8;
  if (name == "bf16-panels") return WeightQuant::kBf16Panels;
  return base::InvalidArgument("--weight-quant must be none, int8 or bf16-panels, not '" +
                               std::string(name) + "'");
}

int QuantizeDenseWeights(ModelWeights* w, base::ThreadPool* pool) {
  Requantizer q(w, pool, WeightQuant::kInt8);
  return ConvertDenseWeights(w, q);
}

int PackDenseWeightsIntoPanels(ModelWeights* w, base::ThreadPool* pool) {
  Requantizer q(w, pool, WeightQuant::kBf16Panels);
  return ConvertDenseWeights(w, q);
}

}  // namespace k3::model
