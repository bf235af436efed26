// BCFW on chain problems: every exact gap it reports certifies the weights
// it returns, it converges to a tight gap, stops on its time budget, the
// same seed gives the same weights, and so does any thread count. A
// cross-module test (models × solvers).

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_examples_testing.h"
#include "models/chain_problem.h"
#include "pipeline/training_problem.h"
#include "solvers/bcfw.h"
#include "solvers/duality_gap.h"
#include "solvers/registry.h"

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

// With 8 labels the transitions and biases (80 coordinates) are most of w
// (128): the slices that form the weighted average on 5 or 16 threads cut
// through them, and the returned average is the one-thread run's, run after
// run.
TEST(ChainProblemBcfwTest, TheThreadCountChangesNothing) {
  constexpr int kLabels = 8;
  std::mt19937 rng(5);
  ChainProblem problem(ChainLayout{kLabels, kBuckets},
                       RandomExamples(30, kLabels, &rng), true);
  SolverConfig config;
  config.set_lambda(0.05);
  config.set_max_passes(6);
  config.set_gap_check(2);
  config.set_seed(17);
  config.set_weighted_averaging(true);
  auto solve = [&](int threads) {
    config.set_num_threads(threads);
    BcfwSolver solver(config);
    std::vector<double> w;
    EXPECT_TRUE(solver.Solve(problem, nullptr, &w).ok());
    return w;
  };
  const std::vector<double> one = solve(1);
  ASSERT_EQ(static_cast<int64_t>(one.size()), problem.Dim());
  for (int threads : {5, 16}) {
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(solve(threads), one) << threads << " threads, run " << run;
    }
  }
}

// Second order (trigrams and pair features, unconstrained labels): BCFW with
// pairwise steps, the fully corrective solver and batch FW certify their
// gaps and agree on the optimum within them.
TEST(ChainProblemBcfwTest, SecondOrderSolversAgreeOnTheOptimum) {
  std::mt19937 rng(13);
  std::vector<ChainExample> examples = RandomExamples(12, 3, &rng, 4);
  for (ChainExample& example : examples) {
    // The label features' buckets, shifted by one position, as pair
    // features.
    FeatureSequence& z = example.pair_features;
    z.offsets = {0, 0};
    const FeatureSequence& f = example.features;
    for (int t = 1; t < f.size(); ++t) {
      for (int k = f.offsets[t - 1]; k < f.offsets[t]; ++k) {
        z.buckets.push_back(f.buckets[k]);
      }
      z.offsets.push_back(static_cast<int32_t>(z.buckets.size()));
    }
  }
  LabelSet labels;
  for (const char* name : {"a", "b", "c"}) labels.Add(name);
  ModelConfig model;
  model.set_order(2);
  model.set_train_scheme(NONE);
  absl::StatusOr<TrainingProblem> training = MakeTrainingProblem(
      model, SolverConfig(), labels, kBuckets, examples, nullptr, 2);
  ASSERT_TRUE(training.ok()) << training.status();
  const ChainProblem& problem = *training->problem;
  ASSERT_GT(problem.layout().num_pairs, 0);
  ASSERT_GT(problem.layout().num_trigrams, 0);
  std::vector<double> primals, gaps;
  for (const char* name : {"bcfw", "active_set_bcfw", "fw"}) {
    SCOPED_TRACE(name);
    SolverConfig config;
    config.set_name(name);
    config.set_lambda(0.05);
    config.set_max_passes(20000);
    config.set_gap_check(5);
    config.set_gap_tolerance(1e-7);
    config.set_weighted_averaging(false);
    config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
    absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
    ASSERT_TRUE(solver.ok());
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    absl::StatusOr<TrainingSummary> summary =
        (*solver)->Solve(problem, &monitor, &w);
    ASSERT_TRUE(summary.ok()) << summary.status();
    ExpectCertified(problem, 0.05, monitor, w, *summary);
    primals.push_back(summary->primal());
    gaps.push_back(summary->gap());
  }
  for (size_t k = 1; k < primals.size(); ++k) {
    EXPECT_NEAR(primals[k], primals[0], gaps[k] + gaps[0] + 1e-12);
  }
  EXPECT_LE(gaps[0], 1e-7);
}

}  // namespace
}  // namespace chaintag
