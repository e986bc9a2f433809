// A fixed-size pool of worker threads. ParallelFor splits [0, n) into tasks run by the workers and
// the calling thread, and returns when all are done. Safe to call from several threads and from
// inside a task: the caller claims work itself until none is left, so it never waits on a worker
// that is busy (helpers queued behind it find nothing left and return).
// Dispatch never allocates: the callable is passed by reference (FunctionRef) and the job record
// lives on the caller's stack, linked into the pool's queue until the call returns. Idle workers
// and a caller waiting for its helpers poll for ~50 us before sleeping (thread_pool.cc), so the
// back-to-back calls of a decode step do not pay a futex wake-up each.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace k3::base {

// A non-owning reference to a callable, valid while the callable lives (use it for parameters
// only). Unlike std::function it never allocates and never copies the callable.
template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): implicit, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

class ThreadPool {
 public:
  // num_threads == 0 means one per CPU this process may run on (its affinity: numa.h). The caller
  // of ParallelFor also works, so a pool of N threads keeps N workers plus the caller busy; a pool
  // of size 1 has no extra workers.
  explicit ThreadPool(size_t num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Total parallelism: workers plus the calling thread.
  size_t parallelism() const { return workers_.size() + 1; }

  // Runs fn(i) for every i in [0, n); blocks until all calls have returned.
  void ParallelFor(size_t n, FunctionRef<void(size_t)> fn);

  // Runs fn(i, slot) for every i in [0, n). `slot` in [0, parallelism()) names the thread running
  // the task within this call (0 = the caller); tasks of one slot run one after another, so each
  // slot may own scratch memory without locks.
  void ParallelForSlots(size_t n, FunctionRef<void(size_t, size_t)> fn);

  // A process-wide pool sized to the hardware, created on first use.
  static ThreadPool& Default();

 private:
  struct Job;
  void WorkerLoop();
  void Unlink(Job* job);  // requires mutex_

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  Job* head_ = nullptr;    // guarded by mutex_: jobs still wanting helpers, oldest first
  Job* tail_ = nullptr;    // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  // head_ != nullptr, written under mutex_ and polled without it by idle workers.
  std::atomic<bool> has_work_{false};
};

}  // namespace k3::base
