#include "cache/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace k3::cache {
namespace {

constexpr int kBlock = 4;

std::vector<int32_t> Tokens(int n, int32_t first = 0) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

// Allocates and commits every full block of `tokens`; returns the blocks (still referenced).
std::vector<int> Store(PrefixCache& cache, const std::vector<int32_t>& tokens) {
  const BlockHashes h = HashBlocks(tokens, kBlock);
  std::vector<int> blocks;
  for (size_t i = 0; i < h.chain.size(); ++i) {
    const int b = cache.AllocateBlock();
    EXPECT_GE(b, 0);
    blocks.push_back(b);
    cache.Commit(b, i ? h.chain[i - 1] : 0, h.local[i], h.chain[i],
                 std::span(tokens).subspan(i * kBlock, kBlock), (i + 1) * kBlock);
  }
  return blocks;
}

void ReleaseAll(PrefixCache& cache, const std::vector<int>& blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) cache.ReleaseBlock(*it);
}

TEST(PrefixCache, AllocatesUntilFullThenReusesReleased) {
  PrefixCache cache({.num_blocks = 3, .block_size = kBlock}, nullptr);
  const int a = cache.AllocateBlock(), b = cache.AllocateBlock(), c = cache.AllocateBlock();
  EXPECT_EQ(cache.AllocateBlock(), -1);
  EXPECT_EQ(cache.available_blocks(), 0);
  cache.ReleaseBlock(b);
  EXPECT_EQ(cache.AllocateBlock(), b);
  for (int x : {a, b, c}) cache.ReleaseBlock(x);
  EXPECT_EQ(cache.stats().free_blocks, 3);
}

TEST(PrefixCache, LookupFindsLongestCommittedPrefixWithinLimit) {
  PrefixCache cache({.num_blocks = 8, .block_size = kBlock}, nullptr);
  const auto prompt = Tokens(10);  // 2 full blocks + 2 tokens
  auto blocks = Store(cache, prompt);
  ReleaseAll(cache, blocks);
  auto other = Tokens(12);  // shares 2 blocks, adds a third
  PrefixMatch m = cache.Lookup(HashBlocks(other, kBlock), 12, false);
  EXPECT_EQ(m.tokens, 8);
  EXPECT_EQ(m.blocks, blocks);
  EXPECT_EQ(cache.Lookup(HashBlocks(other, kBlock), 7, false).tokens, 4);  // limit
  other[5] = 99;                                                           // diverges in block 1
  EXPECT_EQ(cache.Lookup(HashBlocks(other, kBlock), 12, false).tokens, 4);
}

TEST(PrefixCache, HitIsCutBackToDeepestCheckpoint) {
  PrefixCache cache({.num_blocks = 8,
                     .block_size = kBlock,
                     .num_checkpoint_slots = 2,
                     .first_checkpoint_slot = 10},
                    nullptr);
  const auto prompt = Tokens(16);
  const BlockHashes h = HashBlocks(prompt, kBlock);
  auto blocks = Store(cache, prompt);
  EXPECT_EQ(cache.Lookup(h, 16, true).tokens, 0);  // KV without state is not a hit
  const int slot = cache.AllocateCheckpointSlot();
  EXPECT_GE(slot, 10);
  ASSERT_TRUE(cache.AttachCheckpoint(h.chain[1], slot));
  PrefixMatch m = cache.Lookup(h, 16, true);
  EXPECT_EQ(m.kv_tokens, 16);
  EXPECT_EQ(m.tokens, 8);
  EXPECT_EQ(m.checkpoint_slot, slot);
  EXPECT_EQ(m.blocks.size(), 2u);
  ReleaseAll(cache, blocks);
}

