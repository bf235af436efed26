#include "base/batch_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>  // NOLINT
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// Uneven work: item i sums 1..(i % 13) * 1000 one term at a time, so items
// take from nothing to 12000 steps. The answer is k (k + 1) / 2.
int64_t SlowTriangle(int i) {
  const int64_t k = (i % 13) * 1000;
  volatile int64_t sum = 0;
  for (int64_t term = 1; term <= k; ++term) sum = sum + term;
  return sum;
}
int64_t Triangle(int i) {
  const int64_t k = (i % 13) * 1000;
  return k * (k + 1) / 2;
}

// A flag one thread sets and another waits for. The wait gives up after a
// minute (so that a broken pool fails the test instead of hanging it); no
// test relies on how long anything takes.
class Event {
 public:
  void Set() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      set_ = true;
    }
    changed_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::minutes(1),
                             [this] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool set_ = false;
};

// Every item's answer lands in its own slot, each item is done exactly
// once, over batches of several sizes.
std::vector<int64_t> RunBatches(int threads, const std::vector<int>& sizes) {
  std::vector<int64_t> slots;
  std::vector<std::atomic<int>> calls(200);
  BatchPool pool(threads, [&](int, int i) {
    slots[i] = SlowTriangle(i);
    calls[i].fetch_add(1);
  });
  std::vector<int64_t> all;
  for (int size : sizes) {
    slots.assign(size, -1);
    for (auto& count : calls) count.store(0);
    pool.Start(size);
    pool.Finish();
    for (int i = 0; i < size; ++i) {
      EXPECT_EQ(calls[i].load(), 1) << "item " << i << " of " << size;
    }
    all.insert(all.end(), slots.begin(), slots.end());
  }
  return all;
}

TEST(BatchPoolTest, EveryItemOnceAndItsAnswerInItsSlot) {
  const std::vector<int> sizes = {1, 7, 100, 3, 200};
  std::vector<int64_t> expected;
  for (int size : sizes) {
    for (int i = 0; i < size; ++i) expected.push_back(Triangle(i));
  }
  // Item 12 of a batch: (12 * 1000) (12 * 1000 + 1) / 2.
  ASSERT_EQ(expected[1 + 7 + 12], 72006000);
  for (int threads : {1, 2, 3, 4, 8}) {
    EXPECT_EQ(RunBatches(threads, sizes), expected) << threads << " threads";
  }
}

// Item 0 finishes last (it waits until every other item is done, which
// only the other thread can do), yet every answer is in its own slot.
TEST(BatchPoolTest, ItemsFinishingOutOfOrderKeepTheirSlots) {
  constexpr int kItems = 20;
  std::vector<int64_t> slots(kItems, -1);
  std::mutex mutex;
  std::vector<int> finished;  // items in the order they finished
  std::atomic<int> others_done{0};
  Event others;
  bool waited = false;
  BatchPool pool(2, [&](int, int i) {
    if (i == 0) waited = others.Wait();
    slots[i] = SlowTriangle(i);
    {
      std::lock_guard<std::mutex> lock(mutex);
      finished.push_back(i);
    }
    // The last of the others lets item 0 go once it is recorded.
    if (i != 0 && others_done.fetch_add(1) + 1 == kItems - 1) others.Set();
  });
  pool.Start(kItems);
  pool.Finish();

  ASSERT_TRUE(waited);
  ASSERT_EQ(finished.size(), static_cast<size_t>(kItems));
  EXPECT_EQ(finished.back(), 0);
  for (int i = 0; i < kItems; ++i) EXPECT_EQ(slots[i], Triangle(i)) << i;
}

