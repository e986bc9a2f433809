// A fixed-size pool of worker threads. ParallelFor splits [0, n) into tasks run by the workers and
// the calling thread, and returns when all are done. Safe to call from several threads and from
// inside a task: the caller claims work itself until none is left, so it never waits on a worker
// that is busy (helpers queued behind it find nothing left and return).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace k3::base {

class ThreadPool {
 public:
  // num_threads == 0 means one per hardware thread. The caller of ParallelFor also works, so a pool
  // of N threads keeps N workers plus the caller busy; a pool of size 1 has no extra workers.
  explicit ThreadPool(size_t num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Total parallelism: workers plus the calling thread.
  size_t parallelism() const { return workers_.size() + 1; }

  // Runs fn(i) for every i in [0, n); blocks until all calls have returned.
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

  // A process-wide pool sized to the hardware, created on first use.
  static ThreadPool& Default();

 private:
  void WorkerLoop();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
};

}  // namespace k3::base
