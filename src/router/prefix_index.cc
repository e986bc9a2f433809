#include "router/prefix_index.h"

#include "base/check.h"

namespace k3::router {
namespace {

uint64_t Bit(int worker) {
  K3_CHECK(worker >= 0 && worker < PrefixIndex::kMaxWorkers) << "worker id " << worker;
  return uint64_t{1} << worker;
}

}  // namespace

void PrefixIndex::Store(int worker, std::span<const BlockHash> blocks) {
  const uint64_t bit = Bit(worker);
  for (BlockHash h : blocks) {
    Holders& e = blocks_[h];
    if (!(e.workers & bit)) ++counts_[worker];
    e.workers |= bit;
  }
}

void PrefixIndex::Remove(int worker, std::span<const BlockHash> blocks) {
  const uint64_t bit = Bit(worker);
  for (BlockHash h : blocks) {
    auto it = blocks_.find(h);
    if (it == blocks_.end() || !(it->second.workers & bit)) continue;
    --counts_[worker];
    it->second.workers &= ~bit;
    it->second.checkpoints &= ~bit;  // a checkpoint needs its block
    if (it->second.workers == 0) blocks_.erase(it);
  }
}

void PrefixIndex::StoreCheckpoint(int worker, BlockHash block) {
  const uint64_t bit = Bit(worker);
  auto it = blocks_.find(block);
  if (it == blocks_.end() || !(it->second.workers & bit)) return;  // block gone already
  it->second.checkpoints |= bit;
}

void PrefixIndex::RemoveCheckpoint(int worker, BlockHash block) {
  const uint64_t bit = Bit(worker);
  auto it = blocks_.find(block);
  if (it != blocks_.end()) it->second.checkpoints &= ~bit;
}

void PrefixIndex::ClearWorker(int worker) {
  const uint64_t bit = Bit(worker);
  for (auto it = blocks_.begin(); it != blocks_.end();) {
    it->second.workers &= ~bit;
    it->second.checkpoints &= ~bit;
    it = it->second.workers == 0 ? blocks_.erase(it) : std::next(it);
  }
  counts_[worker] = 0;
}

// Walks the chain while some worker still holds every block so far. A worker leaving the
// matching set keeps the depth it reached (or, with checkpoints required, the depth of its
// deepest checkpoint on the way).
void PrefixIndex::Match(std::span<const BlockHash> chain, std::vector<int64_t>* usable) const {
  usable->assign(kMaxWorkers, 0);
  uint64_t active = ~uint64_t{0};
  size_t depth = 0;
  for (; depth < chain.size() && active != 0; ++depth) {
    auto it = blocks_.find(chain[depth]);
    const uint64_t holders = it == blocks_.end() ? 0 : it->second.workers;
    const uint64_t leaving = active & ~holders;
    active &= holders;
    if (!checkpoints_required_) {
      for (uint64_t m = leaving; m; m &= m - 1) (*usable)[__builtin_ctzll(m)] = int64_t(depth);
      continue;
    }
    const uint64_t checkpoints = it == blocks_.end() ? 0 : it->second.checkpoints;
    for (uint64_t m = active & checkpoints; m; m &= m - 1) {
      (*usable)[__builtin_ctzll(m)] = int64_t(depth) + 1;
    }
  }
  if (!checkpoints_required_) {
    for (uint64_t m = active; m; m &= m - 1) (*usable)[__builtin_ctzll(m)] = int64_t(depth);
  }
}

}  // namespace k3::router
