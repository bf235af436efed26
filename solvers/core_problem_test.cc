// Problem's core is enough: a problem that writes only the ten pure virtual
// methods (CoreOnlyProblem below; it would not compile with one more) runs
// every solver, each of the defaults equals the full implementation's
// speed path, and each solver reaches on it the certified optimum, or the
// iterates, that it reaches on the full implementation of the same problem.

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "solvers/duality_gap.h"
#include "solvers/mp_bcfw.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/registry.h"
#include "solvers/regularization_path.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

// The core of a MulticlassProblem, forwarded, and nothing else: every other
// method is Problem's default. Offset states (a gold state that is not
// zero) catch a default that reads a state as if it were v_i.
class CoreOnlyProblem : public Problem {
 public:
  explicit CoreOnlyProblem(const MulticlassProblem& full) : full_(full) {}

  int NumExamples() const override { return full_.NumExamples(); }
  int64_t Dim() const override { return full_.Dim(); }
  const Corner& GoldCorner(int i) const override { return full_.GoldCorner(i); }
  double Loss(int i, const Corner& y) const override {
    return full_.Loss(i, y);
  }
  void MaxOracle(int i, const double* w, OracleResult* result) const override {
    full_.MaxOracle(i, w, result);
  }
  void Decode(int i, const double* w, Corner* corner) const override {
    full_.Decode(i, w, corner);
  }
  void AddScaled(int i, const Corner& y, double c, double* w) const override {
    full_.AddScaled(i, y, c, w);
  }
  int64_t BlockStateSize(int i) const override {
    return full_.BlockStateSize(i);
  }
  void AddCornerToState(int i, const Corner& y, double c,
                        double* state) const override {
    full_.AddCornerToState(i, y, c, state);
  }
  void AddCornerMinusState(int i, const Corner& y, const double* state,
                           double c, double* w) const override {
    full_.AddCornerMinusState(i, y, state, c, w);
  }

 private:
  const MulticlassProblem& full_;
};

MulticlassProblem OffsetProblem(int n, int features, int classes,
                                uint32_t seed) {
  MulticlassProblem problem =
      RandomMulticlassProblem(n, features, classes, seed);
  problem.set_offset_states(true);
  return problem;
}

std::vector<double> RandomVector(int64_t size, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(size);
  for (double& x : v) x = normal(engine);
  return v;
}

void ExpectVectorsNear(const std::vector<double>& a,
                       const std::vector<double>& b, double tolerance,
                       const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t j = 0; j < a.size(); ++j) {
    EXPECT_NEAR(a[j], b[j], tolerance) << what << " at " << j;
  }
}

// A state mixed from three corners, so that it is no corner's state.
std::vector<double> MixedState(const Problem& problem, int i) {
  std::vector<double> state(problem.BlockStateSize(i));
  problem.InitBlockState(i, state.data());
  problem.MixCorner(i, {1}, 0.3, state.data());
  problem.MixCorner(i, {2}, 0.25, state.data());
  return state;
}

