#include "cache/block_hash.h"

#include <xxhash.h>

#include <bit>
#include <cstring>

namespace k3::cache {
namespace {

static_assert(std::endian::native == std::endian::little,
              "block hashes are defined over little-endian bytes; add byte swaps for big-endian");

}  // namespace

BlockHash LocalBlockHash(std::span<const int32_t> block_tokens) {
  return XXH3_64bits_withSeed(block_tokens.data(), block_tokens.size_bytes(), kBlockHashSeed);
}

BlockHash ChainBlockHash(BlockHash parent_chain, BlockHash local) {
  unsigned char bytes[16];
  std::memcpy(bytes, &parent_chain, 8);
  std::memcpy(bytes + 8, &local, 8);
  return XXH3_64bits_withSeed(bytes, sizeof bytes, kBlockHashSeed);
}

BlockHashes HashBlocks(std::span<const int32_t> tokens, int block_size) {
  BlockHashes out;
  const size_t blocks = block_size > 0 ? tokens.size() / static_cast<size_t>(block_size) : 0;
  out.local.reserve(blocks);
  out.chain.reserve(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const BlockHash local = LocalBlockHash(tokens.subspan(b * block_size, block_size));
    out.local.push_back(local);
    out.chain.push_back(b == 0 ? local : ChainBlockHash(out.chain.back(), local));
  }
  return out;
}

}  // namespace k3::cache
