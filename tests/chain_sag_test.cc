// sag on chain problems: the model does not depend on the thread count,
// also where the slices of w its threads own split the transitions' range
// (small problems on many threads), with every label and with each
// attribute's seen labels. A cross-module test (models × solvers).

#include <memory>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "models/chain_examples_testing.h"
#include "models/chain_problem.h"
#include "solvers/registry.h"

namespace chaintag {
namespace {

using ::chaintag::chain_testing::kBuckets;
using ::chaintag::chain_testing::RandomExamples;

std::vector<double> RunSag(const ChainProblem& problem, int threads) {
  SolverConfig config;
  config.set_name("sag");
  config.set_objective(SolverConfig::LOG_SUM_EXP);
  config.set_lambda(0.05);
  config.set_l1(0.001);
  config.set_max_passes(4);
  config.set_gap_check(1);  // every pass refreshes the stored gradients
  config.set_gap_tolerance(0);
  config.set_minibatch(4);
  config.set_seed(3);
  config.set_num_threads(threads);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  EXPECT_TRUE(solver.ok()) << solver.status();
  std::vector<double> w;
  if (!solver.ok()) return w;
  const absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, nullptr, &w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  return w;
}

// With 8 labels the transitions and biases (80 coordinates) are most of
// w (128), so slices of it for 5 or 16 threads cut through them; each
// thread count, run three times, gives the one-thread w to the bit.
TEST(ChainProblemSagTest, TheThreadCountChangesNothing) {
  constexpr int kLabels = 8;
  for (bool seen_labels : {false, true}) {
    SCOPED_TRACE(testing::Message() << "seen labels " << seen_labels);
    std::mt19937 rng(9);
    ChainProblem problem(ChainLayout{kLabels, kBuckets},
                         RandomExamples(30, kLabels, &rng), true);
    if (seen_labels) {
      ASSERT_TRUE(problem.RestrictEmissionsToObservedLabels().ok());
      ASSERT_TRUE(problem.FreeCoordinates(nullptr));
    }
    const std::vector<double> one = RunSag(problem, 1);
    ASSERT_EQ(static_cast<int64_t>(one.size()), problem.num_free_coordinates());
    for (int threads : {5, 16}) {
      for (int run = 0; run < 3; ++run) {
        EXPECT_EQ(RunSag(problem, threads), one)
            << threads << " threads, run " << run;
      }
    }
  }
}

}  // namespace
}  // namespace chaintag
