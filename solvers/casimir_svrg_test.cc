// The Catalyst outer loop of casimir_svrg against the paper's Alg. 4 written
// out here: a textbook SVRG epoch (dense vectors, both gradients recomputed)
// for each subproblem, eqs. (27)–(29) for α_k, β_k and the prox centre, the
// three warm starts, κ from L (Prop. 29 as the reference code reads it) and
// μ_k for the adaptive variant, all on the draws the solver makes.

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "solvers/problem.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

// ∇f_{i,μ}(w), dense.
std::vector<double> Gradient(const Problem& problem, int i,
                             const Smoothing& smoothing,
                             const std::vector<double>& w) {
  std::vector<double> state(problem.BlockStateSize(i));
  problem.SmoothedOracle(i, w.data(), smoothing, state.data());
  std::vector<double> g(problem.Dim(), 0.0);
  problem.AddCornerMinusState(i, problem.GoldCorner(i), state.data(), 1.0,
                              g.data());
  return g;
}

// One textbook SVRG epoch on 1/n Σ f_{i,μ}(w) + λ/2‖w‖² + κ/2‖w − z‖² from
// `start` (also the snapshot), n uniform draws from `random`; returns the
// average of w_1 … w_n.
std::vector<double> TextbookEpoch(const Problem& problem, double lambda,
                                  double kappa, double eta,
                                  const Smoothing& smoothing,
                                  const std::vector<double>& start,
                                  const std::vector<double>& center,
                                  SolverRandom* random) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  std::vector<double> full(dim, 0.0);
  for (int i = 0; i < n; ++i) {
    const std::vector<double> g = Gradient(problem, i, smoothing, start);
    for (int64_t j = 0; j < dim; ++j) full[j] += g[j] / n;
  }
  std::vector<double> w = start, sum(dim, 0.0);
  for (int t = 0; t < n; ++t) {
    const int i = static_cast<int>(random->Uniform(n));
    const std::vector<double> at_w = Gradient(problem, i, smoothing, w);
    const std::vector<double> at_snapshot =
        Gradient(problem, i, smoothing, start);
    for (int64_t j = 0; j < dim; ++j) {
      w[j] -= eta * (at_w[j] - at_snapshot[j] + full[j] + lambda * w[j] +
                     kappa * (w[j] - center[j]));
      sum[j] += w[j];
    }
  }
  for (double& x : sum) x /= n;
  return sum;
}

// α_k ≥ 0 of eq. (27), α_k²(κ_{k+1} + λ) = (1 − α_k)α_{k−1}²(κ_k + λ) + α_kλ,
// for constant κ (r = κ + λ): the positive root of
// rα² + (α_{k−1}²r − λ)α − α_{k−1}²r = 0.
double PaperAlpha(double alpha_prev, double lambda, double kappa) {
  const double r = kappa + lambda;
  const double a2r = alpha_prev * alpha_prev * r;
  const double b = a2r - lambda;
  return (-b + std::sqrt(b * b + 4 * r * a2r)) / (2 * r);
}

// β_k of eq. (29) for constant κ.
double PaperBeta(double alpha_prev, double alpha, double lambda, double kappa) {
  const double r = kappa + lambda;
  return alpha_prev * (1 - alpha_prev) * r /
         (alpha_prev * alpha_prev * r + alpha * r);
}

// At κ = λ (q = 1/2) α_0 = √q is the recursion's fixed point, so every α_k
// is 1/√2 and every β_k = (1/√2)(1 − 1/√2)/(1/2 + 1/√2) = 3 − 2√2, worked
// out by hand; from α_{k−1} = 0.6 at q = 1/4, α_k solves
// α² + 0.11α − 0.36 = 0, α_k = (-0.11 + √1.4521)/2.
TEST(CasimirRecursionTest, PaperFormulasGiveTheHandValues) {
  const double root_half = std::sqrt(0.5);
  double alpha = root_half;
  for (int k = 1; k <= 5; ++k) {
    const double next = PaperAlpha(alpha, 0.1, 0.1);
    EXPECT_NEAR(next, root_half, 1e-15);
    EXPECT_NEAR(PaperBeta(alpha, next, 0.1, 0.1), 3 - 2 * std::sqrt(2.0),
                1e-15);
    alpha = next;
  }
  EXPECT_NEAR(PaperAlpha(0.6, 1.0, 3.0), (-0.11 + std::sqrt(1.4521)) / 2,
              1e-15);
}

