#include "base/random.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(SolverRandomTest, UniformIsInRangeAndRoughlyFlat) {
  SolverRandom random(1);
  std::vector<int> counts(7, 0);
  const int draws = 70000;
  for (int k = 0; k < draws; ++k) {
    const uint32_t x = random.Uniform(7);
    ASSERT_LT(x, 7u);
    ++counts[x];
  }
  // Chi-square with 6 degrees of freedom; 22.46 is the 0.999 quantile.
  double chi_square = 0;
  for (int c : counts) {
    const double expected = draws / 7.0;
    chi_square += (c - expected) * (c - expected) / expected;
  }
  EXPECT_LT(chi_square, 22.46);
}

TEST(SolverRandomTest, SameSeedSameSequence) {
  SolverRandom a(42), b(42), c(43);
  bool differs = false;
  for (int k = 0; k < 100; ++k) {
    const uint32_t x = a.Uniform(1000);
    EXPECT_EQ(x, b.Uniform(1000));
    differs |= x != c.Uniform(1000);
  }
  EXPECT_TRUE(differs);
}

TEST(SolverRandomTest, PermutationIsAPermutation) {
  SolverRandom random(3);
  std::vector<int> order;
  random.Permutation(50, &order);
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  std::vector<int> again;
  random.Permutation(50, &again);
  EXPECT_NE(order, again);
}

TEST(SolverRandomTest, UniformDoubleInUnitInterval) {
  SolverRandom random(5);
  double sum = 0;
  for (int k = 0; k < 10000; ++k) {
    const double x = random.UniformDouble();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(SolverRandomTest, SavedStateContinuesTheSequence) {
  SolverRandom random(7);
  for (int k = 0; k < 5; ++k) random.Uniform(100);
  const std::string state = random.SaveState();
  std::vector<uint32_t> expected;
  for (int k = 0; k < 10; ++k) expected.push_back(random.Uniform(1000));
  SolverRandom restored(1);
  ASSERT_TRUE(restored.LoadState(state));
  for (uint32_t value : expected) EXPECT_EQ(restored.Uniform(1000), value);
  EXPECT_FALSE(restored.LoadState("not a state"));
}

}  // namespace
}  // namespace chaintag
