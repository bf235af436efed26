// The lbfgs solver on small multiclass problems: L-BFGS and OWL-QN reach
// the enumerated objective's optimum (the ISTA reference and sag's),
// every pass is certified with a dual below the optimum, the iterates do
// not depend on the thread count, and bad configs are refused.

#include "solvers/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/problem.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

constexpr double kLambda = 0.1;

SolverConfig LbfgsConfig(double l1) {
  SolverConfig config;
  config.set_name("lbfgs");
  config.set_objective(SolverConfig::LOG_SUM_EXP);
  config.set_lambda(kLambda);
  config.set_l1(l1);
  config.set_max_passes(500);
  config.set_gap_tolerance(1e-12);
  config.set_num_threads(1);
  // CRFsuite's own tests off: the tests below stop on the certificate.
  config.mutable_lbfgs()->set_delta(0);
  config.mutable_lbfgs()->set_epsilon(0);
  return config;
}

TrainingSummary RunLbfgs(const Problem& problem, const SolverConfig& config,
                         std::vector<double>* w,
                         std::vector<PassRecord>* records = nullptr) {
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  EXPECT_TRUE(solver.ok()) << solver.status();
  if (!solver.ok()) return TrainingSummary();
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, &monitor, w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (records != nullptr) *records = monitor.records();
  return summary.ok() ? *summary : TrainingSummary();
}

// L-BFGS (ℓ1 = 0) and OWL-QN (ℓ1 > 0) stop on a 1e-12 gap at the optimum
// that ISTA on the enumerated objective finds, with its exact zeros, and
// at the point sag reaches; without ℓ1 the dual is the independent
// smoothed duality gap's.
TEST(LbfgsSolverTest, ReachesTheCertifiedOptimum) {
  const MulticlassProblem problem = SparseMulticlassProblem(20, 6, 3, 8);
  for (double l1 : {0.0, 0.03}) {
    const std::vector<double> optimum = ElasticNetOptimum(problem, kLambda, l1);
    for (int memories : {1, 6}) {
      SCOPED_TRACE(testing::Message()
                   << "l1 " << l1 << " memories " << memories);
      SolverConfig config = LbfgsConfig(l1);
      config.mutable_lbfgs()->set_num_memories(memories);
      std::vector<double> w;
      const TrainingSummary summary = RunLbfgs(problem, config, &w);
      EXPECT_EQ(summary.stop_reason(), "gap_tolerance");
      EXPECT_GE(summary.gap(), -1e-12);
      EXPECT_LE(summary.gap(), 1e-12);
      EXPECT_NEAR(summary.primal(),
                  ElasticNetObjective(problem, w, kLambda, l1), 1e-12);
      ASSERT_EQ(w.size(), optimum.size());
      for (size_t j = 0; j < w.size(); ++j) {
        // λ-strong convexity: ‖w − w*‖² ≤ 2·gap/λ.
        EXPECT_NEAR(w[j], optimum[j], 1e-5) << j;
        if (l1 > 0 && optimum[j] == 0) {
          EXPECT_EQ(w[j], 0.0) << j;
        }
      }
      EXPECT_NEAR(summary.primal(),
                  ElasticNetObjective(problem, optimum, kLambda, l1), 1e-10);
      SolverConfig sag = config;
      sag.set_name("sag");
      sag.mutable_sag()->set_learning_rate(0.05);
      sag.set_gap_check(5);
      sag.set_max_passes(3000);
      std::vector<double> sag_w;
      const TrainingSummary sag_summary = RunLbfgs(problem, sag, &sag_w);
      EXPECT_NEAR(summary.primal(), sag_summary.primal(), 1e-11);
      for (size_t j = 0; j < w.size(); ++j) {
        EXPECT_NEAR(w[j], sag_w[j], 1e-5) << j;
      }
      if (l1 == 0) {
        const Smoothing entropy{Smoothing::Kind::kEntropy, 1.0, 1};
        const DualityGap independent =
            SmoothedDualityGap(problem, w.data(), kLambda, entropy, 1);
        EXPECT_NEAR(summary.primal(), independent.primal, 1e-12);
        EXPECT_NEAR(summary.dual(), independent.dual, 1e-12);
      }
    }
  }
}

// A restricted problem whose oracles are read at the free coordinates
// (here by Problem's default, through a dense copy of the point).
class RestrictedAtFreeProblem : public RestrictedProblem {
 public:
  using RestrictedProblem::RestrictedProblem;
  bool OraclesAtFreeAreFaster() const override { return true; }
};

