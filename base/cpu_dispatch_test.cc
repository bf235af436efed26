#include "base/cpu_dispatch.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(SpinBackoffTest, YieldsOnEveryKthPauseOnly) {
  SpinBackoff backoff;
  for (int round = 0; round < 3; ++round) {
    for (int poll = 1; poll < SpinBackoff::kPausesPerYield; ++poll) {
      EXPECT_FALSE(backoff.Pause()) << "round " << round << ", poll " << poll;
    }
    EXPECT_TRUE(backoff.Pause()) << "round " << round;
  }
}

// More waiting threads than the machine has cores, each waiting for the
// one before it: every flag is seen, whatever the scheduler does.
TEST(SpinBackoffTest, AChainOfWaitersMoreThanTheCoresFinishes) {
  const int waiters = 4 * std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::atomic<int>> flags(waiters + 1);
  for (auto& flag : flags) flag.store(0);
  std::vector<std::thread> threads;
  for (int k = 0; k < waiters; ++k) {
    threads.emplace_back([&flags, k] {
      SpinBackoff backoff;
      while (flags[k].load(std::memory_order_acquire) == 0) backoff.Pause();
      flags[k + 1].store(k + 1, std::memory_order_release);
    });
  }
  flags[0].store(1, std::memory_order_release);
  for (std::thread& thread : threads) thread.join();
  for (int k = 1; k <= waiters; ++k) EXPECT_EQ(flags[k].load(), k);
}

}  // namespace
}  // namespace chaintag
