#include "solvers/solver_testing.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/parallel.h"
#include "gtest/gtest.h"
#include "solvers/bcfw.h"
#include "solvers/monitor.h"
#include "solvers/registry.h"

namespace chaintag {

MulticlassProblem RandomMulticlassProblem(int n, int features, int classes,
                                          uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<std::vector<double>> inputs(n, std::vector<double>(features));
  std::vector<int> gold(n);
  for (int i = 0; i < n; ++i) {
    for (double& x : inputs[i]) x = normal(rng);
    gold[i] = i % classes;
  }
  return MulticlassProblem(inputs, gold, classes);
}

double ReferencePrimal(const Problem& problem, double lambda) {
  SolverConfig config;
  config.set_lambda(lambda);
  config.set_max_passes(200000);
  config.set_gap_check(5);
  config.set_gap_tolerance(1e-10);
  config.set_weighted_averaging(false);
  // Pairwise steps converge linearly: 1e-10 is reachable.
  config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  std::vector<double> w;
  BcfwSolver solver(config);
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, nullptr, &w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
  return summary->primal();
}

void ExpectOneExampleOptimum(double lambda, const std::vector<double>& w,
                             const TrainingSummary& summary) {
  const double a = lambda <= 2 ? 0.5 : 1 / lambda;
  const double primal = lambda <= 2 ? lambda / 4 : 1 - 1 / lambda;
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0], a, 1e-12) << "lambda " << lambda;
  EXPECT_NEAR(w[1], -a, 1e-12);
  EXPECT_NEAR(summary.primal(), primal, 1e-12);
  EXPECT_NEAR(summary.dual(), primal, 1e-12);
  EXPECT_EQ(summary.stop_reason(), "gap_tolerance");
}

void ExpectExactGapsAreCertificates(const std::vector<PassRecord>& records) {
  for (const PassRecord& record : records) {
    if (!record.gap_exact()) continue;
    EXPECT_GE(record.gap(), -1e-12) << "pass " << record.pass();
    EXPECT_NEAR(record.primal() - record.dual(), record.gap(), 1e-12)
        << "pass " << record.pass();
  }
}

TrainingSummary ExpectStopsOnTheTimeBudget(SolverConfig config) {
  const MulticlassProblem problem = RandomMulticlassProblem(20, 4, 3, 2);
  config.set_max_seconds(1e-9);
  config.set_gap_tolerance(0);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  EXPECT_TRUE(solver.ok()) << solver.status();
  if (!solver.ok()) return TrainingSummary();
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, nullptr, &w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (!summary.ok()) return TrainingSummary();
  EXPECT_EQ(summary->stop_reason(), "max_seconds");
  EXPECT_EQ(summary->passes(), 1);
  EXPECT_EQ(w.size(), static_cast<size_t>(problem.Dim()));
  return *summary;
}

absl::StatusOr<TrainingSummary> SolveReportingLastPoint(
    const Problem& problem, const SolverConfig& config, std::vector<double>* w,
    std::vector<double>* evaluated) {
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  if (!solver.ok()) return solver.status();
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetEvaluator("last", 1, [evaluated](absl::Span<const double> point) {
    evaluated->assign(point.begin(), point.end());
    return absl::StatusOr<double>(0.0);
  });
  return (*solver)->Solve(problem, &monitor, w);
}

