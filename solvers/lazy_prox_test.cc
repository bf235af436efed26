#include "solvers/lazy_prox.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// M^k against k single steps (the dense reference), over random maps and
// points: the three pieces, crossings of zero in both directions, points
// that stay at zero, and θ = 0.
TEST(LazyProxTest, ClosedFormMatchesRepeatedSteps) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  int crossings = 0, zeros = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const double decay = 1 - std::pow(10.0, -4 * unit(random));  // [0.9999, 0)
    const double threshold = trial % 5 == 0 ? 0.0 : 0.3 * unit(random);
    const int max_steps = 200;
    LazyProx prox;
    prox.Reset(1 - decay, threshold, max_steps);
    const double x = 3 * normal(random);
    const double c = trial % 7 == 0 ? 0.0 : 5 * normal(random);
    const int k = static_cast<int>(unit(random) * max_steps);
    double reference = x;
    for (int step = 0; step < k; ++step) reference = prox.Step(reference, c);
    const double closed = prox.Apply(x, c, k);
    ASSERT_NEAR(closed, reference, 1e-10 * (1 + std::fabs(reference)))
        << "a=" << decay << " theta=" << threshold << " x=" << x << " c=" << c
        << " k=" << k;
    if (reference == 0) {
      ++zeros;
      ASSERT_EQ(closed, 0.0);  // exact zeros: what makes L1 models sparse
    }
    if (k > 0 && (x > 0) != (reference > 0) && reference != 0) ++crossings;
  }
  // The random cases cover the pieces the closed form must join.
  EXPECT_GT(crossings, 100);
  EXPECT_GT(zeros, 100);
}

TEST(LazyProxTest, HandComputedCases) {
  LazyProx prox;
  prox.Reset(0.5, 0.25, 10);
  // From 4 towards c = 0: 4·0.5 − 0.25 = 1.75, then 0.625, then 0.0625,
  // then 0.03125 − 0.25 < 0.25 → 0, and it stays there (|b| = 0 ≤ θ).
  EXPECT_DOUBLE_EQ(prox.Apply(4, 0, 1), 1.75);
  EXPECT_DOUBLE_EQ(prox.Apply(4, 0, 2), 0.625);
  EXPECT_DOUBLE_EQ(prox.Apply(4, 0, 3), 0.0625);
  EXPECT_EQ(prox.Apply(4, 0, 4), 0.0);
  EXPECT_EQ(prox.Apply(4, 0, 10), 0.0);
  // From −1 towards c = 2 (b = 1): 0.5 − 0.25 = 0.25, then 1.125 − 0.25 =
  // 0.875; the fixed point of the positive piece is 2 − 0.5 = 1.5.
  EXPECT_DOUBLE_EQ(prox.Apply(-1, 2, 1), 0.25);
  EXPECT_DOUBLE_EQ(prox.Apply(-1, 2, 2), 0.875);
  EXPECT_NEAR(prox.Apply(-1, 2, 10), 1.5 - 1.25 * std::pow(0.5, 9), 1e-15);
  // θ = 0 is the affine catch-up.
  prox.Reset(0.5, 0, 10);
  EXPECT_DOUBLE_EQ(prox.Apply(4, 2, 3), 0.125 * 4 + 0.875 * 2);
}

}  // namespace
}  // namespace chaintag
