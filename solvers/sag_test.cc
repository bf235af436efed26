// The sag solver on small multiclass problems: its lazy, mini-batched steps
// against a dense textbook SAG / SAGA written here (the same draws), its
// optimum and certificate against the enumerated objective, with and
// without the elastic net, its independence of the thread count, and a
// problem that fixes some coordinates at 0 solved over the others.

#include "solvers/sag.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "base/random.h"
#include "gtest/gtest.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

constexpr double kLambda = 0.1;

const Smoothing kEntropy{Smoothing::Kind::kEntropy, 1.0, 1};

MulticlassProblem SparseProblem(int n, int features, int classes,
                                uint32_t seed) {
  return SparseMulticlassProblem(n, features, classes, seed);
}

SolverConfig SagConfig() {
  SolverConfig config;
  config.set_name("sag");
  config.set_objective(SolverConfig::LOG_SUM_EXP);
  config.set_lambda(kLambda);
  config.mutable_sag()->set_learning_rate(0.5);
  config.set_max_passes(2);
  config.set_gap_check(1000);
  config.set_seed(5);
  config.set_num_threads(1);
  return config;
}

TrainingSummary RunSag(const Problem& problem, const SolverConfig& config,
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

double SoftThreshold(double x, double t) {
  return x > t ? x - t : (x < -t ? x + t : 0.0);
}

// The textbook solver: dense vectors, every coordinate every step. A batch
// of τ examples is drawn, their gradients taken at the same w; ḡ gains the
// changes of their stored gradients, then w takes τ steps
// w ← S_{ηℓ1}(w − η(ḡ + λw)), the first also − η·Σ scale·(∇_new − ∇_old)
// for SAGA.
std::vector<double> DenseSag(const Problem& problem, const SolverConfig& config,
                             int passes) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  const double eta = config.sag().learning_rate();
  const double l1 = config.l1();
  const bool saga = config.sag().variant() == SolverConfig::SAGA;
  const int batch = config.minibatch();
  // Catalyst: the steps' objective gains κ/2‖w − z‖², z moved every
  // catalyst_passes passes to w + β(w − w_prev).
  const double kappa = config.sag().catalyst_kappa();
  const double q = kLambda / (kLambda + kappa);
  const double beta = (1 - std::sqrt(q)) / (1 + std::sqrt(q));
  std::vector<double> center(dim, 0.0), previous(dim, 0.0);
  std::vector<double> w(dim, 0.0), average(dim, 0.0);
  std::vector<std::vector<double>> stored(n);
  for (int i = 0; i < n; ++i) {
    stored[i] = SmoothGradient(problem, i, w);
    for (int64_t j = 0; j < dim; ++j) average[j] += stored[i][j] / n;
  }
  // The sampling distribution: ½/n + ½·s_i/Σs, s_i the touched coordinates.
  std::vector<double> probability(n, 1.0 / n), cumulative(n);
  if (config.sag().nonuniform_sampling()) {
    std::vector<double> sizes(n);
    double total = 0;
    for (int i = 0; i < n; ++i) {
      std::vector<CoordinateRange> ranges;
      problem.TouchedRanges(i, &ranges);
      for (const CoordinateRange& range : ranges) sizes[i] += range.length;
      total += sizes[i];
    }
    for (int i = 0; i < n; ++i)
      probability[i] = 0.5 / n + 0.5 * sizes[i] / total;
  }
  double sum = 0;
  for (int i = 0; i < n; ++i) cumulative[i] = sum += probability[i];
  SolverRandom random(config.seed());
  auto draw = [&]() {
    if (!config.sag().nonuniform_sampling()) {
      return static_cast<int>(random.Uniform(n));
    }
    const double u = random.UniformDouble() * cumulative.back();
    return static_cast<int>(std::min<ptrdiff_t>(
        std::upper_bound(cumulative.begin(), cumulative.end(), u) -
            cumulative.begin(),
        n - 1));
  };
  for (int pass = 0; pass < passes; ++pass) {
    for (int t = 0; t < n; t += batch) {
      const int size = std::min(batch, n - t);
      std::vector<int> members(size);
      std::vector<std::vector<double>> fresh(size);
      for (int k = 0; k < size; ++k) members[k] = draw();
      for (int k = 0; k < size; ++k) {
        fresh[k] = SmoothGradient(problem, members[k], w);
      }
      // The stored gradients and their average take the batch's, then w
      // takes τ steps, the first with the SAGA corrections.
      std::vector<double> correction(dim, 0.0);
      for (int k = 0; k < size; ++k) {
        const int i = members[k];
        const double scale = 1.0 / (n * probability[i]);
        for (int64_t j = 0; j < dim; ++j) {
          const double change = fresh[k][j] - stored[i][j];
          average[j] += change / n;
          if (saga) correction[j] += scale * change;
        }
        stored[i] = fresh[k];
      }
      for (int step = 0; step < size; ++step) {
        for (int64_t j = 0; j < dim; ++j) {
          double direction =
              average[j] + kLambda * w[j] + kappa * (w[j] - center[j]);
          if (step == 0) direction += correction[j];
          w[j] = SoftThreshold(w[j] - eta * direction, eta * l1);
        }
      }
    }
    if (kappa > 0 && (pass + 1) % config.sag().catalyst_passes() == 0) {
      for (int64_t j = 0; j < dim; ++j) {
        center[j] = w[j] + beta * (w[j] - previous[j]);
        previous[j] = w[j];
      }
    }
  }
  return w;
}

