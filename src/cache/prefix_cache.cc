#include "cache/prefix_cache.h"

#include <algorithm>

#include "base/check.h"

namespace k3::cache {

PrefixCache::PrefixCache(PrefixCacheConfig config, KvEventChannel* events)
    : config_(config), events_(events), nodes_(config.num_blocks) {
  K3_CHECK(config.block_size > 0 && config.num_blocks >= 0 && config.num_checkpoint_slots >= 0);
  // Hand out low ids first: pop_back from a descending list.
  for (int b = config.num_blocks - 1; b >= 0; --b) free_blocks_.push_back(b);
  for (int s = config.num_checkpoint_slots - 1; s >= 0; --s) {
    free_slots_.push_back(config.first_checkpoint_slot + s);
  }
}

int PrefixCache::AllocateBlock() {
  int block = -1;
  if (!free_blocks_.empty()) {
    block = free_blocks_.back();
    free_blocks_.pop_back();
  } else if (!evictable_.empty()) {
    block = evictable_.begin()->second;
    EvictBlock(block);
  } else {
    return -1;
  }
  Node& node = nodes_[block];
  K3_DCHECK(!node.cached && node.refs == 0);
  node = Node{};
  node.refs = 1;
  return block;
}

int PrefixCache::available_blocks() const {
  return static_cast<int>(free_blocks_.size()) + idle_cached_;
}

void PrefixCache::ReleaseBlock(int block) {
  Node& node = nodes_.at(block);
  K3_CHECK(node.refs > 0) << "block " << block << " released more often than referenced";
  node.last_use = ++clock_;
  if (--node.refs > 0) return;
  if (node.cached) {
    ++idle_cached_;
    MaybeMakeEvictable(block);
  } else {
    free_blocks_.push_back(block);
  }
}

void PrefixCache::MaybeMakeEvictable(int block) {
  const Node& node = nodes_[block];
  if (node.cached && node.refs == 0 && node.cached_children == 0) {
    evictable_.insert({node.last_use, block});
  }
}

std::unordered_map<BlockHash, int>& PrefixCache::ChildrenOf(int parent) {
  return parent < 0 ? root_children_ : children_[parent];
}

const std::unordered_map<BlockHash, int>* PrefixCache::FindChildren(int parent) const {
  if (parent < 0) return &root_children_;
  auto it = children_.find(parent);
  return it == children_.end() ? nullptr : &it->second;
}

void PrefixCache::EvictBlock(int block) {
  Node& node = nodes_[block];
  K3_DCHECK(node.cached && node.refs == 0 && node.cached_children == 0);
  evictable_.erase({node.last_use, block});
  if (node.checkpoint >= 0) DropCheckpoint(block);
  ChildrenOf(node.parent).erase(node.local);
  children_.erase(block);
  by_chain_.erase(node.chain);
  node.cached = false;
  --idle_cached_;
  ++evicted_blocks_;
  Publish(KvEventKind::kBlockRemoved, node, {});
  if (node.parent >= 0) {
    --nodes_[node.parent].cached_children;
    MaybeMakeEvictable(node.parent);
  }
}

PrefixMatch PrefixCache::Lookup(const BlockHashes& hashes, int64_t max_tokens,
                                bool need_state) const {
  PrefixMatch match;
  int parent = -1;
  int usable = 0;  // blocks up to the deepest checkpoint
  for (size_t i = 0; i < hashes.local.size(); ++i) {
    if (static_cast<int64_t>(i + 1) * config_.block_size > max_tokens) break;
    const auto* children = FindChildren(parent);
    if (children == nullptr) break;
    auto it = children->find(hashes.local[i]);
    if (it == children->end() || nodes_[it->second].chain != hashes.chain[i]) break;
    parent = it->second;
    match.blocks.push_back(parent);
    if (!need_state || nodes_[parent].checkpoint >= 0) {
      usable = static_cast<int>(match.blocks.size());
      match.checkpoint_slot = nodes_[parent].checkpoint;
    }
  }
  match.kv_tokens = static_cast<int64_t>(match.blocks.size()) * config_.block_size;
  match.blocks.resize(usable);
  match.tokens = static_cast<int64_t>(usable) * config_.block_size;
  if (!need_state) match.checkpoint_slot = -1;
  return match;
}

void PrefixCache::Acquire(const PrefixMatch& match) {
  const uint64_t now = ++clock_;
  for (int block : match.blocks) {
    Node& node = nodes_.at(block);
    K3_CHECK(node.cached) << "acquiring uncached block " << block;
    if (node.refs == 0) {
      evictable_.erase({node.last_use, block});
      --idle_cached_;
    }
    ++node.refs;
    node.last_use = now;
  }
  if (match.checkpoint_slot >= 0 && !match.blocks.empty()) {
    Node& last = nodes_[match.blocks.back()];
    checkpoint_lru_.erase({last.checkpoint_use, match.blocks.back()});
    last.checkpoint_use = now;
    checkpoint_lru_.insert({now, match.blocks.back()});
  }
}

bool PrefixCache::Commit(int block, BlockHash parent_chain, BlockHash local, BlockHash chain,
                         std::span<const int32_t> tokens, int64_t end_position) {
  Node& node = nodes_.at(block);
  K3_CHECK(node.refs > 0 && !node.cached) << "commit of block " << block;
  if (by_chain_.count(chain)) return false;
  int parent = -1;
  if (end_position > config_.block_size) {
    auto it = by_chain_.find(parent_chain);
    if (it == by_chain_.end()) return false;
    parent = it->second;
  }
  node.cached = true;
  node.parent = parent;
  node.local = local;
  node.chain = chain;
  node.end_position = end_position;
  node.last_use = ++clock_;
  ChildrenOf(parent)[local] = block;
  by_chain_[chain] = block;
  if (parent >= 0) {
    Node& p = nodes_[parent];
    if (p.cached_children++ == 0 && p.refs == 0) evictable_.erase({p.last_use, parent});
  }
  Publish(KvEventKind::kBlockStored, node, tokens);
  return true;
}

bool PrefixCache::HasCheckpoint(BlockHash chain) const {
  auto it = by_chain_.find(chain);
  return it != by_chain_.end() && nodes_[it->second].checkpoint >= 0;
}

int PrefixCache::AllocateCheckpointSlot() {
  if (free_slots_.empty()) {
    if (checkpoint_lru_.empty()) return -1;
    DropCheckpoint(checkpoint_lru_.begin()->second);
  }
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

void PrefixCache::FreeCheckpointSlot(int slot) {
  K3_CHECK(slot >= config_.first_checkpoint_slot &&
           slot < config_.first_checkpoint_slot + config_.num_checkpoint_slots)
      << "checkpoint slot " << slot;
  free_slots_.push_back(slot);
}

bool PrefixCache::AttachCheckpoint(BlockHash chain, int slot) {
  auto it = by_chain_.find(chain);
  if (it == by_chain_.end() || nodes_[it->second].checkpoint >= 0) {
    FreeCheckpointSlot(slot);
    return false;
  }
  Node& node = nodes_[it->second];
  node.checkpoint = slot;
  node.checkpoint_use = ++clock_;
  checkpoint_lru_.insert({node.checkpoint_use, it->second});
  Publish(KvEventKind::kCheckpointStored, node, {});
  return true;
}

void PrefixCache::DropCheckpoint(int block) {
  Node& node = nodes_[block];
  checkpoint_lru_.erase({node.checkpoint_use, block});
  FreeCheckpointSlot(node.checkpoint);
  node.checkpoint = -1;
  ++evicted_checkpoints_;
  Publish(KvEventKind::kCheckpointRemoved, node, {});
}

void PrefixCache::Publish(KvEventKind kind, const Node& node, std::span<const int32_t> tokens) {
  if (events_ == nullptr) return;
  KvEvent event;
  event.kind = kind;
  event.block_hashes = {node.chain};
  if (kind == KvEventKind::kBlockStored && node.parent >= 0) {
    event.parent_hash = nodes_[node.parent].chain;
  }
  event.token_ids.assign(tokens.begin(), tokens.end());
  event.block_size = config_.block_size;
  event.position = node.end_position;
  events_->Publish(std::move(event));
}

PrefixCacheStats PrefixCache::stats() const {
  PrefixCacheStats s;
  // Every block is free, idle-cached or referenced (header invariant), so this is O(1): engines
  // read it after every step.
  s.free_blocks = static_cast<int>(free_blocks_.size());
  s.idle_cached_blocks = idle_cached_;
  s.referenced_blocks = config_.num_blocks - s.free_blocks - s.idle_cached_blocks;
  s.checkpoints = static_cast<int>(checkpoint_lru_.size());
  s.evicted_blocks = evicted_blocks_;
  s.evicted_checkpoints = evicted_checkpoints_;
  return s;
}

}  // namespace k3::cache