TEST(PrefixCache, EvictsLeastRecentlyUsedLeavesFirst) {
  KvEventChannel events;
  std::vector<KvEventKind> kinds;
  events.Subscribe([&](const SequencedKvEvent& e) { kinds.push_back(e.event.kind); });
  PrefixCache cache({.num_blocks = 4, .block_size = kBlock}, &events);
  const auto a = Tokens(8, 0), b = Tokens(8, 100);
  auto ba = Store(cache, a);
  ReleaseAll(cache, ba);
  auto bb = Store(cache, b);
  ReleaseAll(cache, bb);
  EXPECT_EQ(cache.available_blocks(), 4);
  // Two new blocks must come from `a` (older): its leaf first, then its root.
  const int x = cache.AllocateBlock();
  EXPECT_EQ(x, ba[1]);
  EXPECT_EQ(cache.Lookup(HashBlocks(a, kBlock), 8, false).tokens, 4);
  const int y = cache.AllocateBlock();
  EXPECT_EQ(y, ba[0]);
  EXPECT_EQ(cache.Lookup(HashBlocks(b, kBlock), 8, false).tokens, 8);  // untouched
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), KvEventKind::kBlockStored), 4);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), KvEventKind::kBlockRemoved), 2);
  EXPECT_EQ(events.last_sequence(), 6u);
  cache.ReleaseBlock(x);
  cache.ReleaseBlock(y);
}

TEST(PrefixCache, ReferencedBlocksAreNeverEvicted) {
  PrefixCache cache({.num_blocks = 2, .block_size = kBlock}, nullptr);
  const auto a = Tokens(8);
  auto blocks = Store(cache, a);  // still referenced
  EXPECT_EQ(cache.AllocateBlock(), -1);
  ReleaseAll(cache, blocks);
  PrefixMatch m = cache.Lookup(HashBlocks(a, kBlock), 8, false);
  cache.Acquire(m);  // a hit pins them again
  EXPECT_EQ(cache.AllocateBlock(), -1);
  ReleaseAll(cache, m.blocks);
  EXPECT_EQ(cache.available_blocks(), 2);
}

TEST(PrefixCache, CheckpointsEvictLruAndDieWithTheirBlock) {
  PrefixCache cache({.num_blocks = 4, .block_size = kBlock, .num_checkpoint_slots = 1}, nullptr);
  const auto a = Tokens(4, 0), b = Tokens(4, 50);
  auto ba = Store(cache, a), bb = Store(cache, b);
  const BlockHashes ha = HashBlocks(a, kBlock), hb = HashBlocks(b, kBlock);
  ASSERT_TRUE(cache.AttachCheckpoint(ha.chain[0], cache.AllocateCheckpointSlot()));
  const int slot = cache.AllocateCheckpointSlot();  // evicts a's checkpoint
  EXPECT_FALSE(cache.HasCheckpoint(ha.chain[0]));
  ASSERT_TRUE(cache.AttachCheckpoint(hb.chain[0], slot));
  const int spare = cache.AllocateCheckpointSlot();  // evicts b's checkpoint in turn
  EXPECT_FALSE(cache.HasCheckpoint(hb.chain[0]));
  EXPECT_FALSE(cache.AttachCheckpoint(/*not cached*/ 12345, spare));  // the slot is handed back
  ASSERT_TRUE(cache.AttachCheckpoint(hb.chain[0], cache.AllocateCheckpointSlot()));
  EXPECT_EQ(cache.stats().checkpoints, 1);
  ReleaseAll(cache, ba);
  ReleaseAll(cache, bb);
  // Fill the pool so b's block is evicted: its checkpoint goes with it.
  std::vector<int> taken;
  for (int i = 0; i < 4; ++i) taken.push_back(cache.AllocateBlock());
  EXPECT_EQ(cache.stats().checkpoints, 0);
  EXPECT_GE(cache.AllocateCheckpointSlot(), 0);  // slot came back
  for (int t : taken) cache.ReleaseBlock(t);
}

TEST(PrefixCache, DuplicatePrefixIsNotCommittedTwice) {
  PrefixCache cache({.num_blocks = 4, .block_size = kBlock}, nullptr);
  const auto a = Tokens(4);
  auto first = Store(cache, a);
  const BlockHashes h = HashBlocks(a, kBlock);
  const int dup = cache.AllocateBlock();
  EXPECT_FALSE(cache.Commit(dup, 0, h.local[0], h.chain[0], a, 4));
  cache.ReleaseBlock(dup);  // uncached: straight back to the free list
  EXPECT_EQ(cache.stats().free_blocks, 3);
  ReleaseAll(cache, first);
}

}  // namespace
}  // namespace k3::cache
