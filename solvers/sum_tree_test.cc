#include "solvers/sum_tree.h"

#include <cmath>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(SumTreeTest, TotalsAndBoundaries) {
  SumTree tree(5);
  EXPECT_EQ(tree.Total(), 0);
  tree.Set(0, 1);
  tree.Set(2, 2);
  tree.Set(4, 3);
  tree.Set(3, -1);            // clipped at 0, as gap estimates are
  tree.Set(1, std::nan(""));  // and NaN too
  EXPECT_DOUBLE_EQ(tree.Total(), 6);
  EXPECT_EQ(tree.Get(3), 0);
  EXPECT_EQ(tree.Get(1), 0);
  // Cumulative sums 1, 1, 3, 3, 6: u·6 picks the interval it falls in.
  EXPECT_EQ(tree.Sample(0.0), 0);
  EXPECT_EQ(tree.Sample(0.999 / 6), 0);
  EXPECT_EQ(tree.Sample(1.0 / 6), 2);
  EXPECT_EQ(tree.Sample(2.999 / 6), 2);
  EXPECT_EQ(tree.Sample(3.0 / 6), 4);
  EXPECT_EQ(tree.Sample(0.999999), 4);
  // Zero-weight leaves are never drawn, not even at the edges.
  for (double u = 0; u < 1; u += 1e-3) {
    const int i = tree.Sample(u);
    EXPECT_GT(tree.Get(i), 0) << u;
  }
  tree.Set(4, 0);
  EXPECT_DOUBLE_EQ(tree.Total(), 3);
  EXPECT_EQ(tree.Sample(0.999999), 2);
}

// 1e5 seeded draws against the target distribution: Pearson's chi-square
// with 19 degrees of freedom stays below the 0.999 quantile (43.8).
TEST(SumTreeTest, ChiSquareAgainstDirectSampling) {
  const int n = 20;
  SumTree tree(n);
  std::vector<double> weight(n);
  SolverRandom random(7);
  for (int i = 0; i < n; ++i) {
    weight[i] = 0.1 + random.UniformDouble() * (i % 4 == 0 ? 10 : 1);
    tree.Set(i, weight[i]);
  }
  double total = 0;
  for (double x : weight) total += x;
  EXPECT_NEAR(tree.Total(), total, 1e-12);
  const int draws = 100000;
  std::vector<int> count(n, 0);
  for (int k = 0; k < draws; ++k) ++count[tree.Sample(random.UniformDouble())];
  double chi_square = 0;
  for (int i = 0; i < n; ++i) {
    const double expected = draws * weight[i] / total;
    chi_square += (count[i] - expected) * (count[i] - expected) / expected;
  }
  EXPECT_LT(chi_square, 43.8);
}

// Millions of updates leave no drift: the root equals the direct sum.
TEST(SumTreeTest, NoDriftAfterManyUpdates) {
  const int n = 1000;
  SumTree tree(n);
  std::vector<double> weight(n, 0.0);
  SolverRandom random(3);
  for (int k = 0; k < 1000000; ++k) {
    const int i = random.Uniform(n);
    weight[i] = random.UniformDouble() * 1e-3;
    tree.Set(i, weight[i]);
  }
  double total = 0;
  for (double x : weight) total += x;
  EXPECT_NEAR(tree.Total(), total, 1e-15 * n);
}

}  // namespace
}  // namespace chaintag
