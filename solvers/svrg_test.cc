// SVRG epochs and the svrg / casimir_svrg solvers on small multiclass SVMs:
// the lazy epoch against a textbook dense one written here, and the solvers
// against the non-smooth optimum within the smoothing's bias.

#include "solvers/svrg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "solvers/casimir_svrg.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

// Inputs with most entries zero, so that a block touches few coordinates and
// the lazy updates have coordinates to skip.
struct SparseData {
  std::vector<std::vector<double>> inputs;
  std::vector<int> gold;
};

SparseData SparseInputs(int n, int features, int classes, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> pick(0, features - 1);
  SparseData data;
  data.inputs.assign(n, std::vector<double>(features));
  data.gold.resize(n);
  for (int i = 0; i < n; ++i) {
    for (int nonzero = 0; nonzero < 2; ++nonzero) {
      data.inputs[i][pick(engine)] = normal(engine);
    }
    data.gold[i] = i % classes;
  }
  return data;
}

MulticlassProblem SparseMulticlassProblem(int n, int features, int classes,
                                          uint32_t seed) {
  SparseData data = SparseInputs(n, features, classes, seed);
  return MulticlassProblem(std::move(data.inputs), std::move(data.gold),
                           classes);
}

// The textbook epoch: dense vectors, both gradients recomputed every step,
// the same uniform draws. Returns the average of w_1 … w_n; *last = w_n.
std::vector<double> DenseEpoch(const Problem& problem,
                               const SvrgEpochSettings& settings,
                               const std::vector<double>& start,
                               const std::vector<double>& center, uint64_t seed,
                               std::vector<double>* last) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  auto gradient = [&](int i, const std::vector<double>& w) {
    std::vector<double> state(problem.BlockStateSize(i));
    problem.SmoothedOracle(i, w.data(), settings.smoothing, state.data());
    std::vector<double> g(dim, 0.0);
    problem.AddCornerMinusState(i, problem.GoldCorner(i), state.data(), 1.0,
                                g.data());
    return g;
  };
  std::vector<double> full(dim, 0.0);
  for (int i = 0; i < n; ++i) {
    const std::vector<double> g = gradient(i, start);
    for (int64_t j = 0; j < dim; ++j) full[j] += g[j] / n;
  }
  SolverRandom random(seed);
  std::vector<double> w = start, sum(dim, 0.0);
  for (int t = 0; t < n; ++t) {
    const int i = static_cast<int>(random.Uniform(n));
    const std::vector<double> at_w = gradient(i, w);
    const std::vector<double> at_snapshot = gradient(i, start);
    for (int64_t j = 0; j < dim; ++j) {
      w[j] -= settings.learning_rate *
              (at_w[j] - at_snapshot[j] + full[j] + settings.lambda * w[j] +
               settings.kappa * (w[j] - center[j]));
      sum[j] += w[j];
    }
  }
  *last = w;
  for (double& x : sum) x /= n;
  return sum;
}

void ExpectNear(const std::vector<double>& a, const std::vector<double>& b,
                double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t j = 0; j < a.size(); ++j) {
    EXPECT_NEAR(a[j], b[j], tolerance) << "coordinate " << j;
  }
}

TEST(SvrgEpochTest, LazyAndDenseStepsMatchTheTextbookEpoch) {
  const MulticlassProblem problem = SparseMulticlassProblem(15, 12, 3, 4);
  const int64_t dim = problem.Dim();
  std::vector<double> start(dim), center(dim);
  std::mt19937 engine(9);
  std::normal_distribution<double> normal;
  for (int64_t j = 0; j < dim; ++j) {
    start[j] = 0.3 * normal(engine);
    center[j] = 0.3 * normal(engine);
  }
  for (Smoothing::Kind kind : {Smoothing::Kind::kNone, Smoothing::Kind::kTopKL2,
                               Smoothing::Kind::kEntropy}) {
    for (double kappa : {0.0, 0.2}) {
      SvrgEpochSettings settings;
      settings.lambda = 0.05;
      settings.kappa = kappa;
      settings.learning_rate = 0.3;
      settings.smoothing.kind = kind;
      settings.smoothing.mu = 0.5;
      settings.smoothing.top_k = 2;
      std::vector<double> expected_last;
      const std::vector<double> expected =
          DenseEpoch(problem, settings, start, center, 17, &expected_last);
      for (bool lazy : {true, false}) {
        SCOPED_TRACE(testing::Message()
                     << "smoothing " << static_cast<int>(kind) << ", κ "
                     << kappa << ", lazy " << lazy);
        settings.lazy_updates = lazy;
        SvrgEpoch epoch(problem);
        SolverRandom random(17);
        std::vector<double> average, last;
        EXPECT_EQ(
            epoch.Run(settings, start, center.data(), &random, &average, &last),
            2 * problem.NumExamples());
        ExpectNear(average, expected, 1e-10);
        ExpectNear(last, expected_last, 1e-10);
      }
    }
  }
}

