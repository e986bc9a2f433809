#include "cache/block_hash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <vector>

namespace k3::cache {
namespace {

// The definition in block_hash.h, spelled out with the xxHash library directly.
TEST(BlockHash, LocalHashIsXxh3Seed1337OverLittleEndianIds) {
  const std::vector<int32_t> ids = {1, 2, 163839, 0};
  unsigned char bytes[16];
  for (int i = 0; i < 4; ++i) {
    const uint32_t v = static_cast<uint32_t>(ids[i]);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<unsigned char>(v >> (8 * b));
  }
  EXPECT_EQ(LocalBlockHash(ids), XXH3_64bits_withSeed(bytes, 16, 1337));
}

TEST(BlockHash, ChainCoversTheWholePrefix) {
  std::vector<int32_t> a(48), b(48);
  for (int i = 0; i < 48; ++i) a[i] = b[i] = i;
  b[3] = 999;  // differs in block 0 only
  const BlockHashes ha = HashBlocks(a, 16), hb = HashBlocks(b, 16);
  ASSERT_EQ(ha.chain.size(), 3u);
  EXPECT_EQ(ha.chain[0], ha.local[0]);
  EXPECT_EQ(ha.local[1], hb.local[1]);  // same tokens in block 1...
  EXPECT_NE(ha.chain[1], hb.chain[1]);  // ...but a different prefix
  EXPECT_NE(ha.chain[2], hb.chain[2]);
  unsigned char pair[16];
  std::memcpy(pair, &ha.chain[0], 8);
  std::memcpy(pair + 8, &ha.local[1], 8);
  EXPECT_EQ(ha.chain[1], XXH3_64bits_withSeed(pair, 16, 1337));
}

TEST(BlockHash, PartialBlockIsNotHashed) {
  std::vector<int32_t> ids(40, 7);
  EXPECT_EQ(HashBlocks(ids, 16).chain.size(), 2u);
  EXPECT_EQ(HashBlocks(std::vector<int32_t>(15, 7), 16).chain.size(), 0u);
}

// Pinned values: changing the hash breaks routers and persisted indexes, so it must be deliberate.
TEST(BlockHash, PinnedReferenceVector) {
  std::vector<int32_t> ids(16);
  for (int i = 0; i < 16; ++i) ids[i] = i;
  const BlockHashes h = HashBlocks(ids, 16);
  EXPECT_EQ(h.local[0], 0xd47a8f41c833328aull);
  EXPECT_EQ(HashBlocks(std::vector<int32_t>(32, 7), 16).chain[1],
            ChainBlockHash(LocalBlockHash(std::vector<int32_t>(16, 7)),
                           LocalBlockHash(std::vector<int32_t>(16, 7))));
}

}  // namespace
}  // namespace k3::cache
