// Workspace: the scratch memory one caller of a Backend uses, reused from step to step. It holds
// an arena for the calling thread and one per worker slot of the backend (ThreadPool slots), all
// over the backend's memory. Ops take scratch from it and give it back before they return (an
// ArenaMark per op, per sequence or per task), so only the caller's own allocations live until
// Reset(). After Reset() every slot arena is at least as large as the largest peak any slot saw,
// so a step of the same shape allocates nothing, whichever thread ran which task.
// Thread-compatible: one Workspace per caller thread; ops hand slot(i) to the task in slot i.
#pragma once

#include <cstddef>
#include <vector>

#include "base/arena.h"

namespace k3::kernels {

class Workspace {
 public:
  // num_slots: the backend's parallelism (Backend::num_slots()).
  explicit Workspace(size_t num_slots = 1, base::BlockAllocator* allocator = nullptr);

  base::Arena& arena() { return arena_; }
  base::Arena& slot(size_t index) { return slots_[index]; }
  size_t num_slots() const { return slots_.size(); }

  // Frees everything allocated since the last Reset; keeps (and merges) the memory.
  void Reset();
  // Blocks obtained from the allocator by all arenas: constant once the workspace is warm.
  int64_t blocks_allocated() const;

 private:
  base::Arena arena_;
  std::vector<base::Arena> slots_;
};

}  // namespace k3::kernels
