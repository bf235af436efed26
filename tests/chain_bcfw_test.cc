// BCFW on chain problems: every exact gap it reports certifies the weights
// it returns, it converges to a tight gap, stops on its time budget, and the
// same seed gives the same weights. A cross-module test (models × solvers).

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_examples_testing.h"
#include "models/chain_problem.h"
#include "solvers/bcfw.h"
#include "solvers/duality_gap.h"

namespace chaintag {
namespace {

using ::chaintag::chain_testing::kBuckets;
using ::chaintag::chain_testing::RandomExamples;

// Every exact gap BCFW reports is a certificate: ≥ 0, equal to primal −
// dual, and the primal is that of the weights it returns.
void ExpectCertified(const ChainProblem& problem, double lambda,
                     const Monitor& monitor, const std::vector<double>& w,
                     const TrainingSummary& summary) {
  int checks = 0;
  for (const PassRecord& record : monitor.records()) {
    if (!record.gap_exact()) continue;
    ++checks;
    EXPECT_GE(record.gap(), -1e-12);
    EXPECT_NEAR(record.primal() - record.dual(), record.gap(), 1e-12);
  }
  EXPECT_GT(checks, 0);
  const double primal = 0.5 * lambda * SquaredNorm(w.data(), w.size()) +
                        AverageHingeLoss(problem, w.data(), 1);
  EXPECT_NEAR(primal, summary.primal(), 1e-12);
}

TEST(ChainProblemBcfwTest, GapReachesOneInAMillion) {
  // Two labels and at most two positions: few corners per block, so BCFW
  // with line search converges fast enough to certify a 1e-6 gap.
  std::mt19937 rng(9);
  const ChainLayout layout{2, kBuckets};
  ChainProblem problem(layout, RandomExamples(10, 2, &rng, 2), true);
  SolverConfig config;
  config.set_lambda(0.1);
  config.set_max_passes(20000);
  config.set_gap_check(5);
  config.set_gap_tolerance(1e-6);
  config.set_weighted_averaging(false);
  BcfwSolver solver(config);
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, &monitor, &w);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
  EXPECT_LE(summary->gap(), 1e-6);
  ExpectCertified(problem, 0.1, monitor, w, *summary);
}

TEST(ChainProblemBcfwTest, AveragedIterateIsCertifiedAndConverges) {
  std::mt19937 rng(9);
  const ChainLayout layout{3, kBuckets};
  ChainProblem problem(layout, RandomExamples(12, 3, &rng), true);
  SolverConfig config;
  config.set_lambda(0.1);
  config.set_max_passes(2000);
  config.set_gap_check(10);
  config.set_gap_tolerance(2e-3);
  config.set_num_threads(2);
  for (auto sampling : {SolverConfig::UNIFORM, SolverConfig::PERMUTATION}) {
    config.set_sampling(sampling);
    BcfwSolver solver(config);
    Monitor monitor;
    monitor.set_progress_stream(getenv("VERBOSE") ? stderr : nullptr);
    std::vector<double> w;
    absl::StatusOr<TrainingSummary> summary =
        solver.Solve(problem, &monitor, &w);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
    EXPECT_LE(summary->gap(), 2e-3);
    ExpectCertified(problem, 0.1, monitor, w, *summary);
  }
}

TEST(ChainProblemBcfwTest, StopsOnTheTimeBudget) {
  std::mt19937 rng(4);
  const ChainLayout layout{3, kBuckets};
  ChainProblem problem(layout, RandomExamples(12, 3, &rng), true);
  SolverConfig config;
  config.set_max_passes(1000000);
  config.set_max_seconds(1e-9);
  BcfwSolver solver(config);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, nullptr, &w);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason(), "max_seconds");
  EXPECT_EQ(summary->passes(), 1);
  EXPECT_GE(summary->gap(), 0);  // the early stop is still certified
  EXPECT_EQ(w.size(), static_cast<size_t>(layout.dim()));
}

TEST(ChainProblemBcfwTest, SameSeedSameResult) {
  std::mt19937 rng(4);
  const ChainLayout layout{3, kBuckets};
  ChainProblem problem(layout, RandomExamples(12, 3, &rng), true);
  SolverConfig config;
  config.set_lambda(0.05);
  config.set_max_passes(30);
  config.set_seed(17);
  std::vector<double> first, second;
  for (std::vector<double>* w : {&first, &second}) {
    BcfwSolver solver(config);
    ASSERT_TRUE(solver.Solve(problem, nullptr, w).ok());
  }
  EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace chaintag
