// LocalExecutor: runs step plans in this process. The forward pass goes to a ModelRunner (the K3
// runner over k3::model, or the scheduler tests' fake), whose cache and state slots it owns;
// sampling runs here, on the engine thread, right after the forward pass.
#pragma once

#include <memory>
#include <vector>

#include "engine/executor.h"
#include "engine/model_runner.h"
#include "engine/step_sampler.h"

namespace k3::engine {

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(std::unique_ptr<ModelRunner> runner);

  RunnerInfo info() const override { return info_; }
  base::Status AllocateCache(int num_blocks, int block_size, int num_state_slots) override;
  base::Status Forward(const StepPlan& plan) override;
  void Sample(const StepPlan& plan, StepResult* result) override;

  ModelRunner& runner() { return *runner_; }
  const StepSampler& sampler() const { return sampler_; }

 private:
  std::unique_ptr<ModelRunner> runner_;
  RunnerInfo info_;
  StepSampler sampler_;
  base::Status forward_status_;
  std::vector<RunnerSequence> batch_;  // reused: the plan's sequences as runner input
  std::vector<float> logits_;          // [logit rows, vocab] of the last Forward
  std::vector<int64_t> last_row_;      // per plan sequence: its last logit row, or -1
};

}  // namespace k3::engine
