#include "kernels/workspace.h"

#include <algorithm>

namespace k3::kernels {

Workspace::Workspace(size_t num_slots, base::BlockAllocator* allocator) : arena_(allocator) {
  slots_.reserve(std::max<size_t>(num_slots, 1));
  for (size_t i = 0; i < std::max<size_t>(num_slots, 1); ++i) slots_.emplace_back(allocator);
}

void Workspace::Reset() {
  arena_.Reset();
  size_t slot_peak = 0;
  for (const base::Arena& slot : slots_) slot_peak = std::max(slot_peak, slot.peak_bytes());
  for (base::Arena& slot : slots_) slot.Reset(slot_peak);
}

int64_t Workspace::blocks_allocated() const {
  int64_t total = arena_.blocks_allocated();
  for (const base::Arena& slot : slots_) total += slot.blocks_allocated();
  return total;
}

}  // namespace k3::kernels