void ExpectNear(const std::vector<double>& a, const std::vector<double>& b,
                double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t j = 0; j < a.size(); ++j) {
    ASSERT_NEAR(a[j], b[j], tolerance) << "coordinate " << j;
  }
}

TEST(SagSolverTest, LazyStepsMatchTheDenseTextbookSteps) {
  const MulticlassProblem problem = SparseProblem(30, 12, 3, 4);
  struct Case {
    SolverConfig::SagVariant variant;
    double l1;
    int batch;
    bool nonuniform;
    double kappa = 0;
    int catalyst_passes = 1;
  };
  for (const Case& c : {Case{SolverConfig::SAG, 0, 1, false},
                        Case{SolverConfig::SAGA, 0, 1, false},
                        Case{SolverConfig::SAG, 0.05, 1, false},
                        Case{SolverConfig::SAGA, 0.05, 1, true},
                        Case{SolverConfig::SAG, 0.02, 4, true},
                        Case{SolverConfig::SAGA, 0.02, 7, false},
                        Case{SolverConfig::SAGA, 0, 1, true, 0.4, 1},
                        Case{SolverConfig::SAGA, 0.05, 3, true, 0.4, 2},
                        Case{SolverConfig::SAG, 0.02, 1, false, 0.2, 1}}) {
    SCOPED_TRACE(testing::Message()
                 << "variant " << c.variant << " l1 " << c.l1 << " batch "
                 << c.batch << " nonuniform " << c.nonuniform << " kappa "
                 << c.kappa << " every " << c.catalyst_passes);
    SolverConfig config = SagConfig();
    config.mutable_sag()->set_variant(c.variant);
    config.set_l1(c.l1);
    config.set_minibatch(c.batch);
    config.mutable_sag()->set_nonuniform_sampling(c.nonuniform);
    config.mutable_sag()->set_catalyst_kappa(c.kappa);
    config.mutable_sag()->set_catalyst_passes(c.catalyst_passes);
    // Enough passes for the center to move more than once.
    const int passes = c.kappa > 0 ? 5 : 2;
    config.set_max_passes(passes);
    std::vector<double> w;
    RunSag(problem, config, &w);
    const std::vector<double> reference = DenseSag(problem, config, passes);
    ExpectNear(w, reference, 1e-10);
    if (c.l1 > 0) {
      // Exact zeros where the textbook steps give them.
      int zeros = 0;
      for (size_t j = 0; j < w.size(); ++j) {
        if (reference[j] == 0) {
          EXPECT_EQ(w[j], 0.0) << j;
          ++zeros;
        }
      }
      EXPECT_GT(zeros, 0);
    }
  }
}

