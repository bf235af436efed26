// BatchPool: a batch of items at a time on threads − 1 helper threads and
// the calling thread. Start hands the batch to the helpers and returns, so
// the caller can prepare the next batch meanwhile (read input); Finish makes
// the caller join in and waits for the batch to be done, so no more threads
// run than asked for. Items are handed out one at a time, so uneven ones
// balance. One thread means no helpers: Finish does the whole batch.
// Waiting threads spin (for kSpinTime) before they sleep: solver rounds
// hand out small batches many times a second, with short serial steps
// between them, and waking a sleeping thread costs about as much as such a
// batch. A shorter spin made mini-batch passes on two threads slower
// (docs/experiments.md#mini-batch-and-distributed-training), and plain
// BCFW's steps at hundreds of labels, which lend their helpers a batch
// every quarter millisecond, slept and woke at every step with a spin of
// 0.1 ms (docs/experiments.md#hundreds-of-labels).
// The spin is timed, not counted: a pause instruction takes from 10 to 150
// cycles across x86 processors. It yields the core as it goes (SpinBackoff):
// with more runnable threads than cores, a plain spin would keep the thread
// it waits for off the core for the spin's whole length at every hand-over
// (docs/experiments.md#threads-more-runnable-threads-than-cores).
// A wait that its spin ends takes no lock: only a thread that goes to sleep
// (and the one that wakes it) takes the mutex, so a hand-over between
// spinning threads never blocks on a lock the other holds for a moment.
// A pool made without a work function runs each batch's own job: Run(size,
// job) is Start and Finish with job(i) as the work.
//
// Thread-safety: Start and Finish (or Run) from one thread, alternately;
// work(worker, i) runs concurrently for distinct items, each worker index
// on one thread.

#ifndef CHAINTAG_BASE_BATCH_POOL_H_
#define CHAINTAG_BASE_BATCH_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/cpu_dispatch.h"

namespace chaintag {

class BatchPool {
 public:
  // work(worker, i) does item i of the started batch with worker's buffers;
  // worker 0 is the caller's.
  BatchPool(int threads, std::function<void(int worker, int i)> work)
      : work_(std::move(work)) {
    for (int worker = 1; worker < threads; ++worker) {
      helpers_.emplace_back([this, worker] { HelperLoop(worker); });
    }
  }
  ~BatchPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true, std::memory_order_relaxed);
      generation_.store(generation_.load(std::memory_order_relaxed) + 1,
                        std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& helper : helpers_) helper.join();
  }

  // The helpers start on items [0, size).
  void Start(int size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_ = size;
      next_.store(0, std::memory_order_relaxed);
      busy_.store(static_cast<int>(helpers_.size()), std::memory_order_relaxed);
      generation_.store(generation_.load(std::memory_order_relaxed) + 1,
                        std::memory_order_release);
    }
    wake_.notify_all();
  }

  // A pool whose batches each bring their own job (Run).
  explicit BatchPool(int threads)
      : BatchPool(threads, [this](int, int i) { call_(job_, i); }) {}

  // job(i) for items [0, size) on the helpers and the caller; returns when
  // all are done. For a pool made with BatchPool(threads) only. The job is
  // called through a pointer, not copied into a std::function, so a batch
  // allocates nothing whatever the job captures.
  template <typename Job>
  void Run(int size, const Job& job) {
    job_ = &job;
    call_ = [](const void* held, int i) {
      (*static_cast<const Job*>(held))(i);
    };
    Start(size);
    Finish();
  }

  // Does what the helpers have not taken, then waits for them.
  void Finish() {
    DoItems(0);
    auto done = [this] { return busy_.load(std::memory_order_acquire) == 0; };
    Spin(done);
    if (done()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, done);
  }

 private:
  void DoItems(int worker) {
    for (int i = next_.fetch_add(1, std::memory_order_relaxed); i < size_;
         i = next_.fetch_add(1, std::memory_order_relaxed)) {
      work_(worker, i);
    }
  }

  // Returns once `ready` holds or after about kSpinTime.
  template <typename Ready>
  static void Spin(Ready ready) {
    const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    SpinBackoff backoff;
    while (!ready()) {
      if (backoff.Pause() && std::chrono::steady_clock::now() >= deadline) {
        return;
      }
    }
  }

  void HelperLoop(int worker) {
    int seen = 0;
    while (true) {
      auto started = [&] {
        return generation_.load(std::memory_order_acquire) != seen;
      };
      Spin(started);
      if (!started()) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, started);
      }
      if (stop_.load(std::memory_order_relaxed)) return;
      seen = generation_.load(std::memory_order_acquire);
      DoItems(worker);
      if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // The caller may be between its check of busy_ and its sleep: the
        // lock makes the notification come after it sleeps.
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  static constexpr std::chrono::microseconds kSpinTime{1000};

  const std::function<void(int, int)> work_;
  // Run's job and how to call it: set before Start, which publishes them.
  const void* job_ = nullptr;
  void (*call_)(const void*, int) = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  // Written under mutex_ (so a sleeping helper cannot miss a move); read
  // by spinning threads without it.
  std::atomic<int> generation_{0};
  int size_ = 0;              // written under mutex_ before generation_ moves
  std::atomic<int> busy_{0};  // helpers still on the current batch
  std::atomic<bool> stop_{false};  // set before generation_'s last move
  std::atomic<int> next_{0};
  std::vector<std::thread> helpers_;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_BATCH_POOL_H_
