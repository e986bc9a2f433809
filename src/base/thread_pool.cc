#include "base/thread_pool.h"

#include <atomic>
#include <memory>

namespace k3::base {

ThreadPool::ThreadPool(size_t num_threads) {
  if (num_threads == 0) num_threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  for (size_t i = 1; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (n == 1 || workers_.empty()) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Work is claimed from a shared counter, so uneven tasks balance themselves.
  struct Shared {
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::mutex mutex;
    std::condition_variable all_done;
  };
  auto shared = std::make_shared<Shared>();
  auto drain = [shared, n, &fn] {
    size_t completed = 0;
    for (size_t i = shared->next.fetch_add(1); i < n; i = shared->next.fetch_add(1)) {
      fn(i);
      ++completed;
    }
    if (completed && shared->done.fetch_add(completed) + completed == n) {
      std::lock_guard<std::mutex> lock(shared->mutex);
      shared->all_done.notify_all();
    }
  };
  size_t helpers = std::min(workers_.size(), n - 1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < helpers; ++i) queue_.emplace_back(drain);
  }
  work_ready_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(shared->mutex);
  shared->all_done.wait(lock, [&] { return shared->done.load() == n; });
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool pool(0);
  return pool;
}

}  // namespace k3::base
