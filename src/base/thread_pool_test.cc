#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

namespace k3::base {
namespace {

TEST(ThreadPoolTest, RunsEveryIndexExactlyOnce) {
  ThreadPool pool(4);
  for (size_t n : {0u, 1u, 3u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.ParallelFor(n, [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  }
}

TEST(ThreadPoolTest, ConcurrentCallersDoNotInterfere) {
  ThreadPool pool(3);
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        pool.ParallelFor(100, [&](size_t i) { total.fetch_add(static_cast<long>(i)); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4L * 50 * 4950);
}

TEST(ThreadPoolTest, NestedParallelForFromInsideATaskCompletes) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.ParallelFor(4, [&](size_t) { pool.ParallelFor(8, [&](size_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 32);
}

TEST(ThreadPoolTest, SlotsAreInRangeAndNeverShared) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> busy(pool.parallelism());
  std::atomic<bool> overlap{false}, out_of_range{false};
  for (int round = 0; round < 20; ++round) {
    pool.ParallelForSlots(200, [&](size_t, size_t slot) {
      if (slot >= pool.parallelism()) {
        out_of_range = true;
        return;
      }
      if (busy[slot].fetch_add(1) != 0) overlap = true;
      std::this_thread::yield();
      busy[slot].fetch_sub(1);
    });
  }
  EXPECT_FALSE(out_of_range.load());
  EXPECT_FALSE(overlap.load());
}

TEST(ThreadPoolTest, AcceptsAStdFunction) {
  ThreadPool pool(2);
  std::atomic<int> calls{0};
  const std::function<void(size_t)> fn = [&](size_t) { calls.fetch_add(1); };
  pool.ParallelFor(10, fn);
  EXPECT_EQ(calls.load(), 10);
}

}  // namespace
}  // namespace k3::base
