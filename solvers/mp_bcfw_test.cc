// MP-BCFW on small multiclass SVMs (MulticlassProblem), against optima
// computed by hand and a BCFW run certified to a 1e-10 duality gap.

#include "solvers/mp_bcfw.h"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"
#include "solvers/bcfw.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

SolverConfig MpConfig(double lambda) {
  SolverConfig config;
  config.set_name("mp_bcfw");
  config.set_lambda(lambda);
  config.set_max_passes(20000);
  config.set_gap_check(1);
  return config;
}

// One example x = 1, two classes, gold 0 (see bcfw_test.cc): optimum
// a = 1/2, P = λ/4 for λ ≤ 2 and a = 1/λ, P = 1 − 1/λ for λ > 2.
TEST(MpBcfwTest, HandComputedOptimumOfOneExample) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  for (bool averaging : {false, true}) {
    for (double lambda : {0.5, 1.0, 4.0, 10.0}) {
      SolverConfig config = MpConfig(lambda);
      config.set_max_passes(50);
      config.set_gap_tolerance(1e-12);
      config.set_weighted_averaging(averaging);
      std::vector<double> w;
      MpBcfwSolver solver(config);
      absl::StatusOr<TrainingSummary> summary =
          solver.Solve(problem, nullptr, &w);
      ASSERT_TRUE(summary.ok()) << summary.status();
      ASSERT_NO_FATAL_FAILURE(ExpectOneExampleOptimum(lambda, w, *summary));
    }
  }
}

// Checks a run on the random problem against the certified optimum and the
// invariants of its log.
void CheckRun(const MulticlassProblem& problem, const SolverConfig& config,
              double optimum, MpBcfwSolver* solver,
              std::vector<double>* w = nullptr) {
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  std::vector<double> own_w;
  if (w == nullptr) w = &own_w;
  absl::StatusOr<TrainingSummary> summary = solver->Solve(problem, &monitor, w);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason(), "gap_tolerance") << summary->gap();
  EXPECT_NEAR(summary->primal(), optimum, 1e-6 * optimum);
  EXPECT_GE(summary->primal(), optimum - 1e-12);
  // The reported primal is that of the returned w, recomputed here.
  EXPECT_NEAR(0.5 * config.lambda() * SquaredNorm(w->data(), w->size()) +
                  AverageHingeLoss(problem, w->data(), 1),
              summary->primal(), 1e-12);
  EXPECT_LE(solver->max_working_set_size(), config.mp_bcfw().max_planes());
  int approximate = 0;
  for (const PassRecord& record : monitor.records()) {
    EXPECT_LE(record.mean_active_set_size(), config.mp_bcfw().max_planes());
    if (record.approx_passes() > 0) ++approximate;
  }
  ExpectExactGapsAreCertificates(monitor.records());
  if (config.mp_bcfw().max_planes() > 0 &&
      config.mp_bcfw().max_approx_passes() > 0) {
    EXPECT_GT(approximate, 0);
  } else {
    EXPECT_EQ(approximate, 0);
  }
}

TEST(MpBcfwTest, ReachesTheCertifiedOptimum) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  const double lambda = 1.0;
  const double optimum = ReferencePrimal(problem, lambda);
  for (bool averaging : {false, true}) {
    for (SolverConfig::ApproxRule rule :
         {SolverConfig::DETERMINISTIC, SolverConfig::WALL_CLOCK}) {
      // N = 2 < 3 classes makes the working sets overflow.
      for (int planes : {100, 2, 0}) {
        SCOPED_TRACE(testing::Message() << "averaging " << averaging << " rule "
                                        << rule << " planes " << planes);
        SolverConfig config = MpConfig(lambda);
        config.set_gap_tolerance(1e-6 * optimum);
        config.set_weighted_averaging(averaging);
        config.mutable_mp_bcfw()->set_rule(rule);
        config.mutable_mp_bcfw()->set_max_planes(planes);
        MpBcfwSolver solver(config);
        CheckRun(problem, config, optimum, &solver);
        if (rule == SolverConfig::DETERMINISTIC && planes > 0) {
          // The measured oracle cost is a power of two.
          const double r = solver.oracle_cost();
          EXPECT_GT(r, 0);
          EXPECT_EQ(r, std::exp2(std::round(std::log2(r))));
        }
      }
    }
  }
}

TEST(MpBcfwTest, FewPlanesAndShortMemory) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  const double lambda = 1.0;
  const double optimum = ReferencePrimal(problem, lambda);
  SolverConfig config = MpConfig(lambda);
  config.set_gap_tolerance(1e-6 * optimum);
  config.mutable_mp_bcfw()->set_max_planes(2);
  config.mutable_mp_bcfw()->set_inactive_iterations(1);
  config.mutable_mp_bcfw()->set_max_approx_passes(5);
  MpBcfwSolver solver(config);
  CheckRun(problem, config, optimum, &solver);
  EXPECT_EQ(solver.max_working_set_size(), 2);
}

