// BCFW on small multiclass SVMs (MulticlassProblem), checked against optima
// computed by hand.

#include "solvers/bcfw.h"

#include <cmath>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

TrainingSummary Solve(const Problem& problem, SolverConfig config,
                      std::vector<double>* w) {
  BcfwSolver solver(config);
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, nullptr, w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  return summary.ok() ? *summary : TrainingSummary();
}

// One example x = 1, two classes, gold 0: with w = a·(1, -1),
// P(a) = λa² + max(0, 1 − 2a). For λ ≤ 2 the optimum is a = 1/2, P = λ/4;
// for λ > 2 it is a = 1/λ, P = 1 − 1/λ.
TEST(BcfwTest, HandComputedOptimumOfOneExample) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  for (bool averaging : {false, true}) {
    for (double lambda : {0.5, 1.0, 4.0, 10.0}) {
      SolverConfig config;
      config.set_lambda(lambda);
      config.set_max_passes(50);
      config.set_gap_check(1);
      config.set_gap_tolerance(1e-12);
      config.set_weighted_averaging(averaging);
      std::vector<double> w;
      const TrainingSummary summary = Solve(problem, config, &w);
      ASSERT_NO_FATAL_FAILURE(ExpectOneExampleOptimum(lambda, w, summary));
    }
  }
}

// The heuristic stop (stale estimates, no exact pass) hands the monitor the
// returned point to evaluate, as any final pass does; it used to hand an
// empty one.
TEST(BcfwTest, HeuristicStopEvaluatesTheReturnedPoint) {
  MulticlassProblem problem({{1.0}, {1.0}, {-1.0}}, {0, 0, 1}, 2);
  SolverConfig config;
  config.set_lambda(1.0);
  config.set_sampling(SolverConfig::GAP);
  config.set_weighted_averaging(false);
  config.set_exact_gap_when_converged(false);
  config.set_gap_tolerance(0.5);
  config.set_gap_check(1000);
  config.set_max_passes(100);
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  std::vector<double> evaluated;
  monitor.SetEvaluator("first_weight", 1000, [&](absl::Span<const double> w) {
    evaluated.assign(w.begin(), w.end());
    return absl::StatusOr<double>(w.empty() ? 0.0 : w[0]);
  });
  BcfwSolver solver(config);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, &monitor, &w);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason(), "gap_estimate");
  EXPECT_LT(summary->passes(), 100);
  EXPECT_EQ(evaluated, w);
  ASSERT_FALSE(monitor.records().empty());
  EXPECT_DOUBLE_EQ(monitor.records().back().eval_score(), w[0]);
}

// With gap sampling, the block-gap estimates trigger the exact check under
// the relative rule too (no gap_check pass is due): the run stops on an
// exact gap within 5% of the primal long before the cap.
TEST(BcfwTest, EstimatesTriggerTheRelativeStop) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  SolverConfig config;
  config.set_lambda(0.1);
  config.set_sampling(SolverConfig::GAP);
  config.set_weighted_averaging(false);
  config.set_gap_tolerance(0);
  config.set_relative_gap_tolerance(0.05);
  config.set_gap_check(100000);
  config.set_final_gap(false);
  config.set_max_passes(5000);
  std::vector<double> w;
  const TrainingSummary summary = Solve(problem, config, &w);
  EXPECT_EQ(summary.stop_reason(), "relative_gap_tolerance");
  EXPECT_LT(summary.passes(), 5000);
  ASSERT_TRUE(summary.has_gap());
  EXPECT_LE(summary.gap(), 0.05 * summary.primal());
  EXPECT_GT(summary.gap(), 0);
}

// The default λ is 1/n and the same optimum for duplicated examples.
TEST(BcfwTest, DuplicatedExamplesAndDefaultLambda) {
  MulticlassProblem problem({{1.0}, {1.0}}, {0, 0}, 2);
  SolverConfig config;  // λ = 1/n = 0.5
  config.set_max_passes(200);
  config.set_gap_check(1);
  config.set_gap_tolerance(1e-12);
  config.set_weighted_averaging(false);
  std::vector<double> w;
  const TrainingSummary summary = Solve(problem, config, &w);
  EXPECT_DOUBLE_EQ(summary.lambda(), 0.5);
  EXPECT_NEAR(w[0], 0.5, 1e-9);
  EXPECT_NEAR(summary.primal(), 0.125, 1e-9);
}

TEST(BcfwTest, RandomMulticlassIsCertified) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  for (bool averaging : {false, true}) {
    SolverConfig config;
    config.set_lambda(0.1);
    config.set_max_passes(2000);
    config.set_gap_check(5);
    config.set_gap_tolerance(1e-3);
    config.set_weighted_averaging(averaging);
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    BcfwSolver solver(config);
    absl::StatusOr<TrainingSummary> summary =
        solver.Solve(problem, &monitor, &w);
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(summary->stop_reason(), "gap_tolerance")
        << "averaging " << averaging << ", gap " << summary->gap();
    // The reported primal is that of the returned w, recomputed here.
    EXPECT_NEAR(0.5 * 0.1 * SquaredNorm(w.data(), w.size()) +
                    AverageHingeLoss(problem, w.data(), 1),
                summary->primal(), 1e-12);
    double previous_dual = -1e300;
    for (const PassRecord& record : monitor.records()) {
      if (!averaging) {
        // Line search never decreases the dual of the iterate itself.
        EXPECT_GE(record.dual(), previous_dual - 1e-12);
        previous_dual = record.dual();
      }
    }
    ExpectExactGapsAreCertificates(monitor.records());
  }
}

