#include "engine/k3_model_runner.h"

#include <algorithm>
#include <cstring>

namespace k3::engine {

K3ModelRunner::K3ModelRunner(std::shared_ptr<const model::Model> model,
                             model::ForwardOptions options)
    : model_(std::move(model)), options_(options), workspace_(model_->MakeWorkspace()) {}

RunnerInfo K3ModelRunner::info() const {
  const model::ModelConfig& c = model_->config();
  RunnerInfo info;
  info.vocab_size = c.vocab;
  info.eos_token_id = static_cast<int32_t>(c.eos_id);
  info.max_position = c.max_position;
  info.has_recurrent_state = c.num_kda_layers() > 0;
  // One stored [c_kv | k_pe] entry per MLA layer, in the cache's dtype (model/state.h): bf16
  // halves fp32's bytes, so twice the blocks fit the same --cache-memory.
  info.cache_bytes_per_token = model::MlaCache::BytesPerToken(c, options_.cache_dtype);
  info.state_bytes_per_slot =
      info.has_recurrent_state ? model::KdaStatePool(c, 0).floats_per_slot() * 4 : 0;
  return info;
}

base::Status K3ModelRunner::AllocateCache(int num_blocks, int block_size, int num_state_slots) {
  if (num_blocks <= 0 || block_size <= 0 || num_state_slots <= 0) {
    return base::InvalidArgument("cache sizes must be positive");
  }
  // On the model's backend: the memory its kernels read and write.
  states_.emplace(model_->config(), num_state_slots, &model_->backend());
  cache_.emplace(model_->config(), num_blocks, block_size, &model_->backend(),
                 options_.cache_dtype);
  return base::Status::Ok();
}

base::Status K3ModelRunner::Forward(std::span<const RunnerSequence> batch,
                                    std::vector<float>* logits) {
  if (!states_) return base::Internal("Forward before AllocateCache");
  inputs_.clear();
  for (const RunnerSequence& s : batch) {
    inputs_.push_back({s.tokens, s.start_position, s.state_slot, s.blocks, s.num_logit_rows});
  }
  K3_RETURN_IF_ERROR(model_->Forward(inputs_, options_, {*states_, *cache_, workspace_}, &result_));
  // num_logit_rows rows per sequence. The two buffers trade places: no copy, no allocation once
  // both have grown to the step's size.
  std::swap(*logits, result_.logits);
  return base::Status::Ok();
}

void K3ModelRunner::CopyState(int from_slot, int to_slot) { states_->Copy(from_slot, to_slot); }

}  // namespace k3::engine