DualityGap SmoothedDualityGap(const Problem& problem, const double* w,
                              double lambda, const Smoothing& smoothing,
                              int num_threads) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  // Blocks in chunks: their oracles on the threads, their sums in order,
  // holding one chunk's states at a time.
  constexpr int kChunk = 256;
  std::vector<double> w_of_q(dim, 0.0), states, losses(kChunk), dots(kChunk);
  std::vector<int64_t> offsets(kChunk + 1);
  double loss_sum = 0, dot_sum = 0;
  const double c = -1.0 / (lambda * n);  // w(q) += v_i/(lambda n)
  for (int first = 0; first < n; first += kChunk) {
    const int count = std::min(kChunk, n - first);
    for (int k = 0; k < count; ++k) {
      offsets[k + 1] = offsets[k] + problem.BlockStateSize(first + k);
    }
    states.resize(offsets[count]);
    ParallelFor(count, std::max(1, num_threads), [&](int begin, int end) {
      for (int k = begin; k < end; ++k) {
        double* state = states.data() + offsets[k];
        losses[k] = problem.SmoothedOracle(first + k, w, smoothing, state);
        dots[k] = problem.StateDot(first + k, state, w);
      }
    });
    for (int k = 0; k < count; ++k) {
      const int i = first + k;
      loss_sum += losses[k];
      dot_sum += dots[k];
      problem.AddCornerMinusState(i, problem.GoldCorner(i),
                                  states.data() + offsets[k], c, w_of_q.data());
    }
  }
  DualityGap result;
  result.primal = 0.5 * lambda * SquaredNorm(w, dim) + loss_sum / n;
  result.dual =
      (loss_sum + dot_sum) / n - 0.5 * lambda * SquaredNorm(w_of_q.data(), dim);
  result.gap = result.primal - result.dual;
  return result;
}

MulticlassProblem SparseMulticlassProblem(int n, int features, int classes,
                                          uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> pick(0, features - 1);
  std::vector<std::vector<double>> inputs(n, std::vector<double>(features));
  std::vector<int> gold(n);
  for (int i = 0; i < n; ++i) {
    for (int nonzero = 0; nonzero < 2; ++nonzero) {
      inputs[i][pick(engine)] = 2 * normal(engine);
    }
    gold[i] = i % classes;
  }
  return MulticlassProblem(std::move(inputs), std::move(gold), classes);
}

std::vector<double> SmoothGradient(const Problem& problem, int i,
                                   const std::vector<double>& w) {
  const Smoothing entropy{Smoothing::Kind::kEntropy, 1.0, 1};
  std::vector<double> state(problem.BlockStateSize(i));
  problem.SmoothedOracle(i, w.data(), entropy, state.data());
  std::vector<double> g(problem.Dim(), 0.0);
  problem.AddCornerMinusState(i, problem.GoldCorner(i), state.data(), 1.0,
                              g.data());
  return g;
}

double ElasticNetObjective(const MulticlassProblem& problem,
                           const std::vector<double>& w, double lambda,
                           double l1) {
  const int n = problem.NumExamples();
  double objective = 0;
  for (int i = 0; i < n; ++i) {
    double z = 0;
    for (int y = 0; y < problem.num_classes(); ++y) {
      z += std::exp(problem.Loss(i, {y}) -
                    MulticlassProblem::Dot(problem.Psi(i, y), w.data()));
    }
    objective += std::log(z) / n;
  }
  for (double x : w) objective += 0.5 * lambda * x * x + l1 * std::fabs(x);
  return objective;
}

std::vector<double> ElasticNetOptimum(const Problem& problem, double lambda,
                                      double l1) {
  const int n = problem.NumExamples();
  std::vector<double> w(problem.Dim(), 0.0);
  const double eta = 0.2;
  // With η ≤ 2/(L + 2λ), L the loss's curvature (at most half the mean
  // squared norm of the features, about 4 on SparseMulticlassProblem's), a
  // step contracts the distance to w* by 1 − ηλ, so ‖w − w*‖ ≤
  // ‖step‖/(ηλ): it stops once that bound is 1e-12.
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::vector<double> gradient(problem.Dim(), 0.0);
    for (int i = 0; i < n; ++i) {
      const std::vector<double> g = SmoothGradient(problem, i, w);
      for (size_t j = 0; j < w.size(); ++j) gradient[j] += g[j] / n;
    }
    double step_squared = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      const double x = w[j] - eta * (gradient[j] + lambda * w[j]);
      const double t = eta * l1;
      const double next = x > t ? x - t : (x < -t ? x + t : 0.0);
      step_squared += (next - w[j]) * (next - w[j]);
      w[j] = next;
    }
    if (std::sqrt(step_squared) <= 1e-12 * eta * lambda) break;
  }
  return w;
}

}  // namespace chaintag