// The lazy epoch forms the average from per-block sums of the steps' state
// differences (and only brings w up to w_n when asked for the last
// iterate): asked for the average alone it must give the same one, also
// with a tiny λ (fixed points c = −ḡ/λ far larger than w, a close to 1),
// against the dense path on the same draws; and a = 0 (η = 1/(λ + κ)),
// where u cannot carry the sparse step, falls back to dense steps.
TEST(SvrgEpochTest, LazyAverageAloneAndExtremeDecaysMatchTheDensePath) {
  const MulticlassProblem problem = SparseMulticlassProblem(40, 20, 3, 6);
  const int64_t dim = problem.Dim();
  std::vector<double> start(dim), center(dim);
  std::mt19937 engine(5);
  std::normal_distribution<double> normal;
  for (int64_t j = 0; j < dim; ++j) {
    start[j] = normal(engine);
    center[j] = normal(engine);
  }
  struct Case {
    double lambda, kappa, learning_rate, tolerance;
  };
  for (const Case& c : {Case{1e-6, 0.0, 0.5, 1e-9}, Case{1e-6, 1e-6, 0.5, 1e-9},
                        Case{0.05, 0.2, 4.0, 1e-10}}) {
    for (Smoothing::Kind kind :
         {Smoothing::Kind::kNone, Smoothing::Kind::kTopKL2,
          Smoothing::Kind::kEntropy}) {
      SCOPED_TRACE(testing::Message()
                   << "λ " << c.lambda << ", κ " << c.kappa << ", η "
                   << c.learning_rate << ", smoothing "
                   << static_cast<int>(kind));
      SvrgEpochSettings settings;
      settings.lambda = c.lambda;
      settings.kappa = c.kappa;
      settings.learning_rate = c.learning_rate;
      settings.smoothing.kind = kind;
      settings.smoothing.mu = 0.5;
      settings.smoothing.top_k = 2;
      std::vector<double> expected, expected_last, average, last;
      settings.lazy_updates = false;
      SvrgEpoch dense(problem);
      SolverRandom dense_random(23);
      dense.Run(settings, start, center.data(), &dense_random, &expected,
                &expected_last);
      settings.lazy_updates = true;
      SvrgEpoch lazy(problem);
      SolverRandom random(23);
      // Twice on one epoch object: nothing may leak from one epoch into the
      // next.
      for (int repeat = 0; repeat < 2; ++repeat) {
        SolverRandom same(23);
        lazy.Run(settings, start, center.data(), &same, &average, nullptr);
        double largest = 0;
        for (double x : expected) largest = std::max(largest, std::abs(x));
        ExpectNear(average, expected, c.tolerance * std::max(1.0, largest));
      }
      lazy.Run(settings, start, center.data(), &random, nullptr, &last);
      ExpectNear(last, expected_last, c.tolerance * 10);
    }
  }
}

// Reports aligned blocks of 4 coordinates that cover what the block
// touches (a partition coarser than single coordinates, as chains' rows):
// the epoch then keeps one last step per block of 4.
class RowRangesProblem : public MulticlassProblem {
 public:
  using MulticlassProblem::MulticlassProblem;
  void TouchedRanges(int i,
                     std::vector<CoordinateRange>* ranges) const override {
    std::vector<CoordinateRange> single;
    MulticlassProblem::TouchedRanges(i, &single);
    for (const CoordinateRange& range : single) {
      ranges->push_back({range.begin / 4 * 4, 4});
    }
  }
};

