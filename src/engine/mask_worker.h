// MaskWorker: one background thread that computes the next step's grammar masks while the
// forward pass runs (the masks depend only on tokens already sampled). Run() hands it a job and
// returns at once; Wait() blocks until the job is done. One job at a time; the scheduler waits
// before it touches any sequence the job reads (matcher, mask) or destroys one.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace k3::engine {

class MaskWorker {
 public:
  MaskWorker() : thread_([this] { Loop(); }) {}
  ~MaskWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  MaskWorker(const MaskWorker&) = delete;
  MaskWorker& operator=(const MaskWorker&) = delete;

  void Run(std::function<void()> job) {
    Wait();
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = std::move(job);
      busy_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !busy_; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || busy_; });
      if (busy_) {
        std::function<void()> job = std::move(job_);
        lock.unlock();
        job();
        lock.lock();
        busy_ = false;
        cv_.notify_all();
        continue;
      }
      if (stopping_) return;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the fields it reads
};

}  // namespace k3::engine
