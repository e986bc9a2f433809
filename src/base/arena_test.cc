#include "base/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace k3::base {
namespace {

TEST(ArenaTest, AllocationsAreAlignedAndDisjoint) {
  Arena arena;
  char* a = arena.Allocate<char>(3);
  float* b = arena.Allocate<float>(100);
  double* c = arena.Allocate<double>(1);
  for (const void* p :
       {static_cast<const void*>(a), static_cast<const void*>(b), static_cast<const void*>(c)}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  }
  EXPECT_GE(reinterpret_cast<char*>(b), a + 3);
  EXPECT_GE(reinterpret_cast<char*>(c), reinterpret_cast<char*>(b + 100));
  std::memset(b, 1, 100 * sizeof(float));  // writable
  EXPECT_EQ(arena.used_bytes(), 64u + 448u + 64u);
}

TEST(ArenaTest, ResetFoldsBlocksSoTheSameStepAllocatesNothing) {
  Arena arena;
  auto step = [&] {
    for (int i = 0; i < 20; ++i) arena.Allocate<float>(10000 + 1000 * i);  // several blocks
  };
  step();
  const int64_t first = arena.blocks_allocated();
  EXPECT_GT(first, 1);
  arena.Reset();
  const int64_t after_reset = arena.blocks_allocated();
  EXPECT_EQ(after_reset, first + 1);  // one block of the peak
  for (int round = 0; round < 3; ++round) {
    step();
    arena.Reset();
  }
  EXPECT_EQ(arena.blocks_allocated(), after_reset);
  EXPECT_GE(arena.capacity_bytes(), arena.peak_bytes());
}

TEST(ArenaTest, MarkReleasesLaterAllocations) {
  Arena arena;
  float* keep = arena.Allocate<float>(16);
  const size_t used = arena.used_bytes();
  float* scoped = nullptr;
  {
    ArenaMark mark(arena);
    scoped = arena.Allocate<float>(1 << 20);  // spills into a new block
    EXPECT_GT(arena.used_bytes(), used);
  }
  EXPECT_EQ(arena.used_bytes(), used);
  float* again = arena.Allocate<float>(16);
  EXPECT_NE(again, keep);
  EXPECT_GE(arena.peak_bytes(), size_t{1} << 22);
  {
    ArenaMark mark(arena);
    EXPECT_EQ(arena.Allocate<float>(1 << 20), scoped);  // the kept block is reused
  }
}

TEST(ArenaTest, ResetWithMinimumCapacityReserves) {
  Arena arena;
  arena.Reset(1 << 20);
  const int64_t blocks = arena.blocks_allocated();
  EXPECT_GE(arena.capacity_bytes(), size_t{1} << 20);
  arena.Allocate<char>(1 << 19);
  arena.Allocate<char>(1 << 19);
  EXPECT_EQ(arena.blocks_allocated(), blocks);
}

}  // namespace
}  // namespace k3::base