TEST(SvrgEpochTest, RowRangesMatchTheDensePath) {
  SparseData data = SparseInputs(15, 12, 3, 4);
  const RowRangesProblem problem(std::move(data.inputs), std::move(data.gold),
                                 3);
  const int64_t dim = problem.Dim();
  std::vector<double> start(dim), center(dim);
  std::mt19937 engine(3);
  std::normal_distribution<double> normal;
  for (int64_t j = 0; j < dim; ++j) {
    start[j] = 0.3 * normal(engine);
    center[j] = 0.3 * normal(engine);
  }
  SvrgEpochSettings settings;
  settings.lambda = 0.05;
  settings.kappa = 0.2;
  settings.learning_rate = 0.3;
  settings.smoothing.kind = Smoothing::Kind::kTopKL2;
  settings.smoothing.mu = 0.5;
  settings.smoothing.top_k = 2;
  std::vector<double> expected, expected_last, average, last;
  settings.lazy_updates = false;
  SvrgEpoch dense(problem);
  SolverRandom dense_random(31);
  dense.Run(settings, start, center.data(), &dense_random, &expected,
            &expected_last);
  settings.lazy_updates = true;
  SvrgEpoch lazy(problem);
  SolverRandom random(31);
  lazy.Run(settings, start, center.data(), &random, &average, &last);
  ExpectNear(average, expected, 1e-10);
  ExpectNear(last, expected_last, 1e-10);
}

SolverConfig SvrgConfig(const char* name) {
  SolverConfig config;
  config.set_name(name);
  config.set_lambda(0.1);
  config.mutable_svrg()->set_smoothing(SolverConfig::L2_TOP_K);
  config.mutable_svrg()->set_top_k(3);
  config.mutable_svrg()->set_learning_rate(0.05);
  config.set_max_passes(400);
  config.set_seed(3);
  return config;
}

TrainingSummary RunSolver(const Problem& problem, const SolverConfig& config,
                          std::vector<double>* w, Monitor* monitor = nullptr) {
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  EXPECT_TRUE(solver.ok()) << solver.status();
  if (!solver.ok()) return TrainingSummary();
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, monitor, w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  return summary.ok() ? *summary : TrainingSummary();
}

// ‖λw + 1/n Σ_i ∇f_{i,μ}(w)‖∞: zero exactly at the smoothed optimum.
double SmoothedStationarity(const Problem& problem,
                            const std::vector<double>& w, double lambda,
                            const Smoothing& smoothing) {
  const int n = problem.NumExamples();
  std::vector<double> gradient = w;
  for (double& x : gradient) x *= lambda;
  for (int i = 0; i < n; ++i) {
    std::vector<double> state(problem.BlockStateSize(i));
    problem.SmoothedOracle(i, w.data(), smoothing, state.data());
    problem.AddCornerMinusState(i, problem.GoldCorner(i), state.data(), 1.0 / n,
                                gradient.data());
  }
  double largest = 0;
  for (double x : gradient) largest = std::max(largest, std::abs(x));
  return largest;
}