// The pool has no error channel: an item that fails records its error in
// its slot like any result. The other items still run, Finish returns, and
// the caller reports the first failure in input order, whichever failed
// first in time (here item 9 fails before item 4 is looked at).
TEST(BatchPoolTest, AFailingItemLeavesTheOthersAndFinishReturns) {
  constexpr int kItems = 12;
  std::vector<std::string> errors(kItems);
  std::vector<int64_t> slots(kItems, -1);
  Event item9_failed;
  bool waited = false;
  BatchPool pool(2, [&](int, int i) {
    if (i == 4) {
      waited = item9_failed.Wait();
      errors[4] = "item 4 failed";
      return;
    }
    if (i == 9) {
      errors[9] = "item 9 failed";
      item9_failed.Set();
      return;
    }
    slots[i] = SlowTriangle(i);
  });
  pool.Start(kItems);
  pool.Finish();

  ASSERT_TRUE(waited);
  int first_failure = -1;
  for (int i = 0; i < kItems && first_failure < 0; ++i) {
    if (!errors[i].empty()) first_failure = i;
  }
  EXPECT_EQ(first_failure, 4);
  EXPECT_EQ(errors[4], "item 4 failed");
  EXPECT_EQ(errors[9], "item 9 failed");
  for (int i = 0; i < kItems; ++i) {
    if (i == 4 || i == 9) {
      EXPECT_EQ(slots[i], -1);
    } else {
      EXPECT_EQ(slots[i], Triangle(i)) << i;
      EXPECT_EQ(errors[i], "") << i;
    }
  }

  // The pool goes on with the next batch.
  slots.assign(kItems, -1);
  errors.assign(kItems, "");
  pool.Start(3);
  pool.Finish();
  EXPECT_EQ(slots[0], Triangle(0));
  EXPECT_EQ(slots[1], Triangle(1));
  EXPECT_EQ(slots[2], Triangle(2));
  EXPECT_EQ(slots[3], -1);
}

TEST(BatchPoolTest, EmptyBatchDoesNoWork) {
  for (int threads : {1, 3}) {
    std::atomic<int> calls{0};
    {
      // Never started: the helpers are joined all the same.
      BatchPool unused(threads, [&](int, int) { calls.fetch_add(1); });
    }
    BatchPool pool(threads, [&](int, int) { calls.fetch_add(1); });
    pool.Start(0);
    pool.Finish();
    EXPECT_EQ(calls.load(), 0) << threads << " threads";
    // Fewer items than threads, then none again.
    pool.Start(2);
    pool.Finish();
    EXPECT_EQ(calls.load(), 2) << threads << " threads";
    pool.Start(0);
    pool.Finish();
    EXPECT_EQ(calls.load(), 2) << threads << " threads";
  }
}

// One thread has no helpers: Start does nothing, Finish does the batch on
// the caller's thread as worker 0.
TEST(BatchPoolTest, OneThreadDoesTheBatchInFinish) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int> order;
  bool elsewhere = false;
  BatchPool pool(1, [&](int worker, int i) {
    elsewhere |= worker != 0 || std::this_thread::get_id() != caller;
    order.push_back(i);
  });
  pool.Start(5);
  EXPECT_TRUE(order.empty());
  pool.Finish();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(elsewhere);
}

// With helpers, Start hands the batch over and returns: a helper does the
// item while the caller waits for it, before Finish.
TEST(BatchPoolTest, HelpersWorkBetweenStartAndFinish) {
  const std::thread::id caller = std::this_thread::get_id();
  Event done;
  int done_by = -1;
  bool on_caller = true;
  BatchPool pool(2, [&](int worker, int) {
    done_by = worker;
    on_caller = std::this_thread::get_id() == caller;
    done.Set();
  });
  pool.Start(1);
  ASSERT_TRUE(done.Wait());
  EXPECT_EQ(done_by, 1);
  EXPECT_FALSE(on_caller);
  pool.Finish();
}