// lbfgs hands such a problem its point at the free coordinates alone and
// has it add the gradients there: the iterates are those of the dense
// point's oracles and sums in all of w's coordinates (gathered at the free
// ones), to the bit, on one thread and more.
TEST(LbfgsSolverTest, OraclesAtTheFreeCoordinatesGiveTheSameIterates) {
  const MulticlassProblem base = SparseMulticlassProblem(40, 6, 3, 8);
  const RestrictedProblem dense(base);
  const RestrictedAtFreeProblem at_free(base);
  for (double l1 : {0.0, 0.01}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << "l1 " << l1 << " threads " << threads);
      SolverConfig config = LbfgsConfig(l1);
      config.set_max_passes(8);
      config.set_num_threads(threads);
      std::vector<double> expected, w;
      const TrainingSummary a = RunLbfgs(dense, config, &expected);
      const TrainingSummary b = RunLbfgs(at_free, config, &w);
      EXPECT_EQ(w, expected);
      EXPECT_EQ(b.primal(), a.primal());
      EXPECT_EQ(b.passes(), a.passes());
    }
  }
}

// Restricted, lbfgs minimises over w with 0 off the free coordinates: its
// optimality conditions hold there (ḡ + λw, and with ℓ1 its subgradient,
// computed here from the oracles), not at the fixed ones, where the
// gradient is far from 0; the certificate is the restricted problem's; the
// thread count changes nothing; the w it returns, and the one its monitor
// evaluates, hold the free coordinates alone; and the registry's solvers of
// every coordinate (svrg here) refuse the problem.
TEST(LbfgsSolverTest, ARestrictedProblemIsSolvedOverItsFreeCoordinates) {
  const RestrictedProblem problem(SparseMulticlassProblem(40, 6, 3, 8));
  const int n = problem.NumExamples();
  std::vector<int64_t> free;
  ASSERT_TRUE(problem.FreeCoordinates(&free));
  for (double l1 : {0.0, 0.01}) {
    SCOPED_TRACE(testing::Message() << "l1 " << l1);
    std::vector<double> at_free, evaluated;
    absl::StatusOr<TrainingSummary> solved =
        SolveReportingLastPoint(problem, LbfgsConfig(l1), &at_free, &evaluated);
    ASSERT_TRUE(solved.ok()) << solved.status();
    const TrainingSummary& summary = *solved;
    ASSERT_EQ(at_free.size(), free.size());
    EXPECT_EQ(evaluated, at_free);
    absl::StatusOr<std::vector<double>> all =
        WeightsInAllCoordinates(problem, at_free);
    ASSERT_TRUE(all.ok()) << all.status();
    const std::vector<double>& w = *all;
    EXPECT_EQ(summary.stop_reason(), "gap_tolerance");
    EXPECT_LE(summary.gap(), 1e-12);
    EXPECT_NEAR(summary.primal(), ElasticNetObjective(problem, w, kLambda, l1),
                1e-12);
    ASSERT_EQ(w.size(), static_cast<size_t>(problem.Dim()));
    for (size_t k = 0; k < free.size(); ++k) EXPECT_EQ(w[free[k]], at_free[k]);
    // A w in all coordinates is not the restricted problem's.
    EXPECT_FALSE(WeightsInAllCoordinates(problem, w).ok());
    std::vector<double> gradient(problem.Dim(), 0.0);
    const Smoothing entropy{Smoothing::Kind::kEntropy, 1.0, 1};
    for (int i = 0; i < n; ++i) {
      std::vector<double> state(problem.BlockStateSize(i));
      problem.SmoothedOracle(i, w.data(), entropy, state.data());
      problem.AddCornerMinusState(i, problem.GoldCorner(i), state.data(),
                                  1.0 / n, gradient.data());
    }
    double largest_fixed = 0;
    for (int64_t j = 0; j < problem.Dim(); ++j) {
      const double g = gradient[j] + kLambda * w[j];
      if (!RestrictedProblem::Free(j)) {
        EXPECT_EQ(w[j], 0.0) << j;
        largest_fixed = std::max(largest_fixed, std::fabs(g) - l1);
      } else if (w[j] != 0) {
        EXPECT_NEAR(g + (w[j] > 0 ? l1 : -l1), 0.0, 1e-5) << j;
      } else {
        EXPECT_LE(std::fabs(g), l1 + 1e-5) << j;
      }
    }
    EXPECT_GT(largest_fixed, 1e-2);
    SolverConfig config = LbfgsConfig(l1);
    config.set_max_passes(8);
    std::vector<double> one;
    RunLbfgs(problem, config, &one);
    for (int threads : {2, 4}) {
      config.set_num_threads(threads);
      std::vector<double> more;
      RunLbfgs(problem, config, &more);
      EXPECT_EQ(more, one) << threads;
    }
  }
  SolverConfig svrg = LbfgsConfig(0);
  svrg.set_name("svrg");
  svrg.mutable_svrg()->set_learning_rate(0.1);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(svrg);
  ASSERT_TRUE(solver.ok());
  std::vector<double> w;
  const absl::StatusOr<TrainingSummary> refused =
      (*solver)->Solve(problem, nullptr, &w);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
}

