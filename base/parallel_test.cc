#include "base/parallel.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(ParallelForTest, CoversEveryIndexExactlyOnce) {
  for (int n : {0, 1, 2, 7, 100}) {
    for (int threads : {1, 2, 3, 8}) {
      std::vector<std::atomic<int>> hits(n);
      ParallelFor(n, threads, [&](int begin, int end) {
        EXPECT_LE(0, begin);
        EXPECT_LE(begin, end);
        EXPECT_LE(end, n);
        for (int i = begin; i < end; ++i) ++hits[i];
      });
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(hits[i], 1) << "n=" << n << " threads=" << threads;
      }
    }
  }
}

}  // namespace
}  // namespace chaintag
