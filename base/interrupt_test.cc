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

int before_scopes_calls = 0;
void BeforeScopes(int) { ++before_scopes_calls; }

// While a scoped handler lives, one SIGINT is two requests (stop, and skip
// the final gap); nested handlers share it, and the last to go restores
// the action found before the first and clears the requests.
TEST(InterruptTest, ScopedHandlersRestoreTheActionBefore) {
  ClearInterruptRequests();
  struct sigaction action = {};
  action.sa_handler = BeforeScopes;
  sigemptyset(&action.sa_mask);
  struct sigaction original;
  ASSERT_EQ(sigaction(SIGINT, &action, &original), 0);
  {
    ScopedInterruptHandler outer;
    EXPECT_FALSE(outer.Interrupted());
    {
      ScopedInterruptHandler inner;
      ASSERT_EQ(raise(SIGINT), 0);
      EXPECT_EQ(InterruptRequests(), 2);
      EXPECT_TRUE(inner.Interrupted());
    }
    EXPECT_TRUE(outer.Interrupted());  // the inner one kept it
    EXPECT_EQ(before_scopes_calls, 0);
  }
  EXPECT_EQ(InterruptRequests(), 0);
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_EQ(before_scopes_calls, 1);
  EXPECT_EQ(InterruptRequests(), 0);
  sigaction(SIGINT, &original, nullptr);
}

}  // namespace
}  // namespace chaintag
