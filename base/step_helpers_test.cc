#include "base/step_helpers.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(StepHelpersTest, RunDoesEveryItemOnceAtAnyThreadCount) {
  for (int threads : {1, 2, 3}) {
    StepHelpers helpers(threads);
    EXPECT_EQ(helpers.threads(), threads);
    for (int items : {0, 1, 2, 7, 100}) {
      std::vector<std::atomic<int>> done(items);
      for (int round = 0; round < 3; ++round) {
        helpers.Run(items, [&](int item) { ++done[item]; });
      }
      for (int item = 0; item < items; ++item) {
        EXPECT_EQ(done[item].load(), 3) << threads << " " << items;
      }
    }
  }
}

TEST(StepHelpersTest, LendingIsScopedToTheLendingThread) {
  EXPECT_EQ(StepHelpers::Current(), nullptr);
  StepHelpers outer(2), inner(2);
  {
    StepHelpers::Lend lend(&outer);
    EXPECT_EQ(StepHelpers::Current(), &outer);
    StepHelpers* seen_elsewhere = &outer;
    std::thread other([&] { seen_elsewhere = StepHelpers::Current(); });
    other.join();
    EXPECT_EQ(seen_elsewhere, nullptr);
    {
      StepHelpers::Lend nested(&inner);
      EXPECT_EQ(StepHelpers::Current(), &inner);
    }
    EXPECT_EQ(StepHelpers::Current(), &outer);
  }
  EXPECT_EQ(StepHelpers::Current(), nullptr);
}

}  // namespace
}  // namespace chaintag