double Objective(const MulticlassProblem& problem, const std::vector<double>& w,
                 double l1) {
  return ElasticNetObjective(problem, w, kLambda, l1);
}

std::vector<double> ProximalGradientOptimum(const Problem& problem, double l1) {
  return ElasticNetOptimum(problem, kLambda, l1);
}

// The run reaches the optimum (with and without the elastic net), its
// zeros are exact, and it stops on a certificate whose primal is the
// enumerated objective and whose gap is non-negative; without ℓ1 the dual
// matches the independent smoothed duality gap.
TEST(SagSolverTest, ReachesTheCertifiedOptimum) {
  const MulticlassProblem problem = SparseProblem(20, 6, 3, 8);
  for (double l1 : {0.0, 0.03}) {
    const std::vector<double> optimum = ProximalGradientOptimum(problem, l1);
    for (SolverConfig::SagVariant variant :
         {SolverConfig::SAG, SolverConfig::SAGA}) {
      for (double kappa : {0.0, 0.5}) {
        SCOPED_TRACE(testing::Message() << "l1 " << l1 << " variant " << variant
                                        << " kappa " << kappa);
        SolverConfig config = SagConfig();
        config.mutable_sag()->set_variant(variant);
        config.mutable_sag()->set_catalyst_kappa(kappa);
        config.mutable_sag()->set_catalyst_passes(2);
        config.mutable_sag()->set_learning_rate(0.05);
        config.set_l1(l1);
        config.set_max_passes(3000);
        config.set_gap_check(5);
        config.set_gap_tolerance(1e-12);
        std::vector<double> w;
        const TrainingSummary summary = RunSag(problem, config, &w);
        EXPECT_EQ(summary.stop_reason(), "gap_tolerance");
        EXPECT_GE(summary.gap(), -1e-12);
        EXPECT_LE(summary.gap(), 1e-12);
        EXPECT_NEAR(summary.primal(), Objective(problem, w, l1), 1e-12);
        // λ-strong convexity: ‖w − w*‖² ≤ 2·gap/λ.
        ExpectNear(w, optimum, 1e-5);
        EXPECT_NEAR(summary.primal(), Objective(problem, optimum, l1), 1e-10);
        if (l1 > 0) {
          int zeros = 0;
          for (size_t j = 0; j < w.size(); ++j) {
            if (optimum[j] == 0) {
              EXPECT_EQ(w[j], 0.0) << j;
              ++zeros;
            }
          }
          EXPECT_GT(zeros, 2);
        } else {
          const DualityGap independent =
              SmoothedDualityGap(problem, w.data(), kLambda, kEntropy, 1);
          EXPECT_NEAR(summary.primal(), independent.primal, 1e-12);
          EXPECT_NEAR(summary.dual(), independent.dual, 1e-12);
        }
      }
    }
  }
}

// A certificate is a lower bound wherever the run stands: at every pass the
// dual lies below the optimum's objective.
TEST(SagSolverTest, EveryCertificateBoundsTheOptimum) {
  const MulticlassProblem problem = SparseProblem(20, 6, 3, 8);
  for (double l1 : {0.0, 0.03}) {
    const double optimum =
        Objective(problem, ProximalGradientOptimum(problem, l1), l1);
    SolverConfig config = SagConfig();
    config.mutable_sag()->set_variant(SolverConfig::SAGA);
    config.set_l1(l1);
    config.set_gap_check(1);
    for (int passes : {1, 2, 5, 20}) {
      config.set_max_passes(passes);
      std::vector<double> w;
      const TrainingSummary summary = RunSag(problem, config, &w);
      EXPECT_LE(summary.dual(), optimum + 1e-12) << l1 << " " << passes;
      EXPECT_GE(summary.primal(), optimum - 1e-12) << l1 << " " << passes;
    }
  }
}

