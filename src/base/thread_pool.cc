#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "base/numa.h"

namespace k3::base {
namespace {

// How long an idle worker, and a caller waiting for its helpers, poll before sleeping on a
// condition variable. A decode step issues hundreds of short ParallelFor calls a few microseconds
// apart; a futex wake-up takes tens of microseconds on a VM, long enough for the caller to have
// claimed every task itself, which halves the memory streams of a bandwidth-bound product. Cost: a
// core polls for at most this long after each call before it sleeps.
// Measured on the 2-core development VMs (`k3 bench model`, interleaved rounds): 50 us against
// none, Zen 5, batch-1 decode 22.0 / 23.4 / 26.5 -> 28.4 / 29.9 / 29.0 tokens/s (`--weight-quant
// int8 --expert-activations int8`). 1 ms against 50 us, Emerald Rapids, K3 batch 32 131.4 /
// 124.9 / 134.5 / 126.7 -> 137.0 / 137.4 / 136.7 / 140.4 tokens/s: a batch-32 step's work
// between pool calls (norms, routing, the MoE gather; since then mostly split over the pool too)
// outlasted 50 us, so the worker slept and each next call waited for its wake-up. 5 ms: 141.0 /
// 140.8 in the same rounds, within their noise.
constexpr auto kSpin = std::chrono::microseconds(1000);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `done` until it returns true or kSpin has passed; returns its last answer.
template <typename Done>
bool SpinUntil(const Done& done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

// One ParallelFor call, on the caller's stack. It stays in the queue while helpers are wanted;
// the caller unlinks it when it has run out of work and waits until no helper is inside it, so
// the record outlives every access.
struct ThreadPool::Job {
  FunctionRef<void(size_t, size_t)> fn;
  size_t n = 0;
  std::atomic<size_t> next{0};  // the next unclaimed task
  size_t helpers_wanted = 0;    // guarded by mutex_: helpers still to start
  size_t next_slot = 1;         // guarded by mutex_: slot of the next helper
  // Helpers started and not yet finished: changed under mutex_, read without it while spinning.
  std::atomic<size_t> running{0};
  std::condition_variable helpers_done;
  Job* next_job = nullptr;  // guarded by mutex_: queue link

  // Claims and runs tasks until none is left.
  void Drain(size_t slot) {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i, slot);
  }
};

ThreadPool::ThreadPool(size_t num_threads) {
  if (num_threads == 0) num_threads = AvailableCpus();
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

void ThreadPool::Unlink(Job* job) {
  Job** link = &head_;
  Job* prev = nullptr;
  while (*link != nullptr && *link != job) {
    prev = *link;
    link = &(*link)->next_job;
  }
  if (*link == nullptr) return;  // already unlinked
  *link = job->next_job;
  if (tail_ == job) tail_ = prev;
  job->next_job = nullptr;
  has_work_.store(head_ != nullptr, std::memory_order_release);
}

void ThreadPool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (head_ == nullptr && !stopping_) {
      lock.unlock();
      SpinUntil([this] { return has_work_.load(std::memory_order_acquire); });
      lock.lock();
    }
    work_ready_.wait(lock, [this] { return stopping_ || head_ != nullptr; });
    if (head_ == nullptr) return;  // stopping and drained
    Job* job = head_;
    const size_t slot = job->next_slot++;
    if (--job->helpers_wanted == 0) Unlink(job);
    ++job->running;
    lock.unlock();
    job->Drain(slot);
    lock.lock();
    if (--job->running == 0) job->helpers_done.notify_all();
  }
}

void ThreadPool::ParallelForSlots(size_t n, FunctionRef<void(size_t, size_t)> fn) {
  if (n == 0) return;
  if (n == 1 || workers_.empty()) {
    for (size_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  // Work is claimed from a shared counter, so uneven tasks balance themselves.
  Job job{fn, n};
  job.helpers_wanted = std::min(workers_.size(), n - 1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (tail_ == nullptr) {
      head_ = &job;
    } else {
      tail_->next_job = &job;
    }
    tail_ = &job;
    has_work_.store(true, std::memory_order_release);
  }
  work_ready_.notify_all();
  job.Drain(0);
  // Every task is claimed; helpers that have not started are no longer wanted, and those inside
  // the job finish their last task before it may go. A helper decrements `running` and notifies
  // under mutex_, so taking the mutex after seeing 0 orders its last touch of `job` before return.
  std::unique_lock<std::mutex> lock(mutex_);
  Unlink(&job);
  if (job.running.load() == 0) return;
  lock.unlock();
  SpinUntil([&] { return job.running.load(std::memory_order_acquire) == 0; });
  lock.lock();
  job.helpers_done.wait(lock, [&] { return job.running.load() == 0; });
}

void ThreadPool::ParallelFor(size_t n, FunctionRef<void(size_t)> fn) {
  ParallelForSlots(n, [&fn](size_t i, size_t) { fn(i); });
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool pool(0);
  return pool;
}

}  // namespace k3::base
