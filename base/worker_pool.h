// WorkerPool: a fixed set of threads that run submitted tasks in the order
// they were submitted. A task learns which worker runs it, so that it can
// use that worker's buffers without locking. For request-serving code,
// where tasks arrive one by one from many threads; batch work uses
// BatchPool or ParallelFor instead.
//
// Thread-safety: Submit may be called from any thread; the destructor runs
// the tasks already submitted, then joins the workers.

#ifndef CHAINTAG_BASE_WORKER_POOL_H_
#define CHAINTAG_BASE_WORKER_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace chaintag {

class WorkerPool {
 public:
  // At least one thread.
  explicit WorkerPool(int threads);
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()); }

  // task(worker), worker in [0, threads()), on one of the pool's threads.
  void Submit(std::function<void(int worker)> task);

 private:
  void Loop(int worker);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void(int)>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_WORKER_POOL_H_
