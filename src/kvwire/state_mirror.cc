#include "kvwire/state_mirror.h"

#include <unordered_set>

namespace k3::kvwire {

using cache::BlockHash;
using cache::KvEventKind;
using cache::SequencedKvEvent;

void StateMirror::Apply(const SequencedKvEvent& e) {
  const cache::KvEvent& event = e.event;
  const auto& hashes = event.block_hashes;
  switch (event.kind) {
    case KvEventKind::kBlockStored: {
      // Chained hashes, parent first: block i's parent is block i-1, and the event's position is
      // the end of the last block.
      const int64_t count = static_cast<int64_t>(hashes.size());
      for (int64_t block_idx = 0; block_idx < count; ++block_idx) {
        Block& block = blocks_[hashes[size_t(block_idx)]];
        block.parent =
            block_idx == 0 ? event.parent_hash : std::optional(hashes[size_t(block_idx - 1)]);
        block.position = event.position - (count - 1 - block_idx) * int64_t{event.block_size};
        block.block_size = event.block_size;
      }
      break;
    }
    case KvEventKind::kBlockRemoved:
      for (BlockHash hash : hashes) blocks_.erase(hash);
      break;
    case KvEventKind::kAllCleared:
      Clear();
      break;
    case KvEventKind::kCheckpointStored:
      if (!hashes.empty()) checkpoints_[hashes[0]] = {event.position, event.block_size};
      break;
    case KvEventKind::kCheckpointRemoved:
      if (!hashes.empty()) checkpoints_.erase(hashes[0]);
      break;
  }
  sequence_ = e.sequence;
}

void StateMirror::Clear() {
  blocks_.clear();
  checkpoints_.clear();
}

std::vector<SequencedKvEvent> StateMirror::Snapshot() const {
  std::vector<SequencedKvEvent> out;
  out.reserve(blocks_.size() + checkpoints_.size());
  auto emit = [&out](BlockHash hash, const Block& block) {
    SequencedKvEvent e;
    e.event.kind = KvEventKind::kBlockStored;
    e.event.block_hashes = {hash};
    e.event.parent_hash = block.parent;
    e.event.position = block.position;
    e.event.block_size = block.block_size;
    out.push_back(std::move(e));
  };
  // Roots are blocks whose parent is not stored; a depth-first walk from them puts every parent
  // before its children.
  std::unordered_multimap<BlockHash, BlockHash> children;
  std::vector<BlockHash> stack;
  for (const auto& [hash, block] : blocks_) {
    if (block.parent && blocks_.count(*block.parent)) {
      children.emplace(*block.parent, hash);
    } else {
      stack.push_back(hash);
    }
  }
  std::unordered_set<BlockHash> emitted;
  while (!stack.empty()) {
    BlockHash hash = stack.back();
    stack.pop_back();
    if (!emitted.insert(hash).second) continue;
    emit(hash, blocks_.at(hash));
    auto [begin, end] = children.equal_range(hash);
    for (auto it = begin; it != end; ++it) stack.push_back(it->second);
  }
  // Only a parent cycle (impossible with real chained hashes) is unreachable from a root.
  if (emitted.size() != blocks_.size()) {
    for (const auto& [hash, block] : blocks_) {
      if (!emitted.count(hash)) emit(hash, block);
    }
  }
  for (const auto& [hash, checkpoint] : checkpoints_) {
    SequencedKvEvent e;
    e.event.kind = KvEventKind::kCheckpointStored;
    e.event.block_hashes = {hash};
    e.event.position = checkpoint.position;
    e.event.block_size = checkpoint.block_size;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace k3::kvwire
