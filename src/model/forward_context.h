// ForwardContext: everything a block of the forward pass reads for one step, built by
// Model::Forward and passed by const reference to every block (no globals). Activations are
// allocated from `ws` (backend memory, released when the next step resets the workspace);
// per-block temporaries are scoped with base::ArenaMark so a step's peak stays small.
#pragma once

#include <cstdint>
#include <span>

#include "base/arena.h"
#include "kernels/backend.h"
#include "kernels/op_args.h"
#include "kernels/workspace.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/moe_block.h"
#include "model/rope.h"
#include "model/state.h"

namespace k3::model {

struct ForwardContext {
  const ModelConfig& config;
  const ForwardOptions& options;
  kernels::Backend& backend;
  kernels::Workspace& ws;  // backend memory
  base::Arena& host;       // host memory for per-step bookkeeping
  std::span<const SequenceRows> seqs;
  int64_t rows = 0;                                // all new tokens of the batch
  std::span<const kernels::PagedSequence> paged;   // seqs as the MLA kernels see them
  std::span<const kernels::MlaSequence> mla_seqs;  // with each one's attention form
  const int32_t* token_ids = nullptr;              // host [rows]
  const int64_t* positions = nullptr;              // [rows]: position of each row
  KdaStatePool& states;
  MlaCache& cache;
  const Rope* rope = nullptr;            // null: NoPE
  std::span<const ExpertTable> experts;  // [layers]
  float* router_gaps = nullptr;          // [rows], lowered by every MoE layer

  // `count` uninitialised T of backend scratch, live until the enclosing ArenaMark (or the step)
  // ends.
  template <typename T>
  T* Scratch(int64_t count) const {
    return ws.arena().Allocate<T>(static_cast<size_t>(count));
  }
};

}  // namespace k3::model
