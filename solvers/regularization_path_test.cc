// The regularization path on small multiclass SVMs: every breakpoint's
// solution must have an independently recomputed duality gap ≤ ε at both
// ends of its segment and inside it; the warm start must turn exact gaps at
// λ into exact gaps at ρλ; grid search must certify every λ of its grid.

#include "solvers/regularization_path.h"

#include <cmath>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "solvers/bcfw_run.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

SolverConfig PathConfig(const std::string& name, SolverConfig::Step step,
                        bool cache, RegularizationPathConfig::Mode mode) {
  SolverConfig config;
  config.set_name(name);
  config.mutable_bcfw()->set_step(step);
  config.mutable_bcfw()->set_cache(cache);
  config.set_sampling(SolverConfig::GAP);
  config.set_num_threads(1);
  config.set_max_passes(5000);
  config.mutable_path()->set_mode(mode);
  config.mutable_path()->set_epsilon(0.05);
  config.mutable_path()->set_lambda_min(1e-4);
  return config;
}

struct Stored {
  PathPoint point;
  std::vector<double> w;
};

std::vector<Stored> RunAndStore(const Problem& problem,
                                const SolverConfig& config) {
  std::vector<Stored> stored;
  absl::StatusOr<std::vector<PathPoint>> points = RunRegularizationPath(
      problem, config,
      [&](const PathPoint& point, const std::vector<double>& w) {
        stored.push_back({point, w});
        return absl::OkStatus();
      });
  EXPECT_TRUE(points.ok()) << points.status();
  if (points.ok()) EXPECT_EQ(points->size(), stored.size());
  return stored;
}

// What makes a path ε-approximate: at both ends and 3 interior points of
// each segment, the gap recomputed by an oracle pass is at most ε.
void ExpectCertifiedSegments(const Problem& problem,
                             const std::vector<Stored>& stored,
                             double epsilon) {
  ASSERT_GE(stored.size(), 3u);
  for (size_t j = 0; j < stored.size(); ++j) {
    const PathPoint& point = stored[j].point;
    if (j > 0) {
      EXPECT_LT(point.lambda, stored[j - 1].point.lambda);
      // Breakpoint J+1 is where segment J ends.
      EXPECT_DOUBLE_EQ(point.lambda, stored[j - 1].point.lambda_end);
    }
    const double high = point.lambda;
    // The last segment extends to λ → 0; check down to 1e-6·λ_J.
    const double low =
        point.lambda_end > 0 ? point.lambda_end : 1e-6 * point.lambda;
    for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      const double lambda = high + t * (low - high);
      const DualityGap gap =
          GapOnSegment(problem, point, stored[j].w, lambda, 1);
      EXPECT_LE(gap.gap, epsilon * (1 + 1e-9))
          << "breakpoint " << j << " at λ = " << lambda << " (segment [" << low
          << ", " << high << "])";
      EXPECT_GE(gap.gap, -1e-9);
    }
  }
}

TEST(RegularizationPathTest, EpsilonApproximatePathIsCertifiedOnSegments) {
  const MulticlassProblem problem = RandomMulticlassProblem(25, 4, 3, 7);
  for (auto [name, step, cache] :
       {std::tuple{"bcfw", SolverConfig::FW, false},
        std::tuple{"bcfw", SolverConfig::PAIRWISE, true},
        std::tuple{"bcfw", SolverConfig::AWAY, false},
        std::tuple{"active_set_bcfw", SolverConfig::FW, false}}) {
    SCOPED_TRACE(std::string(name) + " step " + std::to_string(step));
    const SolverConfig config = PathConfig(
        name, step, cache, RegularizationPathConfig::EPSILON_APPROXIMATE);
    const std::vector<Stored> stored = RunAndStore(problem, config);
    ExpectCertifiedSegments(problem, stored, 0.05);
    for (size_t j = 1; j < stored.size(); ++j) {
      // Inner solves end on an exact gap at κε.
      EXPECT_TRUE(stored[j].point.gap_exact);
      EXPECT_LE(stored[j].point.gap, 0.9 * 0.05 + 1e-12);
    }
    // λ∞ is where the initial point's gap bound is exactly κε.
    const DualityGap at_infinity = GapOnSegment(
        problem, stored[0].point, stored[0].w, stored[0].point.lambda, 1);
    EXPECT_LE(at_infinity.gap, 0.9 * 0.05 * (1 + 1e-9));
    EXPECT_NEAR(stored[0].point.gap, 0.9 * 0.05, 1e-12);
    // Either it reached λ_min or its last w is ε-approximate below.
    const PathPoint& last = stored.back().point;
    EXPECT_TRUE(last.lambda_end == 0 || last.lambda_end < 1e-4);
  }
}

