// The engine's runner for Kimi-family checkpoints: k3::model's batched forward with the latent
// cache blocks as MLA pages and the state slots as KDA state slots.
#pragma once

#include <memory>
#include <optional>

#include "engine/model_runner.h"
#include "model/batch.h"
#include "model/model.h"

namespace k3::engine {

class K3ModelRunner : public ModelRunner {
 public:
  // The model may be shared by several runners (each has its own cache and states).
  K3ModelRunner(std::shared_ptr<const model::Model> model, model::ForwardOptions options = {});

  RunnerInfo info() const override;
  base::Status AllocateCache(int num_blocks, int block_size, int num_state_slots) override;
  base::Status Forward(std::span<const RunnerSequence> batch, std::vector<float>* logits) override;
  void CopyState(int from_slot, int to_slot) override;

  const model::Model& model() const { return *model_; }

 private:
  std::shared_ptr<const model::Model> model_;
  model::ForwardOptions options_;
  model::Workspace workspace_;  // the forward pass's activations, reused every step
  std::optional<model::KdaStatePool> states_;
  std::optional<model::MlaCache> cache_;
  std::vector<model::SequenceInput> inputs_;
  model::ForwardResult result_;
};

}  // namespace k3::engine