// Records the w of every oracle call: BCFW without a cache calls the oracle
// once per step, at the iterate before the step.
class RecordingProblem : public MulticlassProblem {
 public:
  explicit RecordingProblem(MulticlassProblem base)
      : MulticlassProblem(std::move(base)) {}

  void MaxOracleWithStateDot(int i, const double* w, const double* state,
                             OracleResult* result) const override {
    iterates_.emplace_back(w, w + Dim());
    MulticlassProblem::MaxOracleWithStateDot(i, w, state, result);
  }
  void ScoreCornersAndMaxOracle(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores,
                                OracleResult* result) const override {
    iterates_.emplace_back(w, w + Dim());
    double state_dot = 0;
    ScoreCorners(i, w, state, corners, count, scores, &state_dot);
    MulticlassProblem::MaxOracleWithStateDot(i, w, state, result);
  }
  const std::vector<std::vector<double>>& iterates() const { return iterates_; }

 private:
  mutable std::vector<std::vector<double>> iterates_;
};

// The per-block lazy average equals the definition
// w̄_K = Σ_{s≤K} s·w_s / Σ_{s≤K} s over every iterate w_s of a run.
TEST(BcfwTest, WeightedAverageMatchesTheIterateRecursion) {
  for (SolverConfig::Step step : {SolverConfig::FW, SolverConfig::PAIRWISE}) {
    RecordingProblem problem(RandomMulticlassProblem(6, 4, 3, 5));
    SolverConfig config;
    config.set_lambda(0.05);
    config.set_max_passes(9);
    config.set_gap_check(1 << 30);
    config.set_final_gap(false);
    // No exact gap pass (its oracle calls would be recorded too).
    config.set_gap_tolerance(0);
    config.mutable_bcfw()->set_step(step);
    config.set_sampling(step == SolverConfig::FW ? SolverConfig::UNIFORM
                                                 : SolverConfig::GAP);
    config.set_seed(11);
    config.set_weighted_averaging(false);
    std::vector<double> last;
    Solve(problem, config, &last);
    std::vector<std::vector<double>> iterates = problem.iterates();
    ASSERT_EQ(iterates.size(), 9u * 6u);
    // iterates[s] is w_s, the iterate before step s + 1; w_K is returned.
    iterates.push_back(last);
    std::vector<double> expected(problem.Dim(), 0.0);
    double total = 0;
    for (size_t s = 1; s < iterates.size(); ++s) {
      for (int64_t j = 0; j < problem.Dim(); ++j) {
        expected[j] += static_cast<double>(s) * iterates[s][j];
      }
      total += static_cast<double>(s);
    }
    config.set_weighted_averaging(true);
    std::vector<double> average;
    Solve(problem, config, &average);
    ASSERT_EQ(average.size(), expected.size());
    for (int64_t j = 0; j < problem.Dim(); ++j) {
      EXPECT_NEAR(average[j], expected[j] / total, 1e-12)
          << "step " << step << ", coordinate " << j;
    }
  }
}

// Forming w̄ (for an evaluation after every pass) reads the blocks' sums and
// writes nothing of the run: the same w̄ to the bit as a run that forms it
// only at the end. (Folding the held weights into the sums at each read
// rounded them differently from folding them at the blocks' next moves.)
TEST(BcfwTest, ReadingTheAverageChangesNothingOfTheRun) {
  const MulticlassProblem problem = RandomMulticlassProblem(12, 5, 4, 7);
  SolverConfig config;
  config.set_lambda(0.01);
  config.set_max_passes(12);
  config.set_gap_check(1 << 30);
  config.set_final_gap(false);
  config.set_gap_tolerance(0);
  config.set_sampling(SolverConfig::UNIFORM);
  config.set_seed(5);
  config.set_weighted_averaging(true);
  std::vector<double> read_at_the_end;
  Solve(problem, config, &read_at_the_end);

  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  int reads = 0;
  monitor.SetEvaluator("reads", 1, [&](absl::Span<const double> w) {
    ++reads;
    return absl::StatusOr<double>(w[0]);
  });
  BcfwSolver solver(config);
  std::vector<double> read_every_pass;
  ASSERT_TRUE(solver.Solve(problem, &monitor, &read_every_pass).ok());
  EXPECT_EQ(reads, 12);
  ASSERT_EQ(read_every_pass.size(), read_at_the_end.size());
  for (size_t j = 0; j < read_at_the_end.size(); ++j) {
    EXPECT_EQ(read_every_pass[j], read_at_the_end[j]) << "coordinate " << j;
  }
}

TEST(BcfwTest, RejectsBadConfigs) {
  SolverConfig config;
  config.set_lambda(-1);
  EXPECT_FALSE(CreateSolver(config).ok());
  config = SolverConfig();
  config.set_max_passes(0);
  EXPECT_FALSE(CreateSolver(config).ok());
  config = SolverConfig();
  config.set_name("nope");
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  ASSERT_FALSE(solver.ok());
  EXPECT_NE(solver.status().message().find("nope"), std::string::npos);
  EXPECT_TRUE(CreateSolver(SolverConfig()).ok());
}

}  // namespace
}  // namespace chaintag
