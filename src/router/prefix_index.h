// PrefixIndex: which worker holds which cached blocks, keyed by chained block hashes
// (cache/block_hash.h: a chained hash names a whole prefix), kept from the workers' KV events.
//
// A hybrid model (KDA layers) can resume only where its recurrent state was saved, so with
// `checkpoints_required` a worker's usable match is cut down to its deepest block that also has
// a KDA checkpoint there; attention-only models use every matched block.
//
// Workers are ids 0..63 (a bit each). Not thread-safe: the router applies events and routes on
// one thread. Cost of Match: one hash lookup per matched block, stopping at the first block no
// worker still matching holds.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "cache/block_hash.h"

namespace k3::router {

using cache::BlockHash;

class PrefixIndex {
 public:
  static constexpr int kMaxWorkers = 64;

  explicit PrefixIndex(bool checkpoints_required) : checkpoints_required_(checkpoints_required) {}

  void Store(int worker, std::span<const BlockHash> blocks);
  void Remove(int worker, std::span<const BlockHash> blocks);
  void StoreCheckpoint(int worker, BlockHash block);
  void RemoveCheckpoint(int worker, BlockHash block);
  // Forgets everything of one worker (it restarted, died, or lost events). O(index size).
  void ClearWorker(int worker);

  // usable[w] (resized to kMaxWorkers) = how many leading blocks of `chain` worker w can reuse.
  void Match(std::span<const BlockHash> chain, std::vector<int64_t>* usable) const;

  bool checkpoints_required() const { return checkpoints_required_; }
  size_t size() const { return blocks_.size(); }  // distinct blocks held by some worker
  int64_t blocks_of(int worker) const { return counts_[static_cast<size_t>(worker)]; }

 private:
  struct Holders {
    uint64_t workers = 0;
    uint64_t checkpoints = 0;
  };
  bool checkpoints_required_;
  std::unordered_map<BlockHash, Holders> blocks_;
  int64_t counts_[kMaxWorkers] = {};
};

}  // namespace k3::router