TEST(CoreProblemTest, EveryDefaultEqualsTheFullSpeedPath) {
  const MulticlassProblem full = OffsetProblem(6, 3, 4, 17);
  const CoreOnlyProblem core(full);
  const int64_t dim = full.Dim();
  const std::vector<double> w = RandomVector(dim, 1);
  for (int i = 0; i < full.NumExamples(); ++i) {
    SCOPED_TRACE(i);
    const std::vector<double> state = MixedState(full, i);
    ExpectVectorsNear(MixedState(core, i), state, 1e-14, "InitBlockState+Mix");
    std::vector<double> scaled = state, scaled_core = state;
    full.ScaleBlockState(i, 0.4, scaled.data());
    core.ScaleBlockState(i, 0.4, scaled_core.data());
    ExpectVectorsNear(scaled_core, scaled, 1e-14, "ScaleBlockState");

    OracleResult a, b;
    full.MaxOracleWithStateDot(i, w.data(), state.data(), &a);
    core.MaxOracleWithStateDot(i, w.data(), state.data(), &b);
    EXPECT_EQ(b.corner, a.corner);
    EXPECT_NEAR(b.loss, a.loss, 1e-14);
    EXPECT_NEAR(b.score, a.score, 1e-12);
    EXPECT_NEAR(b.state_dot, a.state_dot, 1e-12);
    EXPECT_NEAR(core.StateDot(i, state.data(), w.data()),
                full.StateDot(i, state.data(), w.data()), 1e-12);
    full.MaxOracleScaled(i, w.data(), 0.7, &a);
    core.MaxOracleScaled(i, w.data(), 0.7, &b);
    EXPECT_EQ(b.corner, a.corner);
    EXPECT_NEAR(b.score, a.score, 1e-12);

    for (int y = 0; y < full.num_classes(); ++y) {
      const Corner corner = {y};
      EXPECT_NEAR(core.Score(i, w.data(), corner),
                  full.Score(i, w.data(), corner), 1e-12);
      EXPECT_NEAR(core.StateDistanceSquared(i, state.data(), corner),
                  full.StateDistanceSquared(i, state.data(), corner), 1e-12);
      EXPECT_NEAR(core.CornerDistanceSquared(i, corner, {(y + 1) % 4}),
                  full.CornerDistanceSquared(i, corner, {(y + 1) % 4}), 1e-12);
      EXPECT_TRUE(core.IsCorner(i, corner));

      std::vector<double> x = w, x_core = w;
      full.AddCornerDifference(i, corner, {3}, 0.3, x.data());
      core.AddCornerDifference(i, corner, {3}, 0.3, x_core.data());
      ExpectVectorsNear(x_core, x, 1e-14, "AddCornerDifference");

      const Corner mixed[] = {{1}, {2}};
      const Corner* pointers[] = {&mixed[0], &mixed[1]};
      const double weights[] = {0.6, 0.4};
      x = w, x_core = w;
      full.AddCornerMinusMixture(i, corner, state.data(), pointers, weights, 2,
                                 -0.2, x.data());
      core.AddCornerMinusMixture(i, corner, state.data(), pointers, weights, 2,
                                 -0.2, x_core.data());
      ExpectVectorsNear(x_core, x, 1e-14, "AddCornerMinusMixture");

      // Slices that cover w: together they make the whole addition.
      x = w, x_core = w;
      full.AddCornerMinusState(i, corner, state.data(), 0.5, x.data());
      core.AddCornerMinusStateInSlice(i, corner, state.data(), 0.5, 0, 5,
                                      x_core.data());
      core.AddCornerMinusStateInSlice(i, corner, state.data(), 0.5, 5, dim,
                                      x_core.data());
      ExpectVectorsNear(x_core, x, 1e-14, "AddCornerMinusStateInSlice");

      BlockUpdate update;
      core.EncodeCornerMinusState(i, corner, state.data(), 0.5, &update);
      core.EncodeScaled(i, corner, -0.25, &update);
      x = w, x_core = w;
      full.AddCornerMinusState(i, corner, state.data(), 0.5, x.data());
      full.AddScaled(i, corner, -0.25, x.data());
      AddBlockUpdate(update, x_core.data());
      ExpectVectorsNear(x_core, x, 1e-14, "Encode*");

      std::vector<double> s = state, s_core = state;
      full.MixCorner(i, corner, 0.35, s.data());
      core.MixCorner(i, corner, 0.35, s_core.data());
      ExpectVectorsNear(s_core, s, 1e-14, "MixCorner");
    }
    EXPECT_FALSE(core.IsCorner(i, {1, 2}));

    const Corner corners[] = {{0}, {2}, {3}};
    const Corner* pointers[] = {&corners[0], &corners[1], &corners[2]};
    double scores[3], scores_core[3], dot = 0, dot_core = 0;
    full.ScoreCorners(i, w.data(), state.data(), pointers, 3, scores, &dot);
    core.ScoreCorners(i, w.data(), state.data(), pointers, 3, scores_core,
                      &dot_core);
    EXPECT_NEAR(dot_core, dot, 1e-12);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(scores_core[k], scores[k], 1e-12);
    full.ScoreCornersAndMaxOracle(i, w.data(), state.data(), pointers, 3,
                                  scores, &a);
    core.ScoreCornersAndMaxOracle(i, w.data(), state.data(), pointers, 3,
                                  scores_core, &b);
    EXPECT_EQ(b.corner, a.corner);
    EXPECT_NEAR(b.state_dot, a.state_dot, 1e-12);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(scores_core[k], scores[k], 1e-12);

    Smoothing none;
    std::vector<double> q(full.BlockStateSize(i)), q_core(q.size());
    EXPECT_NEAR(core.SmoothedOracle(i, w.data(), none, q_core.data()),
                full.SmoothedOracle(i, w.data(), none, q.data()), 1e-12);
    ExpectVectorsNear(q_core, q, 1e-14, "SmoothedOracle");
    double dot_of_q = 0, dot_of_q_core = 0;
    EXPECT_NEAR(
        core.SmoothedOracleWithStateDot(i, w.data(), none, q_core.data(),
                                        &dot_of_q_core),
        full.SmoothedOracleWithStateDot(i, w.data(), none, q.data(), &dot_of_q),
        1e-12);
    EXPECT_NEAR(dot_of_q_core, dot_of_q, 1e-12);
    EXPECT_NEAR(dot_of_q, full.StateDot(i, q.data(), w.data()), 1e-12);
  }
  EXPECT_TRUE(core.SupportsSmoothing(Smoothing::Kind::kNone));
  EXPECT_FALSE(core.SupportsSmoothing(Smoothing::Kind::kEntropy));
  EXPECT_FALSE(core.SupportsSmoothing(Smoothing::Kind::kTopKL2));
  std::vector<CoordinateRange> ranges;
  core.TouchedRanges(0, &ranges);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].begin, 0);
  EXPECT_EQ(ranges[0].length, dim);
}

