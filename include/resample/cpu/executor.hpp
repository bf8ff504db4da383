// How the CPU backends run a loop over particles: `serial` runs it as one block in the calling
// thread; `parallel` splits [0, N) into contiguous blocks and runs them on a thread pool.
//
// Every algorithm of the CPU backends is written against this interface, with per-block partial
// results (maxima, 128-bit sums) combined in block order, so that the answer is the same bits for
// any number of blocks. The block partition is a function of N and the thread count only.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace resample::cpu {

/// One block, in the calling thread: the executable specification.
class serial {
 public:
  [[nodiscard]] std::size_t blocks(std::size_t /*n*/) const { return 1; }
  template <class F>
  void for_blocks(std::size_t n, F&& f) const {
    f(std::size_t{0}, n, std::size_t{0});
  }
  /// Runs f(j) for j in [0, count), for independent tasks such as the systems of a batch.
  template <class F>
  void for_tasks(std::size_t count, F&& f) const {
    for (std::size_t j = 0; j < count; ++j) f(j);
  }
};

/// A fixed pool of worker threads; the calling thread works too.
class parallel {
 public:
  /// Blocks smaller than this are not worth a thread hand-off (tests lower it to split small N).
  static constexpr std::size_t default_min_block = 1 << 14;

  explicit parallel(unsigned threads = std::max(1u, std::thread::hardware_concurrency()),
                    std::size_t min_block = default_min_block)
      : threads_(std::max(1u, threads)), min_block_(std::max<std::size_t>(1, min_block)) {
    for (unsigned t = 1; t < threads_; ++t) workers_.emplace_back([this] { work(); });
  }
  parallel(const parallel&) = delete;
  parallel& operator=(const parallel&) = delete;
  ~parallel() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  [[nodiscard]] unsigned threads() const { return threads_; }

  [[nodiscard]] std::size_t blocks(std::size_t n) const {
    return std::clamp<std::size_t>(n / min_block_, 1, threads_);
  }

  /// f(begin, end, block) for the blocks of [0, n): block b is [n b / P, n (b + 1) / P).
  template <class F>
  void for_blocks(std::size_t n, F&& f) const {
    const std::size_t p = blocks(n);
    run(p, [&](std::size_t b) { f(n * b / p, n * (b + 1) / p, b); });
  }

  template <class F>
  void for_tasks(std::size_t count, F&& f) const {
    run(count, [&](std::size_t j) { f(j); });
  }

 private:
  void run(std::size_t count, const std::function<void(std::size_t)>& task) const {
    if (count == 1 || threads_ == 1) {
      for (std::size_t j = 0; j < count; ++j) task(j);
      return;
    }
    std::unique_lock call_lock(call_mutex_);  // one job at a time per pool
    {
      std::lock_guard lock(mutex_);
      task_ = &task;
      count_ = count;
      next_ = 0;
      pending_ = count;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  /// Takes tasks of the current job until none is left.
  void drain() const {
    for (;;) {
      std::size_t j;
      const std::function<void(std::size_t)>* task;
      {
        std::lock_guard lock(mutex_);
        if (task_ == nullptr || next_ >= count_) return;
        j = next_++;
        task = task_;
      }
      std::exception_ptr error;
      try {
        (*task)(j);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      if (error && !error_) error_ = error;
      if (--pending_ == 0) done_.notify_all();
    }
  }

  void work() const {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain();
    }
  }

  unsigned threads_;
  std::size_t min_block_;
  std::vector<std::thread> workers_;
  mutable std::mutex call_mutex_;
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  mutable std::condition_variable done_;
  mutable const std::function<void(std::size_t)>* task_ = nullptr;
  mutable std::size_t count_ = 0;
  mutable std::size_t next_ = 0;
  mutable std::size_t pending_ = 0;
  mutable std::uint64_t generation_ = 0;
  mutable std::exception_ptr error_;
  bool stop_ = false;
};

}  // namespace resample::cpu