// The certificate's dual is the best over the scaled gradients s·v_i, s in
// [0, 1]: checked against a fine grid of s, never below s = 1's value, and
// 0 when the terms are not positive.
TEST(SagSolverTest, TheCertificateTakesTheBestScaleOfTheGradients) {
  const std::vector<double> w = {0.5, -1, 0, 2};
  const std::vector<double> gradient = {0.3, -2.0, 0.05, 1.2};
  const double lambda = 0.1, term_sum = 2.0, loss_sum = 7.0;
  const int n = 4;
  for (double l1 : {0.0, 0.1}) {
    for (double scale : {1.0, -0.5}) {
      auto dual_at = [&](double s) {
        double conjugate = 0;
        for (double g : gradient) {
          const double excess = s * std::fabs(scale * g) - l1;
          if (excess > 0) conjugate += excess * excess / (2 * lambda);
        }
        return s * term_sum / n - conjugate;
      };
      double best = dual_at(1);
      for (int k = 0; k <= 100000; ++k) best = std::max(best, dual_at(k / 1e5));
      const DualityGap certificate =
          SmoothCertificate(w.data(), w.size(), loss_sum, term_sum, n,
                            gradient.data(), scale, lambda, l1);
      EXPECT_NEAR(certificate.dual, best, 1e-9) << l1 << " " << scale;
      EXPECT_GT(certificate.dual, dual_at(1) + 1) << l1 << " " << scale;
      const double primal =
          loss_sum / n + 0.5 * lambda * (0.25 + 1 + 4) + l1 * (0.5 + 1 + 2);
      EXPECT_DOUBLE_EQ(certificate.primal, primal);
      EXPECT_DOUBLE_EQ(certificate.gap, primal - certificate.dual);
      const DualityGap negative =
          SmoothCertificate(w.data(), w.size(), loss_sum, -1.0, n,
                            gradient.data(), scale, lambda, l1);
      EXPECT_EQ(negative.dual, 0.0);
    }
  }
}

// The same with thousands of gradient entries of spread magnitudes, where
// the bisection sets most terms aside as active or inactive early: the
// best scale against a ternary search on the concave dual, for brackets
// that end at s = 1, inside, and near 0.
TEST(SagSolverTest, TheCertificateFindsTheBestScaleAmongManyGradients) {
  std::mt19937 rng(23);
  std::lognormal_distribution<double> magnitude(0, 2);
  std::vector<double> gradient(5000), w(gradient.size(), 0.0);
  for (double& g : gradient) g = (rng() % 2 ? 1 : -1) * magnitude(rng);
  const double lambda = 0.5, l1 = 0.3;
  const int n = 10;
  for (double term_sum : {1e6, 50.0, 1e-3}) {
    auto dual_at = [&](double s) {
      double conjugate = 0;
      for (double g : gradient) {
        const double excess = s * std::fabs(g) - l1;
        if (excess > 0) conjugate += excess * excess / (2 * lambda);
      }
      return s * term_sum / n - conjugate;
    };
    double low = 0, high = 1;
    for (int step = 0; step < 200; ++step) {
      const double a = low + (high - low) / 3, b = high - (high - low) / 3;
      (dual_at(a) < dual_at(b) ? low : high) = dual_at(a) < dual_at(b) ? a : b;
    }
    const double best = std::max(dual_at(1), dual_at(0.5 * (low + high)));
    const DualityGap certificate = SmoothCertificate(
        w.data(), w.size(), 0.0, term_sum, n, gradient.data(), 1.0, lambda, l1);
    EXPECT_NEAR(certificate.dual, best, 1e-12 * std::fabs(best) + 1e-15)
        << term_sum;
    EXPECT_LE(certificate.dual, best + 1e-12 * std::fabs(best)) << term_sum;
  }
}

TEST(SagSolverTest, TheThreadCountChangesNothing) {
  const MulticlassProblem problem = SparseProblem(40, 10, 4, 2);
  SolverConfig config = SagConfig();
  config.mutable_sag()->set_variant(SolverConfig::SAGA);
  config.set_l1(0.01);
  config.set_minibatch(5);
  config.set_max_passes(4);
  std::vector<double> one, two;
  RunSag(problem, config, &one);
  config.set_num_threads(2);
  RunSag(problem, config, &two);
  EXPECT_EQ(one, two);
}