struct SolverCase {
  std::string label;
  SolverConfig config;
  // Whether the solver is run to a tight gap (its optimum is compared with
  // the reference), else for a fixed number of passes (its iterates are
  // compared with the full problem's).
  bool to_optimum = true;
  // Whether the solver keeps a dual iterate, so that its gap certifies w.
  bool dual = true;
};

std::vector<SolverCase> AllSolvers() {
  std::vector<SolverCase> cases;
  auto add = [&](const std::string& label, bool to_optimum,
                 const std::function<void(SolverConfig*)>& set) {
    SolverCase c;
    c.label = label;
    c.to_optimum = to_optimum;
    c.config.set_lambda(0.05);
    c.config.set_num_threads(1);
    c.config.set_seed(5);
    c.config.set_max_passes(to_optimum ? 20000 : 40);
    c.config.set_gap_check(5);
    c.config.set_gap_tolerance(to_optimum ? 1e-8 : 0);
    c.config.set_weighted_averaging(false);
    set(&c.config);
    cases.push_back(c);
  };
  add("bcfw best", true, [](SolverConfig* c) {
    c->set_name("bcfw");
    c->mutable_bcfw()->set_step(SolverConfig::BEST);
  });
  add("bcfw pairwise gap cache", true, [](SolverConfig* c) {
    c->set_name("bcfw");
    c->set_sampling(SolverConfig::GAP);
    c->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
    c->mutable_bcfw()->set_cache(true);
  });
  add("bcfw away", true, [](SolverConfig* c) {
    c->set_name("bcfw");
    c->mutable_bcfw()->set_step(SolverConfig::AWAY);
  });
  add("bcfw fw cache averaging", false, [](SolverConfig* c) {
    c->set_name("bcfw");
    c->mutable_bcfw()->set_cache(true);
    c->set_weighted_averaging(true);
  });
  add("bcfw minibatch 4 on 2 threads", false, [](SolverConfig* c) {
    c->set_name("bcfw");
    c->set_minibatch(4);
    c->set_num_threads(2);
  });
  add("active_set_bcfw", true,
      [](SolverConfig* c) { c->set_name("active_set_bcfw"); });
  // MP-BCFW's planes stall short of 1e-8 here, on either implementation.
  add("mp_bcfw", true, [](SolverConfig* c) {
    c->set_name("mp_bcfw");
    c->set_gap_tolerance(1e-6);
  });
  add("fw", false, [](SolverConfig* c) { c->set_name("fw"); });
  add("ssg", false, [](SolverConfig* c) { c->set_name("ssg"); });
  cases.back().dual = false;
  add("svrg", false, [](SolverConfig* c) {
    c->set_name("svrg");
    c->mutable_svrg()->set_smoothing(SolverConfig::NO_SMOOTHING);
    c->mutable_svrg()->set_learning_rate(0.02);
  });
  cases.back().dual = false;
  add("casimir_svrg", false, [](SolverConfig* c) {
    c->set_name("casimir_svrg");
    c->mutable_svrg()->set_smoothing(SolverConfig::NO_SMOOTHING);
    c->mutable_svrg()->set_learning_rate(0.02);
    c->mutable_casimir()->set_kappa(0.1);
  });
  cases.back().dual = false;
  return cases;
}

absl::StatusOr<TrainingSummary> SolveWith(const SolverConfig& config,
                                          const Problem& problem,
                                          std::vector<double>* w,
                                          Monitor* monitor) {
  if (config.name() == "mp_bcfw") {
    // MP-BCFW's rule prices an oracle call by a measured time unless r is
    // pinned: pinned, its passes do not depend on how fast this build is
    // (the core-only problem's O(Dim) speed paths, sanitizers).
    SolverConfig pinned = config;
    pinned.mutable_mp_bcfw()->set_oracle_cost(4);
    MpBcfwSolver solver(pinned);
    return solver.Solve(problem, monitor, w);
  }
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  if (!solver.ok()) return solver.status();
  return (*solver)->Solve(problem, monitor, w);
}