// Both solvers reach the optimum of the smoothed problem (its gradient
// vanishes), whose true primal lies within the smoothing's bias of P*:
// ℓ2 smoothing over a simplex moves the max by at most μ/2, entropy by at
// most μ·log(number of labelings).
TEST(SvrgSolverTest, ReachesTheSmoothedOptimum) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  const double optimum = ReferencePrimal(problem, 0.1);
  struct Case {
    const char* name;
    SolverConfig::SmoothingKind smoothing;
    double bias;
  };
  for (const Case& c :
       {Case{"svrg", SolverConfig::L2_TOP_K, 0.5},
        Case{"svrg", SolverConfig::ENTROPY, std::log(3.0)},
        Case{"casimir_svrg", SolverConfig::L2_TOP_K, 0.5},
        Case{"casimir_svrg", SolverConfig::ENTROPY, std::log(3.0)}}) {
    SCOPED_TRACE(testing::Message() << c.name << " smoothing " << c.smoothing);
    SolverConfig config = SvrgConfig(c.name);
    config.mutable_svrg()->set_smoothing(c.smoothing);
    config.mutable_svrg()->set_smoothing_mu(1.0);
    config.mutable_casimir()->set_kappa(0.1);
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    const TrainingSummary summary = RunSolver(problem, config, &w, &monitor);
    EXPECT_EQ(summary.passes(), 200);  // 2 effective passes an epoch
    EXPECT_EQ(summary.oracle_calls(), 400 * 20);
    EXPECT_FALSE(summary.has_gap());
    const Smoothing smoothing{c.smoothing == SolverConfig::L2_TOP_K
                                  ? Smoothing::Kind::kTopKL2
                                  : Smoothing::Kind::kEntropy,
                              1.0, 3};
    EXPECT_LT(SmoothedStationarity(problem, w, 0.1, smoothing), 1e-8);
    // The logged primal is the true one of the returned w.
    EXPECT_NEAR(0.5 * 0.1 * SquaredNorm(w.data(), w.size()) +
                    AverageHingeLoss(problem, w.data(), 1),
                summary.primal(), 1e-12);
    EXPECT_GE(summary.primal(), optimum - 1e-9);
    EXPECT_LE(summary.primal(), optimum + c.bias);
    ASSERT_EQ(monitor.records().size(), 200u);
    EXPECT_DOUBLE_EQ(monitor.records()[0].smoothing_mu(), 1.0);
  }
}

// With μ_k → 0 (CASIMIR_ADAPT's exponential decay) the smoothing's bias
// vanishes: the true primal ends closer to P* than with μ held at its first
// value. (A fixed step size leaves an O(η) plateau, hence the small η.)
// The LOG_SUM_EXP objective, lambda/2||w||^2 + 1/n sum_i
// log sum_y exp(L_i(y) - <w, psi_i(y)>): whatever smoothing the config
// names, both solvers run entropy smoothing at mu = 1, reach its optimum
// (the gradient vanishes), and certify it with the exact duality gap of
// the dual point the softmax distributions give (primal and dual written
// out here by enumerating the classes), stopping on it; the BCFW family
// refuses the objective.
// Certify's full-gradient pass serves the next epoch that starts at the
// certified point: the epoch is the same to the bit as one that computes
// its own, and a start elsewhere computes its own.
TEST(SvrgEpochTest, AnEpochFromTheCertifiedPointReusesItsFullGradient) {
  const MulticlassProblem problem = RandomMulticlassProblem(15, 3, 4, 9);
  SvrgEpochSettings settings;
  settings.lambda = 0.1;
  settings.learning_rate = 0.05;
  settings.smoothing = Smoothing{Smoothing::Kind::kEntropy, 1.0, 1};
  std::vector<double> start(problem.Dim());
  for (size_t j = 0; j < start.size(); ++j) start[j] = 0.1 * (j % 5) - 0.2;
  std::vector<double> other = start;
  other[0] += 0.5;
  for (const std::vector<double>* from : {&start, &other}) {
    SvrgEpoch fresh(problem), certified(problem);
    SolverRandom random_fresh(4), random_certified(4);
    std::vector<double> average_fresh, average_certified;
    fresh.Run(settings, *from, nullptr, &random_fresh, &average_fresh, nullptr);
    const DualityGap gap = certified.Certify(settings, start);
    EXPECT_NEAR(
        gap.primal,
        SmoothedDualityGap(problem, start.data(), 0.1, settings.smoothing, 1)
            .primal,
        1e-12);
    certified.Run(settings, *from, nullptr, &random_certified,
                  &average_certified, nullptr);
    EXPECT_EQ(average_certified, average_fresh);
  }
}