// On a problem with FreeCoordinates sag minimises over them, keeping its
// vectors there: the w it returns, and the one its monitor evaluates, hold
// the free coordinates alone; it reaches the optimum lbfgs certifies for
// the same restricted problem, with and without ℓ1, by SAG and SAGA; its
// mini-batches give the same w on any thread count.
TEST(SagSolverTest, ARestrictedProblemIsSolvedOverItsFreeCoordinates) {
  const RestrictedProblem problem(SparseProblem(40, 6, 3, 8));
  std::vector<int64_t> free;
  ASSERT_TRUE(problem.FreeCoordinates(&free));
  ASSERT_LT(free.size(), static_cast<size_t>(problem.Dim()));
  for (double l1 : {0.0, 0.01}) {
    SolverConfig lbfgs = SagConfig();
    lbfgs.set_name("lbfgs");
    lbfgs.set_l1(l1);
    lbfgs.set_max_passes(500);
    lbfgs.set_gap_check(1);
    lbfgs.set_gap_tolerance(1e-12);
    lbfgs.mutable_lbfgs()->set_delta(0);
    lbfgs.mutable_lbfgs()->set_epsilon(0);
    std::vector<double> reference;
    const TrainingSummary best = RunSag(problem, lbfgs, &reference);
    ASSERT_EQ(best.stop_reason(), "gap_tolerance");
    for (SolverConfig::SagVariant variant :
         {SolverConfig::SAG, SolverConfig::SAGA}) {
      SCOPED_TRACE(testing::Message() << "l1 " << l1 << " variant " << variant);
      SolverConfig config = SagConfig();
      config.mutable_sag()->set_variant(variant);
      config.mutable_sag()->set_learning_rate(0.05);
      config.set_l1(l1);
      config.set_max_passes(3000);
      config.set_gap_check(5);
      config.set_gap_tolerance(1e-12);
      std::vector<double> w, evaluated;
      absl::StatusOr<TrainingSummary> summary =
          SolveReportingLastPoint(problem, config, &w, &evaluated);
      ASSERT_TRUE(summary.ok()) << summary.status();
      EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
      EXPECT_LE(summary->gap(), 1e-12);
      ASSERT_EQ(w.size(), free.size());
      EXPECT_EQ(evaluated, w);
      ExpectNear(w, reference, 1e-5);
      EXPECT_NEAR(summary->primal(), best.primal(), 1e-11);
      absl::StatusOr<std::vector<double>> all =
          WeightsInAllCoordinates(problem, w);
      ASSERT_TRUE(all.ok()) << all.status();
      EXPECT_NEAR(summary->primal(), Objective(problem, *all, l1), 1e-12);
    }
  }
  SolverConfig config = SagConfig();
  config.mutable_sag()->set_variant(SolverConfig::SAGA);
  config.set_l1(0.01);
  config.set_minibatch(5);
  config.set_max_passes(4);
  std::vector<double> one;
  RunSag(problem, config, &one);
  EXPECT_EQ(one.size(), free.size());
  for (int threads : {2, 3}) {
    config.set_num_threads(threads);
    std::vector<double> more;
    RunSag(problem, config, &more);
    EXPECT_EQ(more, one) << threads;
  }
}