TEST(RegularizationPathTest, PathFromLambdaMaxIsCertifiedOnSegments) {
  const MulticlassProblem problem = RandomMulticlassProblem(25, 4, 3, 7);
  SolverConfig config =
      PathConfig("bcfw", SolverConfig::PAIRWISE, false,
                 RegularizationPathConfig::EPSILON_APPROXIMATE);
  config.mutable_path()->set_lambda_max(0.5);
  const std::vector<Stored> stored = RunAndStore(problem, config);
  ASSERT_FALSE(stored.empty());
  EXPECT_DOUBLE_EQ(stored[0].point.lambda, 0.5);
  EXPECT_TRUE(stored[0].point.gap_exact);
  EXPECT_LE(stored[0].point.gap, 0.9 * 0.05 + 1e-12);
  ExpectCertifiedSegments(problem, stored, 0.05);
}

TEST(RegularizationPathTest, WarmStartTurnsExactGapsIntoExactGaps) {
  // After an exact gap pass at λ, g_i + (1 − ρ)Δ_i must be the exact block
  // gap at ρλ with the same w and the rescaled dual.
  const MulticlassProblem problem = RandomMulticlassProblem(15, 4, 3, 3);
  for (auto [name, step, cache] :
       {std::tuple{"bcfw", SolverConfig::FW, false},
        std::tuple{"bcfw", SolverConfig::PAIRWISE, true},
        std::tuple{"active_set_bcfw", SolverConfig::FW, false}}) {
    SCOPED_TRACE(name);
    SolverConfig config;
    config.set_name(name);
    config.mutable_bcfw()->set_step(step);
    config.mutable_bcfw()->set_cache(cache);
    config.set_weighted_averaging(false);
    config.set_lambda(0.3);
    config.set_max_passes(7);
    config.set_gap_check(1000);  // the final pass's exact gaps only
    config.set_num_threads(1);
    BcfwRun run(config, problem);
    ASSERT_TRUE(run.Validate().ok());
    run.Initialize();
    run.set_refresh_block_gaps();
    ASSERT_TRUE(run.Run(nullptr).ok());
    ASSERT_TRUE(run.block_gaps_exact());
    std::vector<double> deltas;
    const double delta_sum = run.BlockDeltas(&deltas, false);
    double sum = 0;
    for (double d : deltas) sum += d;
    EXPECT_NEAR(delta_sum, sum, 1e-12);
    const std::vector<double> w_before = run.ReturnedPoint();
    const double rho = 0.37;
    run.ScaleLambda(rho, deltas, /*gaps_exact=*/true);
    EXPECT_DOUBLE_EQ(run.lambda(), 0.3 * rho);
    // w is kept.
    const std::vector<double>& w_after = run.ReturnedPoint();
    for (size_t k = 0; k < w_before.size(); ++k) {
      EXPECT_NEAR(w_after[k], w_before[k], 1e-14);
    }
    // The dual bookkeeping stays consistent (α sums, states, ℓ_i).
    BcfwInvariants invariants;
    run.CheckInvariants(&invariants);
    EXPECT_LT(invariants.max_alpha_sum_error, 1e-12);
    EXPECT_GE(invariants.min_alpha, 0);
    EXPECT_LT(invariants.max_weight_error, 1e-12);
    EXPECT_LT(invariants.max_state_error, 1e-12);
    EXPECT_LT(invariants.max_ell_error, 1e-14);
    // Exact block gaps at the new λ, from scratch: one oracle per block.
    const int n = problem.NumExamples();
    double total = 0;
    for (int i = 0; i < n; ++i) {
      OracleResult oracle;
      problem.MaxOracle(i, w_after.data(), &oracle);
      total += (oracle.loss - oracle.score) / n;
    }
    const DualityGap direct =
        ComputeDualityGap(problem, w_after.data(), run.ell(), run.lambda(), 1);
    EXPECT_NEAR(run.GapEstimate(), direct.gap, 1e-12);
    EXPECT_NEAR(
        direct.primal,
        0.5 * run.lambda() * SquaredNorm(w_after.data(), w_after.size()) +
            total,
        1e-12);
  }
}