// Every pass, the start included, is certified: primal − dual = gap, the
// dual below the optimum and the primal above it, and the primal never
// rises (each accepted step passed Armijo's test).
TEST(LbfgsSolverTest, EveryPassIsCertifiedAndDescends) {
  const MulticlassProblem problem = SparseMulticlassProblem(30, 8, 4, 3);
  for (double l1 : {0.0, 0.02}) {
    const double optimum = ElasticNetObjective(
        problem, ElasticNetOptimum(problem, kLambda, l1), kLambda, l1);
    SolverConfig config = LbfgsConfig(l1);
    config.set_max_passes(15);
    config.set_gap_tolerance(0);
    std::vector<double> w;
    std::vector<PassRecord> records;
    RunLbfgs(problem, config, &w, &records);
    ASSERT_EQ(records.size(), 15u) << l1;
    ExpectExactGapsAreCertificates(records);
    double previous = INFINITY;
    for (const PassRecord& record : records) {
      ASSERT_TRUE(record.has_gap()) << record.pass();
      EXPECT_LE(record.dual(), optimum + 1e-12) << l1 << " " << record.pass();
      EXPECT_GE(record.primal(), optimum - 1e-12) << l1 << " " << record.pass();
      EXPECT_LE(record.primal(), previous) << l1 << " " << record.pass();
      previous = record.primal();
    }
    // Quasi-Newton: well within 1e-6 of the optimum in 15 iterations.
    EXPECT_LT(records.back().gap(), 1e-6) << l1;
  }
}

// More examples than a chunk of oracles, and slices of the gradient: the
// same iterates, bit for bit, on any thread count.
TEST(LbfgsSolverTest, TheThreadCountChangesNothing) {
  const MulticlassProblem problem = SparseMulticlassProblem(700, 10, 4, 2);
  for (double l1 : {0.0, 0.01}) {
    SolverConfig config = LbfgsConfig(l1);
    config.set_max_passes(6);
    std::vector<double> one;
    const TrainingSummary a = RunLbfgs(problem, config, &one);
    // Two and three threads sum each lane on a thread of its own; from
    // four, chunk by chunk in slices of w.
    for (int threads : {2, 3, 4, 7}) {
      config.set_num_threads(threads);
      std::vector<double> w;
      const TrainingSummary b = RunLbfgs(problem, config, &w);
      EXPECT_EQ(one, w) << l1 << " " << threads;
      EXPECT_EQ(a.primal(), b.primal()) << l1 << " " << threads;
      EXPECT_EQ(a.dual(), b.dual()) << l1 << " " << threads;
    }
  }
}

// Run on past the optimum's precision (no tolerance can stop it: the gap
// there can be exactly 0), the line search finds no decrease and the run
// ends there, certified, instead of spending its passes.
TEST(LbfgsSolverTest, StopsWhenNoStepDecreases) {
  const MulticlassProblem problem = SparseMulticlassProblem(20, 6, 3, 8);
  SolverConfig config = LbfgsConfig(0.03);
  config.set_gap_tolerance(-1);
  config.set_max_passes(1000);
  std::vector<double> w;
  const TrainingSummary summary = RunLbfgs(problem, config, &w);
  EXPECT_EQ(summary.stop_reason(), "no_progress");
  EXPECT_LT(summary.passes(), 1000);
  EXPECT_LE(summary.gap(), 1e-12);
}