// Blocks whose working set holds their whole state are read from α and
// the planes' inner products; a set too small for the classes loses α to
// evictions and drops, and those blocks read their state. Either way
// w = Σ v_i/(λn), and for the others v_i = Σ α_p ψ_p with the two readings
// of ‖v_i − ψ_i(y_p)‖² agreeing.
TEST(MpBcfwTest, BlocksReadFromAlphaKeepExactBookkeeping) {
  MulticlassProblem problem = RandomMulticlassProblem(30, 4, 6, 7);
  for (int max_planes : {100, 2, -100, -2}) {
    // Negative: the same with offset states (a gold state that is not 0).
    problem.set_offset_states(max_planes < 0);
    max_planes = std::abs(max_planes);
    SolverConfig config = MpConfig(0.05);
    config.set_max_passes(40);
    config.set_gap_tolerance(0);
    config.mutable_mp_bcfw()->set_max_planes(max_planes);
    config.mutable_mp_bcfw()->set_inactive_iterations(max_planes == 2 ? 1
                                                                      : 1000);
    config.mutable_mp_bcfw()->set_oracle_cost(4);
    MpBcfwSolver solver(config);
    MpBcfwInvariants invariants;
    solver.set_invariants_output(&invariants);
    std::vector<double> w;
    ASSERT_TRUE(solver.Solve(problem, nullptr, &w).ok());
    SCOPED_TRACE(max_planes);
    EXPECT_LT(invariants.max_weight_error, 1e-9);
    EXPECT_LT(invariants.max_state_error, 1e-9);
    EXPECT_LT(invariants.max_distance_error, 1e-9);
    EXPECT_LE(invariants.max_alpha_sum, 1 + 1e-12);
    if (max_planes == 100) {
      EXPECT_EQ(invariants.blocks_checked, problem.NumExamples());
    } else {
      EXPECT_LT(invariants.blocks_checked, problem.NumExamples());
    }
  }
}

TEST(MpBcfwTest, SameSeedSameIterates) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  SolverConfig config = MpConfig(0.1);
  config.set_max_passes(7);
  config.set_gap_check(3);
  config.set_seed(11);
  std::vector<double> w1, w2, w3;
  for (std::vector<double>* w : {&w1, &w2}) {
    config.mutable_mp_bcfw()->set_oracle_cost(4);
    MpBcfwSolver solver(config);
    ASSERT_TRUE(solver.Solve(problem, nullptr, w).ok());
  }
  EXPECT_EQ(w1, w2);
  config.set_seed(12);
  config.mutable_mp_bcfw()->set_oracle_cost(4);
  MpBcfwSolver solver(config);
  ASSERT_TRUE(solver.Solve(problem, nullptr, &w3).ok());
  EXPECT_NE(w1, w3);
}

// The point of the method: approximate passes replace oracle calls. On a
// harder instance (λ = 0.1) it certifies a 1e-4 gap with fewer oracle calls
// than BCFW (both pay n calls per gap check).
TEST(MpBcfwTest, FewerOracleCallsThanBcfw) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  SolverConfig config = MpConfig(0.1);
  config.set_gap_tolerance(1e-4);
  config.set_weighted_averaging(false);
  config.mutable_mp_bcfw()->set_oracle_cost(4);
  MpBcfwSolver mp_solver(config);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> mp = mp_solver.Solve(problem, nullptr, &w);
  ASSERT_TRUE(mp.ok()) << mp.status();
  config.set_name("bcfw");
  config.set_sampling(SolverConfig::PERMUTATION);
  absl::StatusOr<TrainingSummary> bcfw =
      BcfwSolver(config).Solve(problem, nullptr, &w);
  ASSERT_TRUE(bcfw.ok()) << bcfw.status();
  EXPECT_EQ(mp->stop_reason(), "gap_tolerance");
  EXPECT_EQ(bcfw->stop_reason(), "gap_tolerance");
  std::printf("oracle calls to a 1e-4 gap: mp_bcfw %lld, bcfw %lld\n",
              static_cast<long long>(mp->oracle_calls()),
              static_cast<long long>(bcfw->oracle_calls()));
  EXPECT_LT(mp->oracle_calls(), bcfw->oracle_calls());
}

TEST(MpBcfwTest, StopsOnTheTimeBudget) {
  const TrainingSummary summary = ExpectStopsOnTheTimeBudget(MpConfig(0.1));
  EXPECT_TRUE(summary.has_gap());  // final_gap
}

TEST(MpBcfwTest, RegisteredAndRejectsBadOptions) {
  SolverConfig config = MpConfig(0.1);
  EXPECT_TRUE(CreateSolver(config).ok());
  config.mutable_mp_bcfw()->set_max_planes(-1);
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  std::vector<double> w;
  EXPECT_FALSE(MpBcfwSolver(config).Solve(problem, nullptr, &w).ok());
}

}  // namespace
}  // namespace chaintag
