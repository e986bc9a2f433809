// What an in-process executor (local_executor.h) needs from a model: a batched forward over token
// ids with explicit state slots and cache blocks, and a state copy for checkpoints. The K3 runner
// (k3_model_runner.h) wraps k3::model; scheduler tests use a fake that checks every access.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace k3::engine {

struct RunnerSequence {
  std::span<const int32_t> tokens;  // new tokens, at least one
  int64_t start_position = 0;       // tokens already in the slot's state and the blocks; 0 resets
  int state_slot = 0;
  std::span<const int32_t> blocks;  // cache blocks covering [0, start_position + tokens.size())
  int64_t num_logit_rows = 0;       // logits of the last num_logit_rows new tokens are wanted
};

struct RunnerInfo {
  int64_t vocab_size = 0;
  int32_t eos_token_id = -1;
  int64_t max_position = 0;           // longest sequence the model supports
  bool has_recurrent_state = false;   // KDA layers: prefix hits need state checkpoints
  int64_t cache_bytes_per_token = 0;  // latent cache bytes per token (all MLA layers)
  int64_t state_bytes_per_slot = 0;   // KDA conv + recurrent state of one sequence (all layers)
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual RunnerInfo info() const = 0;
  // Called once before any Forward. Slots are [0, num_state_slots).
  virtual base::Status AllocateCache(int num_blocks, int block_size, int num_state_slots) = 0;
  // `logits` gets num_logit_rows rows of vocab_size floats per sequence, in batch order.
  virtual base::Status Forward(std::span<const RunnerSequence> batch,
                               std::vector<float>* logits) = 0;
  virtual void CopyState(int from_slot, int to_slot) = 0;
};

}  // namespace k3::engine
