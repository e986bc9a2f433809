// Block hashes: the one definition shared by the engine's prefix cache, its KV events and the
// router (docs/engine.md, "Block hashing").
//
// - A block is `block_size` consecutive token ids; only full blocks are hashed (a trailing partial
//   block never is).
// - local hash  = XXH3-64 with seed 1337 over the block's token ids as little-endian u32 bytes
//   (Dynamo's `compute_block_hash_for_seq`, so a Dynamo-style router computes the same numbers).
// - chained hash: chain[0] = local[0]; chain[i] = XXH3-64 seed 1337 over the 16 bytes
//   (chain[i-1] as little-endian u64, local[i] as little-endian u64). chain[i] therefore names the
//   whole prefix of i+1 blocks, and equal chains mean equal prefixes (up to 64-bit collisions).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace k3::cache {

using BlockHash = uint64_t;
inline constexpr uint64_t kBlockHashSeed = 1337;

BlockHash LocalBlockHash(std::span<const int32_t> block_tokens);
BlockHash ChainBlockHash(BlockHash parent_chain, BlockHash local);

struct BlockHashes {
  std::vector<BlockHash> local;
  std::vector<BlockHash> chain;
};
// Hashes of every full block of `tokens`. Cost: one pass over the tokens.
BlockHashes HashBlocks(std::span<const int32_t> tokens, int block_size);

}  // namespace k3::cache
