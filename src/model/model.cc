#include "model/model.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/matmul.h"
#include "model/ffn.h"
#include "model/kda_layer.h"
#include "model/mla_layer.h"
#include "model/ops.h"

namespace k3::model {
namespace {

// Attention Residuals (spec §5.2): softmax over depth of RMS-normalised sources scored by the
// site's folded vector, mixing the raw sources. sources[i] points at [rows, d] activations.
void AttnResMix(const std::vector<const float*>& sources, const std::vector<float>& score,
                int64_t rows, int64_t d, float eps, float* out) {
  const size_t n = sources.size();
  std::vector<float> p(n);
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const float* v = sources[i] + r * d;
      double sum_sq = 0.0, dot = 0.0;
      for (int64_t k = 0; k < d; ++k) {
        sum_sq += static_cast<double>(v[k]) * v[k];
        dot += static_cast<double>(v[k]) * score[k];
      }
      p[i] = static_cast<float>(dot / std::sqrt(sum_sq / static_cast<double>(d) + eps));
    }
    Softmax(p.data(), static_cast<int64_t>(n));
    float* o = out + r * d;
    for (int64_t k = 0; k < d; ++k) {
      float acc = 0.0f;
      for (size_t i = 0; i < n; ++i) acc += p[i] * sources[i][r * d + k];
      o[k] = acc;
    }
  }
}

}  // namespace

Model::Model(weights::Checkpoint checkpoint, ModelConfig config, ModelWeights weights,
             base::ThreadPool* pool)
    : checkpoint_(std::move(checkpoint)),
      config_(std::move(config)),
      weights_(std::move(weights)),
      pool_(pool) {
  if (config_.mla.rope.enabled) rope_.emplace(config_.mla.rope, config_.mla.qk_rope_dim);
}

base::Result<std::unique_ptr<Model>> Model::Load(const std::filesystem::path& dir,
                                                 base::ThreadPool* pool) {
  K3_ASSIGN_OR_RETURN(weights::Checkpoint checkpoint, weights::Checkpoint::Open(dir));
  K3_ASSIGN_OR_RETURN(ModelConfig config, ParseModelConfig(checkpoint.config_json()));
  K3_ASSIGN_OR_RETURN(ModelWeights w, LoadModelWeights(checkpoint, config));
  return std::unique_ptr<Model>(
      new Model(std::move(checkpoint), std::move(config), std::move(w), pool));
}

base::Status Model::Validate(std::span<const SequenceInput> batch, const KdaStatePool& states,
                             const MlaCache& cache) const {
  for (size_t i = 0; i < batch.size(); ++i) {
    const SequenceInput& s = batch[i];
    const std::string which = "sequence " + std::to_string(i) + ": ";
    if (s.tokens.empty()) return base::InvalidArgument(which + "no tokens");
    for (int32_t id : s.tokens) {
      if (id < 0 || id >= config_.vocab) {
        return base::OutOfRange(which + "token id " + std::to_string(id) + " outside [0, " +
                                std::to_string(config_.vocab) + ")");
      }
    }
    if (s.start_position < 0) return base::InvalidArgument(which + "negative start position");
    if (s.num_logit_rows < 0 || s.num_logit_rows > static_cast<int64_t>(s.tokens.size())) {
      return base::InvalidArgument(which + "num_logit_rows " + std::to_string(s.num_logit_rows) +
                                   " outside [0, " + std::to_string(s.tokens.size()) + "]");
    }
    if (config_.num_kda_layers() > 0 && (s.state_slot < 0 || s.state_slot >= states.num_slots())) {
      return base::InvalidArgument(which + "state slot " + std::to_string(s.state_slot) +
                                   " out of range");
    }
    if (config_.num_mla_layers() > 0) {
      const int64_t len = s.start_position + static_cast<int64_t>(s.tokens.size());
      const int64_t needed = (len + cache.page_size() - 1) / cache.page_size();
      if (static_cast<int64_t>(s.pages.size()) < needed) {
        return base::InvalidArgument(which + "needs " + std::to_string(needed) +
                                     " cache pages, got " + std::to_string(s.pages.size()));
      }
      for (int32_t page : s.pages) {
        if (page < 0 || page >= cache.num_pages()) {
          return base::InvalidArgument(which + "cache page " + std::to_string(page) +
                                       " out of range");
        }
      }
    }
  }
  return base::Status::Ok();
}

