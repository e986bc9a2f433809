// A loaded Kimi-family text model and its batched forward pass. The model knows nothing of
// requests: the caller owns the KDA state slots and MLA cache pages, and hands each sequence's new
// tokens, its start position, its slot and its pages. Sampling is not here; Forward returns logits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/result.h"
#include "base/thread_pool.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/model_weights.h"
#include "model/rope.h"
#include "model/state.h"
#include "weights/checkpoint.h"

namespace k3::model {

struct SequenceInput {
  std::span<const int32_t> tokens;  // new tokens (at least one)
  int64_t start_position = 0;       // tokens of this sequence already in its slot and pages
  int state_slot = 0;
  std::span<const int32_t> pages;  // MLA cache pages covering [0, start_position + tokens)
  // Logit rows wanted: those of the last num_logit_rows new tokens, in [0, tokens.size()]. Rows
  // not asked for skip the final norm and lm_head (a mid-prompt chunk asks for none).
  int64_t num_logit_rows = 1;
};

struct ForwardResult {
  std::vector<float> logits;          // [rows, vocab]: the logit rows asked for, in batch order
  std::vector<float> router_min_gap;  // [rows]: smallest top-k selection margin over MoE layers
  int64_t rows = 0;                   // logit rows
};

class Model {
 public:
  // Opens an HF checkpoint folder, parses its config and binds every tensor (mapped, not copied).
  static base::Result<std::unique_ptr<Model>> Load(const std::filesystem::path& dir,
                                                   base::ThreadPool* pool = nullptr);

  const ModelConfig& config() const { return config_; }
  const weights::Checkpoint& checkpoint() const { return checkpoint_; }
  const ModelWeights& weights() const { return weights_; }

  // Validates the batch (token ids, slots, pages) and runs every layer. INVALID_ARGUMENT on bad
  // input; nothing is written then.
  base::Status Forward(std::span<const SequenceInput> batch, const ForwardOptions& options,
                       KdaStatePool& states, MlaCache& cache, ForwardResult* result) const;

 private:
  Model(weights::Checkpoint checkpoint, ModelConfig config, ModelWeights weights,
        base::ThreadPool* pool);
  base::Status Validate(std::span<const SequenceInput> batch, const KdaStatePool& states,
                        const MlaCache& cache) const;

  weights::Checkpoint checkpoint_;
  ModelConfig config_;
  ModelWeights weights_;
  std::optional<Rope> rope_;
  base::ThreadPool* pool_;
};

}  // namespace k3::model