TEST(SvrgSolverTest, LogSumExpObjectiveIsEntropyAtMuOne) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  const double lambda = 0.1;
  for (const char* name : {"svrg", "casimir_svrg"}) {
    SCOPED_TRACE(name);
    SolverConfig config = SvrgConfig(name);
    config.set_objective(SolverConfig::LOG_SUM_EXP);
    config.mutable_svrg()->set_smoothing_mu(0.25);  // ignored
    config.mutable_casimir()->set_kappa(0.1);
    config.set_gap_tolerance(0);  // until the gap rounds to 0
    std::vector<double> w;
    const TrainingSummary summary = RunSolver(problem, config, &w);
    EXPECT_LT(
        SmoothedStationarity(problem, w, lambda,
                             Smoothing{Smoothing::Kind::kEntropy, 1.0, 1}),
        1e-6);
    // P and the dual at q_i = softmax(h_i) by enumeration:
    // D = 1/n sum_i [<q_i, L_i> + H(q_i)] - lambda/2||w(q)||^2,
    // w(q) = 1/(lambda n) sum_i E_{q_i} psi_i.
    const int n = problem.NumExamples();
    double objective = 0, dual = 0;
    std::vector<double> w_of_q(w.size(), 0.0);
    for (int i = 0; i < n; ++i) {
      std::vector<double> h(problem.num_classes());
      double z = 0;
      for (int y = 0; y < problem.num_classes(); ++y) {
        h[y] = problem.Loss(i, {y}) -
               MulticlassProblem::Dot(problem.Psi(i, y), w.data());
        z += std::exp(h[y]);
      }
      objective += std::log(z) / n;
      for (int y = 0; y < problem.num_classes(); ++y) {
        const double q = std::exp(h[y]) / z;
        dual += (q * problem.Loss(i, {y}) - q * std::log(q)) / n;
        const std::vector<double> psi = problem.Psi(i, y);
        for (size_t j = 0; j < w.size(); ++j) {
          w_of_q[j] += q * psi[j] / (lambda * n);
        }
      }
    }
    double norm = 0, norm_of_q = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      norm += w[j] * w[j];
      norm_of_q += w_of_q[j] * w_of_q[j];
    }
    objective += 0.5 * lambda * norm;
    dual -= 0.5 * lambda * norm_of_q;
    EXPECT_NEAR(summary.primal(), objective, 1e-10);
    EXPECT_NEAR(summary.dual(), dual, 1e-10);
    EXPECT_GE(summary.gap(), -1e-12);  // a certificate, up to rounding
    const DualityGap independent =
        SmoothedDualityGap(problem, w.data(), lambda,
                           Smoothing{Smoothing::Kind::kEntropy, 1.0, 1}, 3);
    EXPECT_NEAR(summary.primal(), independent.primal, 1e-12);
    EXPECT_NEAR(summary.dual(), independent.dual, 1e-12);
    EXPECT_LT(summary.gap(), 1e-9);
    // The run stops on its certificate.
    config.set_gap_tolerance(1e-6);
    const TrainingSummary certified = RunSolver(problem, config, &w);
    EXPECT_EQ(certified.stop_reason(), "gap_tolerance");
    EXPECT_LE(certified.gap(), 1e-6);
    EXPECT_LT(certified.passes(), 400);
  }
  SolverConfig bcfw;
  bcfw.set_objective(SolverConfig::LOG_SUM_EXP);
  absl::StatusOr<std::unique_ptr<Solver>> refused = CreateSolver(bcfw);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
}

TEST(SvrgSolverTest, AdaptiveSmoothingApproachesTheNonSmoothOptimum) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  const double optimum = ReferencePrimal(problem, 0.1);
  SolverConfig constant = SvrgConfig("casimir_svrg");
  constant.mutable_casimir()->set_kappa(0.1);
  constant.mutable_svrg()->set_smoothing_mu(1.0);
  constant.mutable_svrg()->set_learning_rate(0.002);
  constant.set_max_passes(600);
  std::vector<double> w;
  const double constant_primal = RunSolver(problem, constant, &w).primal();
  for (SolverConfig::WarmStart warm_start :
       {SolverConfig::PROX_CENTER, SolverConfig::PREV_ITERATE,
        SolverConfig::EXTRAPOLATION}) {
    SCOPED_TRACE(testing::Message() << "warm start " << warm_start);
    SolverConfig config = constant;
    config.mutable_casimir()->clear_kappa();
    config.mutable_casimir()->set_variant(SolverConfig::CASIMIR_ADAPT);
    config.mutable_casimir()->set_warm_start(warm_start);
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    const TrainingSummary summary = RunSolver(problem, config, &w, &monitor);
    EXPECT_GE(summary.primal(), optimum - 1e-9);
    EXPECT_LE(summary.primal(), optimum + 5e-3);
    EXPECT_LT(summary.primal(), constant_primal);
    // μ_k = μ·c^k with c = √(1 − √q/2), q = κ/(κ+λ) = 1/2 at κ = λ.
    const std::vector<PassRecord>& records = monitor.records();
    const double c = std::sqrt(1 - 0.5 * std::sqrt(0.5));
    EXPECT_NEAR(records[3].smoothing_mu(), std::pow(c, 3), 1e-15);
  }
}