struct Variant {
  const char* label;
  bool adapt;
  SolverConfig::WarmStart warm_start;
};

// The solver's iterate after K epochs equals Alg. 4 run here by hand with
// the same draws.
TEST(CasimirSvrgTest, OuterLoopIsThePapersAlgorithm) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 5);
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  const double lambda = 0.1, mu = 0.5, smoothness = 10, eta_adapt = 0.05;
  const int epochs = 6;
  for (const Variant& v :
       {Variant{"const, prox centre", false, SolverConfig::PROX_CENTER},
        Variant{"const, previous iterate", false, SolverConfig::PREV_ITERATE},
        Variant{"const, extrapolation", false, SolverConfig::EXTRAPOLATION},
        Variant{"adapt, prox centre", true, SolverConfig::PROX_CENTER},
        Variant{"adapt, previous iterate", true, SolverConfig::PREV_ITERATE},
        Variant{"adapt, extrapolation", true, SolverConfig::EXTRAPOLATION}}) {
    SCOPED_TRACE(v.label);
    SolverConfig config;
    config.set_name("casimir_svrg");
    config.set_lambda(lambda);
    config.set_seed(7);
    config.set_max_passes(2 * epochs);  // 2 effective passes an epoch
    config.mutable_svrg()->set_smoothing(SolverConfig::L2_TOP_K);
    config.mutable_svrg()->set_top_k(3);
    config.mutable_svrg()->set_smoothing_mu(mu);
    config.mutable_casimir()->set_warm_start(v.warm_start);
    // const: κ = L/(n + 1) − λ (L/(n + 1) = 10/21 > λ), η = 1/(L + λ + κ);
    // adapt: κ = λ, the given η, μ_k = μ·c^{k−1}, c = √(1 − √(1/2)/2).
    double kappa, eta;
    if (v.adapt) {
      config.mutable_casimir()->set_variant(SolverConfig::CASIMIR_ADAPT);
      config.mutable_svrg()->set_learning_rate(eta_adapt);
      kappa = lambda;
      eta = eta_adapt;
    } else {
      config.mutable_svrg()->set_smoothness(smoothness);
      kappa = smoothness / (n + 1) - lambda;
      eta = 1 / (smoothness + lambda + kappa);
    }
    const double decay =
        std::sqrt(1 - 0.5 * std::sqrt(kappa / (kappa + lambda)));

    std::vector<double> w_prev(dim, 0.0), z(dim, 0.0), z_prev(dim, 0.0);
    double alpha = std::sqrt(lambda / (lambda + kappa));
    SolverRandom random(7);
    for (int k = 1; k <= epochs; ++k) {
      std::vector<double> start;
      switch (v.warm_start) {
        case SolverConfig::PREV_ITERATE:
          start = w_prev;
          break;
        case SolverConfig::EXTRAPOLATION:
          start = w_prev;
          for (int64_t j = 0; j < dim; ++j) {
            start[j] += kappa / (kappa + lambda) * (z[j] - z_prev[j]);
          }
          break;
        default:
          start = z;
      }
      Smoothing smoothing;
      smoothing.kind = Smoothing::Kind::kTopKL2;
      smoothing.top_k = 3;
      smoothing.mu = v.adapt ? mu * std::pow(decay, k - 1) : mu;
      const std::vector<double> w = TextbookEpoch(problem, lambda, kappa, eta,
                                                  smoothing, start, z, &random);
      const double next_alpha = PaperAlpha(alpha, lambda, kappa);
      const double beta = PaperBeta(alpha, next_alpha, lambda, kappa);
      alpha = next_alpha;
      z_prev = z;
      for (int64_t j = 0; j < dim; ++j) z[j] = w[j] + beta * (w[j] - w_prev[j]);
      w_prev = w;
    }

    std::vector<double> solved;
    absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
    ASSERT_TRUE(solver.ok()) << solver.status();
    absl::StatusOr<TrainingSummary> summary =
        (*solver)->Solve(problem, nullptr, &solved);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->oracle_calls(), 2 * epochs * n);
    ASSERT_EQ(solved.size(), w_prev.size());
    double largest = 0;
    for (int64_t j = 0; j < dim; ++j) {
      largest = std::max(largest, std::abs(w_prev[j]));
      EXPECT_NEAR(solved[j], w_prev[j], 1e-9) << "coordinate " << j;
    }
    EXPECT_GT(largest, 1e-3);  // the runs moved
  }
}

}  // namespace
}  // namespace chaintag
