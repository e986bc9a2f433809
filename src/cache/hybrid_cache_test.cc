#include "cache/hybrid_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace k3::cache::hybrid_cache_test {
namespace {

constexpr int kBlock = 4;

HybridCacheConfig Config(bool state, int64_t interval, int checkpoint_slots = 4) {
  return {.blocks = {.num_blocks = 32,
                     .block_size = kBlock,
                     .num_checkpoint_slots = checkpoint_slots,
                     .first_checkpoint_slot = 8},
          .prefix_caching = true,
          .recurrent_state = state,
          .checkpoint_interval = interval};
}

struct Seq {
  explicit Seq(int n, int64_t prompt_len, int32_t first = 0) : tokens(n), prompt_len(prompt_len) {
    std::iota(tokens.begin(), tokens.end(), first);
  }
  SequenceView view() { return {tokens, prompt_len, &hashes}; }
  std::vector<int32_t> tokens;
  int64_t prompt_len;
  BlockHashes hashes;
  std::vector<int32_t> blocks;
  size_t committed = 0;
};

// Computes `seq` in chunks as a scheduler would (aligned, reserving and confirming checkpoints);
// returns the chunk lengths.
std::vector<int64_t> Prefill(HybridCache& cache, Seq& seq, int64_t budget) {
  std::vector<int64_t> chunks;
  for (int64_t computed = 0; computed < static_cast<int64_t>(seq.tokens.size());) {
    const int64_t left = static_cast<int64_t>(seq.tokens.size()) - computed;
    const int64_t n = cache.AlignChunk(seq.view(), computed, std::min(left, budget));
    while (static_cast<int64_t>(seq.blocks.size()) * kBlock < computed + n) {
      seq.blocks.push_back(cache.AllocateBlock());
    }
    const int slot = cache.ReserveCheckpoint(seq.view(), computed + n);
    computed += n;
    cache.CommitBlocks(seq.view(), seq.blocks, computed, &seq.committed);
    if (slot >= 0) cache.ConfirmCheckpoint(seq.view(), computed, slot);
    chunks.push_back(n);
  }
  return chunks;
}

TEST(HybridCache, ChunksEndAtCheckpointPositions) {
  HybridCache cache(Config(/*state=*/true, /*interval=*/8), nullptr);
  Seq seq(30, 30);  // checkpoints at 8, 16, 24 (interval) and 28 (the prompt's last boundary)
  EXPECT_EQ(Prefill(cache, seq, 64), (std::vector<int64_t>{8, 8, 8, 4, 2}));
  EXPECT_EQ(cache.stats().checkpoints, 4);
  // The same prompt again: chunks are no longer cut where checkpoints exist.
  Seq again(30, 30);
  EXPECT_EQ(cache.AlignChunk(again.view(), 0, 30), 30);
}

TEST(HybridCache, WithoutRecurrentStateNothingIsCutOrSaved) {
  HybridCache cache(Config(/*state=*/false, /*interval=*/8), nullptr);
  Seq seq(30, 30);
  EXPECT_FALSE(cache.uses_checkpoints());
  EXPECT_EQ(Prefill(cache, seq, 64), (std::vector<int64_t>{30}));
  EXPECT_EQ(cache.stats().checkpoints, 0);
  Seq again(30, 30);
  const PrefixMatch hit = cache.AcquirePrefix(again.view());
  EXPECT_EQ(hit.tokens, 28);  // KV alone is enough; the last token is left to compute
  EXPECT_EQ(hit.checkpoint_slot, -1);
}

TEST(HybridCache, HitEndsAtTheDeepestCheckpoint) {
  HybridCache cache(Config(/*state=*/true, /*interval=*/0), nullptr);
  Seq first(22, 22);  // checkpoint at 20 only
  Prefill(cache, first, 64);
  Seq longer(40, 40);  // shares 22 tokens, then differs
  for (int i = 22; i < 40; ++i) longer.tokens[i] = 1000 + i;
  const PrefixMatch hit = cache.AcquirePrefix(longer.view());
  EXPECT_EQ(hit.kv_tokens, 20);
  EXPECT_EQ(hit.tokens, 20);
  EXPECT_GE(hit.checkpoint_slot, 8);
}

// Two sequences of one step reaching the same prefix's checkpoint position: one slot is reserved,
// the other gets none; cancelling frees the slot and lets the next step reserve again.
TEST(HybridCache, OneReservationPerPrefixAndCancelFreesIt) {
  HybridCache cache(Config(/*state=*/true, /*interval=*/0, /*checkpoint_slots=*/2), nullptr);
  Seq a(9, 9), b(9, 9);
  const int slot = cache.ReserveCheckpoint(a.view(), 8);
  EXPECT_GE(slot, 8);
  EXPECT_EQ(cache.ReserveCheckpoint(b.view(), 8), -1);
  EXPECT_EQ(cache.ReserveCheckpoint(a.view(), 4), -1);  // not a checkpoint position
  cache.CancelCheckpoint(a.view(), 8, slot);
  const int again = cache.ReserveCheckpoint(b.view(), 8);
  EXPECT_GE(again, 8);
  // Confirming a checkpoint whose block was never committed frees the slot.
  cache.ConfirmCheckpoint(b.view(), 8, again);
  EXPECT_EQ(cache.stats().checkpoints, 0);
  EXPECT_GE(cache.ReserveCheckpoint(a.view(), 8), 8);
  EXPECT_GE(cache.ReserveCheckpoint(Seq(13, 13, 50).view(), 12), 8);  // both slots in use now
}

TEST(HybridCache, CommitsOnlyConfirmedFullBlocks) {
  HybridCache cache(Config(/*state=*/false, 0), nullptr);
  Seq seq(10, 10);
  for (int i = 0; i < 3; ++i) seq.blocks.push_back(cache.AllocateBlock());
  cache.CommitBlocks(seq.view(), seq.blocks, 7, &seq.committed);
  EXPECT_EQ(seq.committed, 1u);  // [0, 4) only: the block of 4..7 is not full
  cache.CommitBlocks(seq.view(), seq.blocks, 10, &seq.committed);
  EXPECT_EQ(seq.committed, 2u);
  Seq again(10, 10);
  EXPECT_EQ(cache.AcquirePrefix(again.view()).tokens, 8);
}

TEST(HybridCache, WithoutPrefixCachingNothingIsShared) {
  HybridCacheConfig config = Config(/*state=*/true, 8);
  config.prefix_caching = false;
  HybridCache cache(config, nullptr);
  Seq seq(30, 30);
  EXPECT_EQ(Prefill(cache, seq, 64), (std::vector<int64_t>{30}));
  Seq again(30, 30);
  EXPECT_EQ(cache.AcquirePrefix(again.view()).tokens, 0);
}

}  // namespace
}  // namespace k3::cache::hybrid_cache_test