TEST(RegularizationPathTest, HeuristicPathDescendsWithoutExactPasses) {
  const MulticlassProblem problem = RandomMulticlassProblem(25, 4, 3, 7);
  const SolverConfig config = PathConfig("bcfw", SolverConfig::PAIRWISE, true,
                                         RegularizationPathConfig::HEURISTIC);
  const std::vector<Stored> stored = RunAndStore(problem, config);
  ASSERT_GE(stored.size(), 3u);
  for (size_t j = 1; j < stored.size(); ++j) {
    EXPECT_LT(stored[j].point.lambda, stored[j - 1].point.lambda);
    EXPECT_FALSE(stored[j].point.gap_exact);
    // The estimate is what stopped it: 80% of κε with κ = 0.7.
    EXPECT_LE(stored[j].point.gap, 0.8 * 0.7 * 0.05 + 1e-12);
    EXPECT_EQ(stored[j].point.stop_reason, "gap_estimate");
  }
}

TEST(RegularizationPathTest, GridSearchCertifiesEveryLambda) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 5);
  SolverConfig config;
  config.set_name("bcfw");
  config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  config.set_sampling(SolverConfig::GAP);
  config.set_gap_tolerance(0.01);
  config.set_max_passes(5000);
  config.set_num_threads(1);
  const std::vector<double> lambdas = PowersOfTwo(3, -6);
  ASSERT_EQ(lambdas.size(), 10u);
  EXPECT_DOUBLE_EQ(lambdas.front(), 8);
  EXPECT_DOUBLE_EQ(lambdas.back(), 1.0 / 64);
  std::vector<double> cold_primal, warm_primal;
  double cold_passes = 0, warm_passes = 0;
  for (bool warm : {false, true}) {
    std::vector<double>& primal = warm ? warm_primal : cold_primal;
    absl::StatusOr<std::vector<PathPoint>> points = RunGridSearch(
        problem, config, lambdas, warm,
        [&](const PathPoint& point, const std::vector<double>& w) {
          const DualityGap gap =
              ComputeDualityGap(problem, w.data(), point.ell, point.lambda, 1);
          EXPECT_LE(gap.gap, 0.01 + 1e-12) << "λ = " << point.lambda;
          EXPECT_NEAR(gap.gap, point.gap, 1e-12);
          primal.push_back(gap.primal);
          return absl::OkStatus();
        });
    ASSERT_TRUE(points.ok()) << points.status();
    ASSERT_EQ(points->size(), lambdas.size());
    (warm ? warm_passes : cold_passes) = points->back().cumulative_passes;
  }
  // Both reach the same optima within the tolerance.
  for (size_t k = 0; k < lambdas.size(); ++k) {
    EXPECT_NEAR(cold_primal[k], warm_primal[k], 0.01 + 1e-12);
  }
  EXPECT_LT(warm_passes, cold_passes);
}