TEST(CoreProblemTest, EverySolverReachesWhatTheFullProblemReaches) {
  const MulticlassProblem full = OffsetProblem(24, 4, 3, 11);
  const CoreOnlyProblem core(full);
  const double optimum = ReferencePrimal(full, 0.05);
  for (const SolverCase& c : AllSolvers()) {
    SCOPED_TRACE(c.label);
    Monitor monitor, monitor_core;
    monitor.set_progress_stream(nullptr);
    monitor_core.set_progress_stream(nullptr);
    std::vector<double> w, w_core;
    absl::StatusOr<TrainingSummary> on_full =
        SolveWith(c.config, full, &w, &monitor);
    absl::StatusOr<TrainingSummary> on_core =
        SolveWith(c.config, core, &w_core, &monitor_core);
    ASSERT_TRUE(on_full.ok()) << on_full.status();
    ASSERT_TRUE(on_core.ok()) << on_core.status();
    ExpectExactGapsAreCertificates(monitor_core.records());
    // The certificate is about the returned w, recomputed independently.
    const double primal =
        0.5 * 0.05 * SquaredNorm(w_core.data(), w_core.size()) +
        AverageHingeLoss(full, w_core.data(), 1);
    EXPECT_NEAR(on_core->primal(), primal, 1e-10);
    if (c.dual) {
      EXPECT_LE(primal - optimum, on_core->gap() + 1e-10);
    }
    if (c.to_optimum) {
      EXPECT_EQ(on_core->stop_reason(), "gap_tolerance");
      const double tolerance = c.config.gap_tolerance();
      EXPECT_NEAR(on_core->primal(), optimum, tolerance);
      EXPECT_NEAR(on_full->primal(), optimum, tolerance);
    } else {
      // Same iterates, up to the rounding of the defaults' other sums.
      EXPECT_EQ(on_core->passes(), on_full->passes());
      EXPECT_NEAR(on_core->primal(), on_full->primal(), 1e-9);
      EXPECT_NEAR(on_core->gap(), on_full->gap(), 1e-9);
      ExpectVectorsNear(w_core, w, 1e-9, "w");
    }
  }
}

TEST(CoreProblemTest, RegularizationPathMatchesTheFullProblem) {
  const MulticlassProblem full = OffsetProblem(20, 4, 3, 7);
  const CoreOnlyProblem core(full);
  SolverConfig config;
  config.set_name("bcfw");
  config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  config.set_sampling(SolverConfig::GAP);
  config.set_num_threads(1);
  config.set_max_passes(5000);
  config.mutable_path()->set_mode(
      RegularizationPathConfig::EPSILON_APPROXIMATE);
  config.mutable_path()->set_epsilon(0.05);
  config.mutable_path()->set_lambda_min(1e-3);
  absl::StatusOr<std::vector<PathPoint>> on_full =
      RunRegularizationPath(full, config, nullptr);
  std::vector<std::vector<double>> core_weights;
  absl::StatusOr<std::vector<PathPoint>> on_core = RunRegularizationPath(
      core, config, [&](const PathPoint&, const std::vector<double>& w) {
        core_weights.push_back(w);
        return absl::OkStatus();
      });
  ASSERT_TRUE(on_full.ok()) << on_full.status();
  ASSERT_TRUE(on_core.ok()) << on_core.status();
  ASSERT_EQ(on_core->size(), on_full->size());
  ASSERT_GE(on_core->size(), 3u);
  for (size_t j = 0; j < on_core->size(); ++j) {
    EXPECT_NEAR((*on_core)[j].lambda, (*on_full)[j].lambda,
                1e-9 * (*on_full)[j].lambda);
    // Each breakpoint's w is 0.05-approximate on its segment's ends.
    const PathPoint& point = (*on_core)[j];
    const DualityGap gap =
        GapOnSegment(full, point, core_weights[j], point.lambda, 1);
    EXPECT_LE(gap.gap, 0.05 * (1 + 1e-9));
  }
}

TEST(CoreProblemTest, SmoothedSolversRefuseASmoothingTheProblemLacks) {
  const MulticlassProblem full = OffsetProblem(10, 3, 3, 2);
  const CoreOnlyProblem core(full);
  SolverConfig config;
  config.set_name("svrg");
  config.set_lambda(0.1);
  config.set_max_passes(4);
  config.mutable_svrg()->set_smoothing(SolverConfig::ENTROPY);
  config.mutable_svrg()->set_learning_rate(0.05);
  std::vector<double> w;
  EXPECT_TRUE(SolveWith(config, full, &w, nullptr).ok());
  absl::StatusOr<TrainingSummary> refused =
      SolveWith(config, core, &w, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_NE(refused.status().message().find("ENTROPY"), std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace chaintag
