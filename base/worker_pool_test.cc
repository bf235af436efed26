#include "base/worker_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(WorkerPoolTest, RunsEveryTaskOnceOnAWorkerOfThePool) {
  std::vector<int> runs(1000, 0);
  std::mutex mutex;
  std::set<int> workers;
  {
    WorkerPool pool(3);
    EXPECT_EQ(pool.threads(), 3);
    for (int i = 0; i < 1000; ++i) {
      pool.Submit([&, i](int worker) {
        std::lock_guard<std::mutex> lock(mutex);
        ++runs[i];
        workers.insert(worker);
      });
    }
  }  // the destructor runs what was submitted
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(runs[i], 1) << i;
  for (int worker : workers) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 3);
  }
}

TEST(WorkerPoolTest, OneWorkerRunsTasksInSubmissionOrder) {
  std::vector<int> order;
  {
    WorkerPool pool(1);
    for (int i = 0; i < 100; ++i) {
      pool.Submit([&order, i](int worker) {
        EXPECT_EQ(worker, 0);
        order.push_back(i);
      });
    }
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(WorkerPoolTest, AWorkerIndexIsNeverInTwoTasksAtOnce) {
  std::atomic<int> busy[2] = {{0}, {0}};
  std::atomic<int> overlaps{0};
  {
    WorkerPool pool(2);
    for (int i = 0; i < 200; ++i) {
      pool.Submit([&](int worker) {
        if (busy[worker].fetch_add(1) != 0) ++overlaps;
        std::this_thread::yield();
        busy[worker].fetch_sub(1);
      });
    }
  }
  EXPECT_EQ(overlaps.load(), 0);
}

}  // namespace
}  // namespace chaintag