TEST(SvrgSolverTest, CasimirWithoutKappaIsSvrgAndRunsRepeat) {
  const MulticlassProblem problem = SparseMulticlassProblem(15, 12, 3, 4);
  SolverConfig config = SvrgConfig("svrg");
  config.set_max_passes(20);
  std::vector<double> svrg, again, casimir;
  RunSolver(problem, config, &svrg);
  RunSolver(problem, config, &again);
  EXPECT_EQ(svrg, again);
  // κ only enters through the proximal term; a tiny κ is not zero, so
  // compare svrg with the same loop at κ → 0 in the limit instead: the
  // extrapolation weight β vanishes with κ.
  config.set_name("casimir_svrg");
  config.mutable_casimir()->set_kappa(1e-12);
  RunSolver(problem, config, &casimir);
  ExpectNear(casimir, svrg, 1e-6);
}

TEST(SvrgSolverTest, ADivergingIterateIsAnError) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  SolverConfig config = SvrgConfig("svrg");
  config.mutable_svrg()->set_learning_rate(
      100);  // a = 1 − ηλ = -9: every step grows w
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary =
      CreateSolver(config).value()->Solve(problem, nullptr, &w);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("diverged"), std::string::npos)
      << summary.status();
}

// Options that need no data are refused when the solver is made, and by
// CheckSolverOptions (which a pipeline runs before it reads its corpus),
// each naming the solver and the option.
TEST(SvrgSolverTest, RejectsBadConfigsBeforeAnyData) {
  struct Case {
    const char* name;
    void (*change)(SolverConfig*);
    const char* message;
  };
  const Case cases[] = {
      {"svrg", [](SolverConfig* c) { c->mutable_svrg()->set_learning_rate(0); },
       "set learning_rate, or smoothness"},
      {"svrg",
       [](SolverConfig* c) { c->mutable_svrg()->set_learning_rate(-0.1); },
       "must not be negative"},
      {"svrg", [](SolverConfig* c) { c->mutable_svrg()->set_smoothing_mu(0); },
       "smoothing_mu must be positive"},
      {"svrg", [](SolverConfig* c) { c->mutable_svrg()->set_top_k(0); },
       "top_k must be at least 1"},
      {"casimir_svrg",
       [](SolverConfig* c) { c->mutable_casimir()->set_kappa(-1); },
       "must not be negative"},
      {"casimir_svrg", [](SolverConfig*) {}, "CASIMIR_CONST takes"},
  };
  for (const Case& c : cases) {
    SolverConfig config = SvrgConfig(c.name);
    c.change(&config);
    const absl::Status early = CheckSolverOptions(config);
    EXPECT_EQ(early, CreateSolver(config).status()) << c.message;
    EXPECT_EQ(early.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_NE(early.message().find(c.message), absl::string_view::npos)
        << early;
    EXPECT_EQ(early.message().rfind(c.name, 0), 0u) << early;
  }
  const MulticlassProblem problem = RandomMulticlassProblem(5, 2, 2, 1);
  std::vector<double> w;
  SolverConfig config = SvrgConfig("casimir_svrg");
  config.mutable_svrg()->set_smoothness(10);  // κ from L
  EXPECT_TRUE(CheckSolverOptions(config).ok());
  EXPECT_TRUE(CreateSolver(config).value()->Solve(problem, nullptr, &w).ok());
}

}  // namespace
}  // namespace chaintag
