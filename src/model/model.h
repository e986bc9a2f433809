// A loaded Kimi-family text model and its batched forward pass. The model knows nothing of
// requests: the caller owns the KDA state slots and MLA cache pages, and hands each sequence's new
// tokens, its start position, its slot and its pages. Sampling is not here; Forward returns logits.
//
// Threads: a Model is immutable after Load and may be shared by several callers (runners); each
// caller owns its KdaStatePool, MlaCache and Workspace and must not share them between
// concurrent Forward calls.
//
// Steady state: Forward(batch, options, {states, cache, workspace}, &result) with a Workspace and
// a ForwardResult kept from step to step allocates no heap memory once one step of the same batch
// shape (sequence count and rows per sequence) has run; the activations live in the workspace's
// arenas (model_alloc_test.cc counts every allocation to prove it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/arena.h"
#include "base/result.h"
#include "base/thread_pool.h"
#include "kernels/backend.h"
#include "kernels/workspace.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/model_weights.h"
#include "model/moe_block.h"
#include "model/rope.h"
#include "model/state.h"
#include "model/weight_quant.h"
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

// The per-step scratch of one caller of Model::Forward, kept between steps: activations in the
// backend's memory (an arena per worker slot, kernels::Workspace) and batch bookkeeping in host
// memory. Make it once per runner (Model::MakeWorkspace); reuse it for every step. Movable, not
// thread-safe.
class Workspace {
 public:
  explicit Workspace(kernels::Backend& backend);

  // Blocks the arenas have obtained so far; constant once warm (for tests and diagnostics).
  int64_t blocks_allocated() const {
    return kernels_.blocks_allocated() + host_.blocks_allocated();
  }

 private:
  friend class Model;
  kernels::Workspace kernels_;
  base::Arena host_;
};

// What a caller owns and Forward reads and writes: KDA states, MLA cache pages, scratch.
struct ForwardMemory {
  KdaStatePool& states;
  MlaCache& cache;
  Workspace& workspace;
};

// How Model::Load places and transforms the weights.
struct LoadOptions {
  LoadOptions(WeightQuant q = WeightQuant::kNone) : quant(q) {}  // NOLINT: implicit on purpose
  // kInt8 re-quantises the dense projections at load, kBf16Panels repacks them (weight_quant.h).
  WeightQuant quant;
  // kHuge: the shards are read into 2 MiB-page memory (the decode kernels stream them faster,
  // mapped_file.h), falling back to kFile where the kernel has no transparent huge pages. kFile:
  // mapped (instant start, page cache shared between processes).
  weights::MappedFile::Pages pages = weights::MappedFile::Pages::kHuge;
};

class Model {
 public:
  // Opens an HF checkpoint folder, parses its config and binds every tensor in place (no copy
  // beyond the page placement of `options.pages`). The forward pass runs on a CpuBackend over
  // `pool` (nullptr: the calling thread only).
  static base::Result<std::unique_ptr<Model>> Load(const std::filesystem::path& dir,
                                                   base::ThreadPool* pool = nullptr,
                                                   LoadOptions options = {});
  // The same on a backend of the caller's choice (docs/adding-a-backend.md); `quant_pool` runs the
  // load-time passes over the weights (FP8 NaN-code scan, --weight-quant).
  static base::Result<std::unique_ptr<Model>> Load(const std::filesystem::path& dir,
                                                   std::unique_ptr<kernels::Backend> backend,
                                                   LoadOptions options = {},
                                                   base::ThreadPool* quant_pool = nullptr);
  ~Model();

  const ModelConfig& config() const { return config_; }
  const weights::Checkpoint& checkpoint() const { return checkpoint_; }
  const ModelWeights& weights() const { return weights_; }
  // The compute backend the forward pass runs on (also the one to allocate states and caches on).
  kernels::Backend& backend() const { return *backend_; }
  Workspace MakeWorkspace() const { return Workspace(*backend_); }

  // Validates the batch (token ids, slots, pages, logit rows) and runs every layer: embedding,
  // the family's decoder stack, then the final norm and lm_head for the rows asked for.
  // INVALID_ARGUMENT (or OUT_OF_RANGE for a token id) on bad input; nothing is written then.
  base::Status Forward(std::span<const SequenceInput> batch, const ForwardOptions& options,
                       const ForwardMemory& memory, ForwardResult* result) const;

  // The same with a workspace made for this call alone (allocates every call; for tools and
  // tests that run a few steps).
  base::Status Forward(std::span<const SequenceInput> batch, const ForwardOptions& options,
                       KdaStatePool& states, MlaCache& cache, ForwardResult* result) const;

 private:
  Model(weights::Checkpoint checkpoint, ModelConfig config, ModelWeights weights,
        std::unique_ptr<kernels::Backend> backend);
  base::Status Validate(std::span<const SequenceInput> batch, const KdaStatePool& states,
                        const MlaCache& cache) const;

  weights::Checkpoint checkpoint_;
  ModelConfig config_;
  ModelWeights weights_;
  std::vector<ExpertTable> experts_;  // [layers]: routed-expert matrices as grouped-op tables
  std::optional<Rope> rope_;
  std::unique_ptr<kernels::Backend> backend_;
};

}  // namespace k3::model
