#include "base/interrupt.h"

#include <signal.h>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(InterruptTest, CountsSignalsAndGivesTheExitCode) {
  ClearInterruptRequests();
  InstallInterruptHandlers();
  EXPECT_EQ(InterruptRequests(), 0);
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(InterruptRequests(), 1);
  EXPECT_EQ(InterruptSignal(), SIGTERM);
  EXPECT_EQ(InterruptExitCode(), 143);
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_EQ(InterruptRequests(), 2);
  EXPECT_EQ(InterruptExitCode(), 130);
  ClearInterruptRequests();
  EXPECT_EQ(InterruptRequests(), 0);
  RequestInterrupt(SIGINT);
  EXPECT_EQ(InterruptRequests(), 1);
  ClearInterruptRequests();
}

}  // namespace
}  // namespace chaintag