// CRFsuite's delta test: the run ends at the first pass k where
// (P_{k−period} − P_k)/P_k < delta, P_0 the start's objective.
TEST(LbfgsSolverTest, StopsOnTheObjectivesRelativeFall) {
  const MulticlassProblem problem = SparseMulticlassProblem(30, 8, 4, 3);
  for (double l1 : {0.0, 0.02}) {
    SolverConfig config = LbfgsConfig(l1);
    config.set_gap_tolerance(-1);
    config.mutable_lbfgs()->set_period(3);
    config.mutable_lbfgs()->set_delta(1e-4);
    std::vector<double> w;
    std::vector<PassRecord> records;
    const TrainingSummary summary = RunLbfgs(problem, config, &w, &records);
    EXPECT_EQ(summary.stop_reason(), "delta") << l1;
    // The records' primals (the certificate's P, summed in its own order).
    std::vector<double> objectives = {ElasticNetObjective(
        problem, std::vector<double>(w.size()), kLambda, l1)};
    for (const PassRecord& record : records) {
      objectives.push_back(record.primal());
    }
    const size_t last = objectives.size() - 1;
    ASSERT_GT(last, 3u) << l1;
    auto fall = [&](size_t k) {
      return (objectives[k - 3] - objectives[k]) / objectives[k];
    };
    EXPECT_LT(fall(last), 1e-4 * (1 + 1e-9)) << l1;
    for (size_t k = 3; k < last; ++k) {
      EXPECT_GE(fall(k), 1e-4 * (1 - 1e-9)) << l1 << " pass " << k;
    }
  }
}

// CRFsuite's epsilon test, ‖∇P‖ < epsilon·max(1, ‖w‖). Without ℓ1 the
// certificate's gap is ‖∇P‖²/(2λ), so the records tell when it held.
TEST(LbfgsSolverTest, StopsOnASmallGradient) {
  const MulticlassProblem problem = SparseMulticlassProblem(30, 8, 4, 3);
  SolverConfig config = LbfgsConfig(0);
  config.set_gap_tolerance(-1);
  config.mutable_lbfgs()->set_epsilon(1e-3);
  std::vector<double> w;
  std::vector<PassRecord> records;
  const TrainingSummary summary = RunLbfgs(problem, config, &w, &records);
  EXPECT_EQ(summary.stop_reason(), "epsilon");
  ASSERT_GE(records.size(), 2u);
  double norm = 0;
  for (double x : w) norm += x * x;
  const double bound = 1e-3 * std::max(1.0, std::sqrt(norm));
  EXPECT_LT(std::sqrt(2 * kLambda * records.back().gap()), bound * 1.001);
  EXPECT_GT(std::sqrt(2 * kLambda * records[records.size() - 2].gap()),
            bound * 0.5);
}

TEST(LbfgsSolverTest, StopsOnTheTimeBudget) {
  SolverConfig config = LbfgsConfig(0.01);
  config.set_gap_tolerance(0);
  const TrainingSummary summary = ExpectStopsOnTheTimeBudget(config);
  EXPECT_EQ(summary.passes(), 1);
  EXPECT_TRUE(summary.has_gap());  // certified all the same
}

TEST(LbfgsSolverTest, RejectsBadConfigs) {
  const MulticlassProblem problem = SparseMulticlassProblem(5, 3, 2, 1);
  auto refused = [&](const SolverConfig& config) {
    absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
    if (!solver.ok()) return true;
    std::vector<double> w;
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    return !(*solver)->Solve(problem, &monitor, &w).ok();
  };
  SolverConfig hinge = LbfgsConfig(0);
  hinge.clear_objective();
  EXPECT_TRUE(refused(hinge));
  SolverConfig memories = LbfgsConfig(0);
  memories.mutable_lbfgs()->set_num_memories(0);
  EXPECT_TRUE(refused(memories));
  SolverConfig searches = LbfgsConfig(0);
  searches.mutable_lbfgs()->set_max_linesearch(0);
  EXPECT_TRUE(refused(searches));
  SolverConfig negative = LbfgsConfig(-1);
  EXPECT_TRUE(refused(negative));
  SolverConfig delta = LbfgsConfig(0);
  delta.mutable_lbfgs()->set_delta(-1e-5);
  EXPECT_TRUE(refused(delta));
  EXPECT_FALSE(refused(LbfgsConfig(0.1)));
}

}  // namespace
}  // namespace chaintag