// A problem whose loss at the gold labeling is not zero.
class GoldLossProblem : public MulticlassProblem {
 public:
  explicit GoldLossProblem(MulticlassProblem base)
      : MulticlassProblem(std::move(base)) {}
  double Loss(int i, const Corner& y) const override {
    return MulticlassProblem::Loss(i, y) + 0.5;
  }
};

TEST(RegularizationPathTest,
     RejectsNonzeroGoldLossOtherSolversAndSmoothLosses) {
  const GoldLossProblem bad(RandomMulticlassProblem(5, 2, 3, 1));
  SolverConfig config;
  config.set_name("bcfw");
  absl::StatusOr<std::vector<PathPoint>> points =
      RunRegularizationPath(bad, config, nullptr);
  ASSERT_FALSE(points.ok());
  EXPECT_NE(points.status().message().find("L_i(y_i) = 0"), std::string::npos)
      << points.status();

  const MulticlassProblem good = RandomMulticlassProblem(5, 2, 3, 1);
  config.set_name("ssg");
  points = RunRegularizationPath(good, config, nullptr);
  ASSERT_FALSE(points.ok());
  EXPECT_NE(points.status().message().find("ssg"), std::string::npos);

  // A smooth loss has no path here: the refusal says to give a λ.
  config.set_name("sag");
  config.set_objective(SolverConfig::LOG_SUM_EXP);
  points = RunRegularizationPath(good, config, nullptr);
  ASSERT_FALSE(points.ok());
  EXPECT_NE(points.status().message().find("give a lambda"), std::string::npos)
      << points.status();
}

// max_seconds bounds the whole path: past it no breakpoint is solved, and
// the last point delivered says why the path ends there.
TEST(RegularizationPathTest, MaxSecondsEndsThePath) {
  const MulticlassProblem problem = RandomMulticlassProblem(40, 4, 6, 3);
  SolverConfig config =
      PathConfig("bcfw", SolverConfig::FW, false,
                 RegularizationPathConfig::EPSILON_APPROXIMATE);
  const std::vector<Stored> whole = RunAndStore(problem, config);
  ASSERT_GE(whole.size(), 3u);
  config.set_max_seconds(1e-9);
  const std::vector<Stored> cut = RunAndStore(problem, config);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_NE(cut[0].point.stop_reason.find("the path's max_seconds"),
            std::string::npos)
      << cut[0].point.stop_reason;
}

// κ, lambda_min and lambda_max take 0 for their defaults; a negative value
// or lambda_min above lambda_max is refused by name, not taken as the
// default.
TEST(RegularizationPathTest, RefusesNegativeSettingsAndAnEmptyRange) {
  const MulticlassProblem problem = RandomMulticlassProblem(5, 2, 3, 1);
  auto refused = [&](const SolverConfig& config) {
    absl::StatusOr<std::vector<PathPoint>> points =
        RunRegularizationPath(problem, config, nullptr);
    return points.ok() ? std::string() : std::string(points.status().message());
  };
  const SolverConfig good =
      PathConfig("bcfw", SolverConfig::FW, false,
                 RegularizationPathConfig::EPSILON_APPROXIMATE);
  SolverConfig config = good;
  config.mutable_path()->set_kappa(-1);
  EXPECT_NE(refused(config).find("must not be negative"), std::string::npos);
  config = good;
  config.mutable_path()->set_lambda_min(-1);
  EXPECT_NE(refused(config).find("must not be negative"), std::string::npos);
  config = good;
  config.mutable_path()->set_lambda_max(-1);
  EXPECT_NE(refused(config).find("must not be negative"), std::string::npos);
  config = good;
  config.mutable_path()->set_lambda_min(1);
  config.mutable_path()->set_lambda_max(0.1);
  EXPECT_NE(refused(config).find("lambda_min (1) is above lambda_max (0.1)"),
            std::string::npos);
  EXPECT_EQ(refused(good), "");
}

}  // namespace
}  // namespace chaintag