// Unset, κ is 0.5/(ηn) − λ under weak regularization and none otherwise.
// A step that overshoots (ηλ = 0.95, four examples a batch) makes the
// primal rise between certificates: each rise by more than 1% of the gap
// halves η, and only such a rise, until the run reaches the certified
// optimum. A step that fits never halves.
TEST(SagSolverTest, AnOvershootingStepHalvesUntilTheRunConverges) {
  const MulticlassProblem problem = SparseProblem(20, 6, 3, 8);
  const std::vector<double> optimum = ProximalGradientOptimum(problem, 0);
  for (double rate : {9.5, 0.05}) {
    SCOPED_TRACE(rate);
    SolverConfig config = SagConfig();
    config.mutable_sag()->set_learning_rate(rate);
    config.mutable_sag()->set_catalyst_kappa(0);
    config.set_minibatch(4);
    config.set_max_passes(3000);
    config.set_gap_check(1);
    config.set_gap_tolerance(1e-12);
    std::vector<double> w;
    std::vector<PassRecord> records;
    const TrainingSummary summary = RunSag(problem, config, &w, &records);
    EXPECT_EQ(summary.stop_reason(), "gap_tolerance");
    ExpectNear(w, optimum, 1e-5);
    int halvings = 0;
    for (size_t k = 1; k < records.size(); ++k) {
      const bool rose = records[k].primal() - records[k - 1].primal() >
                        0.01 * records[k].gap();
      EXPECT_EQ(records[k].has_learning_rate(), rose) << "pass " << k + 1;
      if (!records[k].has_learning_rate()) continue;
      rate /= 2;
      ++halvings;
      EXPECT_EQ(records[k].learning_rate(), rate);
    }
    EXPECT_FALSE(records[0].has_learning_rate());
    EXPECT_EQ(halvings > 0, config.sag().learning_rate() > 1) << halvings;
  }
}

TEST(SagSolverTest, ChoosesCatalystForWeakRegularization) {
  const MulticlassProblem problem = SparseProblem(30, 12, 3, 4);
  auto weights = [&](double lambda, double kappa, bool set_kappa) {
    SolverConfig config = SagConfig();
    config.set_lambda(lambda);
    config.set_max_passes(4);
    if (set_kappa) config.mutable_sag()->set_catalyst_kappa(kappa);
    std::vector<double> w;
    RunSag(problem, config, &w);
    return w;
  };
  const double eta_n = 0.5 * 30;
  // Weak: ηnλ = 0.0015.
  const std::vector<double> automatic = weights(1e-4, 0, false);
  EXPECT_EQ(automatic, weights(1e-4, 0.5 / eta_n - 1e-4, true));
  EXPECT_NE(automatic, weights(1e-4, 0, true));
  // Strong: ηnλ = 1.5, no Catalyst.
  EXPECT_EQ(weights(kLambda, 0, false), weights(kLambda, 0, true));
}

TEST(SagSolverTest, RejectsBadConfigs) {
  const MulticlassProblem problem = SparseProblem(5, 3, 2, 1);
  auto refused = [&](const SolverConfig& config) {
    absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
    if (!solver.ok()) return absl::IsInvalidArgument(solver.status());
    std::vector<double> w;
    return absl::IsInvalidArgument(
        (*solver)->Solve(problem, nullptr, &w).status());
  };
  SolverConfig config = SagConfig();
  config.set_objective(SolverConfig::MAX_MARGIN);
  EXPECT_TRUE(refused(config));
  config = SagConfig();
  config.mutable_sag()->set_learning_rate(0);
  EXPECT_TRUE(refused(config));
  config.mutable_sag()->set_learning_rate(1 / kLambda);  // a = 1 − ηλ = 0
  EXPECT_TRUE(refused(config));
  config = SagConfig();
  config.set_l1(-1);
  EXPECT_TRUE(refused(config));
  config = SagConfig();
  config.set_minibatch(0);
  EXPECT_TRUE(refused(config));
  config = SagConfig();
  config.mutable_sag()->set_catalyst_kappa(-1);
  EXPECT_TRUE(refused(config));
  config = SagConfig();
  config.mutable_sag()->set_catalyst_passes(0);
  EXPECT_TRUE(refused(config));
  config = SagConfig();
  config.mutable_sag()->set_catalyst_kappa(2 - kLambda);  // η(λ + κ) = 1
  EXPECT_TRUE(refused(config));
  // The elastic net is sag's alone.
  config = SagConfig();
  config.set_name("svrg");
  config.set_l1(0.1);
  EXPECT_TRUE(refused(config));
}

}  // namespace
}  // namespace chaintag