// Worker indices are in [0, threads); 0 is the caller's thread and every
// index stays on one thread, batch after batch (each worker's buffers are
// only ever touched by one thread).
TEST(BatchPoolTest, EachWorkerIndexIsOneThread) {
  constexpr int kThreads = 4;
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::vector<std::set<std::thread::id>> threads_of(kThreads);
  std::vector<int> bad_workers;
  BatchPool pool(kThreads, [&](int worker, int) {
    std::lock_guard<std::mutex> lock(mutex);
    if (worker < 0 || worker >= kThreads) {
      bad_workers.push_back(worker);
      return;
    }
    threads_of[worker].insert(std::this_thread::get_id());
  });
  for (int batch = 0; batch < 50; ++batch) {
    pool.Start(batch % 17);
    pool.Finish();
  }
  EXPECT_TRUE(bad_workers.empty());
  std::set<std::thread::id> all;
  for (int worker = 0; worker < kThreads; ++worker) {
    EXPECT_LE(threads_of[worker].size(), 1u) << "worker " << worker;
    all.insert(threads_of[worker].begin(), threads_of[worker].end());
  }
  // (Whether the caller got any item depends on the helpers' pace.)
  if (!threads_of[0].empty()) {
    EXPECT_EQ(*threads_of[0].begin(), caller);
  }
  // Distinct workers, distinct threads.
  size_t used = 0;
  for (const auto& threads : threads_of) used += threads.size();
  EXPECT_EQ(all.size(), used);
}

// Many short batches of changing sizes: no item lost, none done twice,
// nothing left running between batches.
TEST(BatchPoolTest, ManyBatchesOfChangingSizes) {
  std::vector<std::atomic<int>> calls(64);
  std::atomic<int> running{0};
  std::atomic<int> overlaps{0};
  BatchPool pool(3, [&](int, int i) {
    running.fetch_add(1);
    calls[i].fetch_add(1);
    running.fetch_sub(1);
  });
  int64_t expected_total = 0;
  for (int batch = 0; batch < 640; ++batch) {
    const int size = (batch * 37) % 64;
    expected_total += size;
    pool.Start(size);
    pool.Finish();
    if (running.load() != 0) overlaps.fetch_add(1);
  }
  // Batch b has (37 b) mod 64 items; 37 is odd, so every 64 batches give
  // each size 0..63 once: 10 * (0 + 1 + ... + 63) = 10 * 2016 items.
  ASSERT_EQ(expected_total, 20160);
  int64_t total = 0;
  for (auto& count : calls) total += count.load();
  EXPECT_EQ(total, expected_total);
  EXPECT_EQ(overlaps.load(), 0);
}

// Run: each batch its own job, capturing what it likes; every item once.
TEST(BatchPoolTest, RunDoesEachBatchsOwnJobOnce) {
  for (int threads : {1, 2, 3}) {
    BatchPool pool(threads);
    for (int size : {0, 1, 5, 64}) {
      std::vector<std::atomic<int>> done(size);
      const int64_t weight = size + 7;  // captured by reference, with done
      std::atomic<int64_t> total{0};
      pool.Run(size, [&](int i) {
        ++done[i];
        total += weight;
      });
      for (int i = 0; i < size; ++i) EXPECT_EQ(done[i].load(), 1) << i;
      EXPECT_EQ(total.load(), weight * size) << threads << " " << size;
    }
  }
}

// Helpers that slept (a pause between batches far longer than the spin)
// and helpers still spinning (batches back to back) both take every batch
// once, and a pool is destroyed from either state without hanging.
TEST(BatchPoolTest, SleepingAndSpinningHelpersTakeEveryBatch) {
  for (const bool pause : {true, false}) {
    std::vector<std::atomic<int>> calls(16);
    {
      BatchPool pool(3, [&](int, int i) { calls[i].fetch_add(1); });
      for (int batch = 0; batch < 8; ++batch) {
        if (pause) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        pool.Start(16);
        pool.Finish();
        for (int i = 0; i < 16; ++i) {
          ASSERT_EQ(calls[i].load(), batch + 1) << pause << " " << i;
        }
      }
      if (pause) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

// The caller waits for a helper whose item outlasts the spin: it sleeps
// and is woken by the helper, with the item done. Each item waits for the
// other to start, so the two run on the two threads.
TEST(BatchPoolTest, FinishOutlastsTheSpin) {
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  BatchPool pool(2, [&](int worker, int) {
    started.fetch_add(1);
    while (started.load() % 2 != 0) std::this_thread::yield();
    if (worker != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    finished.fetch_add(1);
  });
  for (int batch = 1; batch <= 3; ++batch) {
    pool.Start(2);
    pool.Finish();
    EXPECT_EQ(finished.load(), 2 * batch);
  }
}

}  // namespace
}  // namespace chaintag
