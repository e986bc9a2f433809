// Executor: runs StepPlans (engine/step_plan.h). It owns whatever holds the model's per-sequence
// memory (latent-cache blocks, recurrent state slots) and samples on the side of the logits, so
// the scheduler never touches either. LocalExecutor (local_executor.h) runs an in-process
// ModelRunner on this machine's CPU; a multi-process or device executor implements the same two
// calls.
//
// A step is Forward(plan) then Sample(plan, result), on one thread (the engine's). Forward may
// return before the forward pass is complete; the scheduler fills plan.masks in between, so
// grammar masks are computed while the model runs. Execute() is both, for callers without masks
// to overlap.
#pragma once

#include "base/status.h"
#include "engine/model_runner.h"
#include "engine/step_plan.h"

namespace k3::engine {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual RunnerInfo info() const = 0;
  // Called once before any step. Blocks [0, num_blocks) of block_size tokens; slots
  // [0, num_state_slots).
  virtual base::Status AllocateCache(int num_blocks, int block_size, int num_state_slots) = 0;
  // Steps 1-4 of the plan's order of effects. An error fails the whole step (Sample then reports
  // it and samples nothing).
  virtual base::Status Forward(const StepPlan& plan) = 0;
  // Step 5. `result` is overwritten; result->status carries Forward's error, if any.
  virtual void Sample(const StepPlan& plan, StepResult* result) = 0;

  void Execute(const StepPlan& plan, StepResult* result) {
    const base::Status status = Forward(plan);
    Sample(plan, result);
    if (!status.ok()) result->status = status;
  }
};

}  // namespace k3::engine