base::Status Model::Forward(std::span<const SequenceInput> batch, const ForwardOptions& options,
                            KdaStatePool& states, MlaCache& cache, ForwardResult* result) const {
  K3_RETURN_IF_ERROR(Validate(batch, states, cache));
  const ModelConfig& c = config_;
  const int64_t d = c.hidden;
  std::vector<SequenceRows> seqs;
  int64_t rows = 0;
  for (const SequenceInput& s : batch) {
    seqs.push_back(
        {rows, static_cast<int64_t>(s.tokens.size()), s.start_position, s.state_slot, s.pages});
    rows += static_cast<int64_t>(s.tokens.size());
  }
  // stream: the running residual (plain models) or the current block's partial sum (AttnRes).
  std::vector<float> stream(rows * d), h(rows * d), normed(rows * d), sub(rows * d);
  for (size_t i = 0, row = 0; i < batch.size(); ++i) {
    for (int32_t id : batch[i].tokens)
      kernels::DequantizeRow(weights_.embed, id, &stream[d * row++]);
  }
  std::vector<float> gaps(rows, std::numeric_limits<float>::infinity());
  const bool attn_res = c.attn_res_block_size > 0;
  std::vector<std::vector<float>> bank;  // AttnRes block snapshots, [rows, d] each
  auto mix = [&](const std::vector<float>& score, float* out) {
    std::vector<const float*> sources;
    for (const auto& snapshot : bank) sources.push_back(snapshot.data());
    sources.push_back(stream.data());
    AttnResMix(sources, score, rows, d, c.rms_eps, out);
  };
  for (int layer = 0; layer < c.num_layers; ++layer) {
    const LayerWeights& lw = weights_.layers[layer];
    bool block_start = false;
    if (attn_res) {
      if (bank.empty()) {
        h = stream;
      } else {
        mix(lw.attn_res_score, h.data());
      }
      if (layer % c.attn_res_block_size == 0) {
        bank.push_back(stream);
        block_start = true;
      }
    } else {
      h = stream;
    }
    RmsNormRows(h.data(), lw.input_norm.data(), rows, d, c.rms_eps, normed.data());
    if (lw.kind == LayerKind::kKda) {
      KdaForward(c, lw.kda, lw.kind_index, normed.data(), seqs, options, states, pool_, sub.data());
    } else {
      MlaForward(c, lw.mla, lw.kind_index, rope_ ? &*rope_ : nullptr, normed.data(), seqs, options,
                 cache, pool_, sub.data());
    }
    if (block_start) {
      stream = sub;  // a new block's partial sum starts from this sublayer's output
    } else {
      AddInPlace(stream.data(), sub.data(), rows * d);
    }
    if (attn_res) {
      mix(lw.mlp_res_score, h.data());
    } else {
      h = stream;
    }
    RmsNormRows(h.data(), lw.post_norm.data(), rows, d, c.rms_eps, normed.data());
    if (lw.moe) {
      MoeForward(c, lw.moe_weights, normed.data(), rows, options, pool_, sub.data(), gaps.data());
    } else {
      MlpForward(c, lw.dense, normed.data(), rows, false, pool_, sub.data());
    }
    AddInPlace(stream.data(), sub.data(), rows * d);
  }
  if (attn_res) {
    mix(weights_.output_res_score, h.data());
  } else {
    h = stream;
  }
  // Only the rows that need logits go through the final norm and lm_head.
  std::vector<float> selected;
  result->router_min_gap.clear();
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t first = seqs[i].row_begin + seqs[i].rows - batch[i].num_logit_rows;
    for (int64_t r = first; r < seqs[i].row_begin + seqs[i].rows; ++r) {
      selected.insert(selected.end(), h.begin() + r * d, h.begin() + (r + 1) * d);
      result->router_min_gap.push_back(gaps[r]);
    }
  }
  result->rows = static_cast<int64_t>(selected.size()) / d;
  RmsNormRows(selected.data(), weights_.final_norm.data(), result->rows, d, c.rms_eps,
              selected.data());
  result->logits.resize(result->rows * c.vocab);
  kernels::MatMul(selected.data(), result->rows, weights_.lm_head, result->logits.data(), pool_);
  return base::Status::Ok();
}

}  // namespace k3::model
