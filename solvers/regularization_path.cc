#include "solvers/regularization_path.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/parallel.h"
#include "solvers/bcfw_run.h"

namespace chaintag {
namespace {

// The inner solver's config: the iterate travels, never the average.
absl::StatusOr<SolverConfig> InnerConfig(const Problem& problem,
                                         const SolverConfig& config) {
  if (config.name() != "bcfw" && config.name() != "active_set_bcfw") {
    return absl::InvalidArgumentError(absl::StrCat(
        "regularization path: solver '", config.name(),
        "' cannot be warm-started along a path; use bcfw (any step, "
        "sampling or cache) or active_set_bcfw"));
  }
  if (config.bcfw().box_size() > 0) {
    return absl::InvalidArgumentError(
        "regularization path: box constraints are not supported");
  }
  for (int i = 0; i < problem.NumExamples(); ++i) {
    const double loss = problem.Loss(i, problem.GoldCorner(i));
    if (loss != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("regularization path: needs L_i(y_i) = 0, but example ",
                       i, " has loss ", loss, " at its own labeling"));
    }
  }
  SolverConfig inner = config;
  inner.set_weighted_averaging(false);
  return inner;
}

double ElapsedSeconds(absl::Time start) {
  return absl::ToDoubleSeconds(absl::Now() - start);
}

double EffectivePasses(const BcfwRun& run, int n, int64_t extra_calls) {
  return static_cast<double>(run.oracle_calls() + extra_calls) / n;
}

void FillFromSolve(const TrainingSummary& summary, const BcfwRun& run,
                   PathPoint* point) {
  point->inner_passes = summary.passes();
  point->stop_reason = summary.stop_reason();
  point->gap_exact = run.block_gaps_exact();
  point->gap =
      point->gap_exact && summary.has_gap() ? summary.gap() : run.GapEstimate();
  point->ell = run.ell();
}

}  // namespace

std::vector<double> PowersOfTwo(int high, int low) {
  std::vector<double> values;
  for (int e = high; e >= low; --e) values.push_back(std::ldexp(1.0, e));
  return values;
}

DualityGap GapOnSegment(const Problem& problem, const PathPoint& point,
                        const std::vector<double>& w, double lambda,
                        int num_threads) {
  return ComputeDualityGap(problem, w.data(), point.ell * lambda / point.lambda,
                           lambda, num_threads);
}

absl::StatusOr<std::vector<PathPoint>> RunRegularizationPath(
    const Problem& problem, const SolverConfig& config,
    const PathCallback& callback) {
  absl::StatusOr<SolverConfig> inner_or = InnerConfig(problem, config);
  if (!inner_or.ok()) return inner_or.status();
  SolverConfig inner = *std::move(inner_or);
  const RegularizationPathConfig& path = config.path();
  const bool exact =
      path.mode() == RegularizationPathConfig::EPSILON_APPROXIMATE;
  const double epsilon = path.epsilon();
  const double kappa = path.kappa() > 0 ? path.kappa() : (exact ? 0.9 : 0.7);
  if (!(epsilon > 0) || !(kappa > 0 && kappa < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "regularization path: need ε > 0 and 0 < κ < 1, got ε = ", epsilon,
        ", κ = ", kappa));
  }
  inner.set_gap_tolerance(kappa * epsilon);
  inner.set_exact_gap_when_converged(exact);
  if (!exact) {
    // The heuristic path never runs an exact pass (the reference code's
    // gap_check = 10000, true_gap_when_converged = 0).
    inner.set_gap_check(std::max(inner.gap_check(), 10000));
    inner.set_final_gap(false);
  }

  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  const int threads = std::max(1, config.num_threads());
  const absl::Time start = absl::Now();
  // The inner solver's own checks, before the initialisation's passes
  // (constructing a run allocates nothing).
  absl::Status valid = BcfwRun(inner, problem).Validate();
  if (!valid.ok()) return valid;

  // λ∞ (Algorithm 6): the max-loss labelings ỹ_i (the oracle at w = 0),
  // ψ̃ = 1/n Σ ψ_i(ỹ_i), θ_i = max_y −⟨ψ̃, ψ_i(y)⟩ by plain decoding.
  std::vector<Corner> max_loss(n);
  std::vector<double> theta(n), tilde_score(n);
  // Still all zeros here: the oracle's w = 0.
  std::vector<double> psi_tilde(dim, 0.0);
  ParallelFor(n, threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = begin; i < end; ++i) {
      problem.MaxOracle(i, psi_tilde.data(), nullptr, &result);
      max_loss[i] = result.corner;
    }
  });
  for (int i = 0; i < n; ++i) {
    problem.AddScaled(i, max_loss[i], 1.0 / n, psi_tilde.data());
  }
  ParallelFor(n, threads, [&](int begin, int end) {
    Corner decoded;
    for (int i = begin; i < end; ++i) {
      problem.Decode(i, psi_tilde.data(), &decoded);
      theta[i] = -problem.Score(i, psi_tilde.data(), decoded);
      tilde_score[i] = problem.Score(i, psi_tilde.data(), max_loss[i]);
    }
  });
  // The initialisation's two passes (max-loss oracle, decoding at ψ̃).
  const int64_t initial_calls = 2 * static_cast<int64_t>(n);
  double theta_sum = 0;
  for (double t : theta) theta_sum += t;
  const double numerator = SquaredNorm(psi_tilde.data(), dim) + theta_sum / n;
  std::vector<PathPoint> points;
  if (!(numerator > 0)) {
    // ψ̃ = 0 (so every θ_i = 0): the bound below is 0 at every λ, so w = 0
    // (α_i on ỹ_i) is optimal for every λ.
    PathPoint point;
    point.lambda = std::numeric_limits<double>::infinity();
    point.gap_exact = true;
    point.cumulative_passes = static_cast<double>(initial_calls) / n;
    point.seconds = ElapsedSeconds(start);
    point.stop_reason = "zero_loss";
    if (callback) {
      absl::Status status = callback(point, psi_tilde);
      if (!status.ok()) return status;
    }
    points.push_back(point);
    return points;
  }
  const double lambda_infinity = numerator / (kappa * epsilon);
  // w = ψ̃/λ∞, w_i = ψ_i(ỹ_i)/(nλ∞): g_i ≤ θ_i/(nλ∞) + λ∞⟨w_i, w⟩, and the
  // bounds sum to κε.
  std::vector<double> block_gaps(n);
  for (int i = 0; i < n; ++i) {
    block_gaps[i] = (theta[i] + tilde_score[i]) / (n * lambda_infinity);
  }
  const bool from_lambda_max =
      path.lambda_max() > 0 && path.lambda_max() < lambda_infinity;
  if (from_lambda_max) inner.set_lambda(path.lambda_max());
  BcfwRun run(inner, problem);
  PathPoint point;
  point.index = 0;
  if (from_lambda_max) {
    // A cold solve at λ_max, then the same induction.
    run.Initialize();
    run.set_refresh_block_gaps();
    absl::StatusOr<TrainingSummary> summary = run.Run(nullptr);
    if (!summary.ok()) return summary.status();
    point.lambda = run.lambda();
    FillFromSolve(*summary, run, &point);
  } else {
    run.InitializeAtCorners(lambda_infinity, max_loss, block_gaps);
    point.lambda = lambda_infinity;
    point.gap = run.GapEstimate();
    point.gap_exact = false;  // an upper bound
    point.ell = run.ell();
    point.stop_reason = "initialization";
  }
  std::vector<double> deltas;
  for (int j = 0;; ++j) {
    // Induction (Algorithm 7, with the reference code's test: the paper
    // prints it inverted).
    const double delta_sum = run.BlockDeltas(&deltas, /*allow_stale=*/!exact);
    const double tau = epsilon - run.GapEstimate();
    double rho = 0;
    bool last = false;
    if (delta_sum <= tau) {
      point.lambda_end = 0;
      last = true;
    } else {
      rho = 1.0 - tau / delta_sum;
      if (!(rho > 0 && rho <= 1)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "regularization path: at λ = ", point.lambda, " the gap (",
            run.GapEstimate(), ") exceeds ε = ", epsilon,
            " after the inner solve (stop: ", point.stop_reason,
            "); raise max_passes or max_seconds"));
      }
      point.lambda_end = rho * point.lambda;
      last = point.lambda_end < path.lambda_min() ||
             j + 1 >= path.max_breakpoints();
    }
    point.cumulative_passes = EffectivePasses(run, n, initial_calls);
    point.seconds = ElapsedSeconds(start);
    if (callback) {
      absl::Status status = callback(point, run.ReturnedPoint());
      if (!status.ok()) return status;
    }
    points.push_back(point);
    if (last) break;

    run.ScaleLambda(rho, deltas, run.block_gaps_exact());
    run.Reseed(config.seed() + j + 1);
    absl::StatusOr<TrainingSummary> summary = run.Run(nullptr);
    if (!summary.ok()) return summary.status();
    point = PathPoint();
    point.index = j + 1;
    point.lambda = run.lambda();
    FillFromSolve(*summary, run, &point);
  }
  return points;
}

absl::StatusOr<std::vector<PathPoint>> RunGridSearch(
    const Problem& problem, const SolverConfig& config,
    const std::vector<double>& lambdas, bool warm_start,
    const PathCallback& callback) {
  absl::StatusOr<SolverConfig> inner_or = InnerConfig(problem, config);
  if (!inner_or.ok()) return inner_or.status();
  SolverConfig inner = *std::move(inner_or);
  const int n = problem.NumExamples();
  const absl::Time start = absl::Now();
  std::vector<PathPoint> points;
  std::unique_ptr<BcfwRun> run;
  int64_t earlier_calls = 0;  // of the cold runs already finished
  std::vector<double> deltas;
  for (size_t k = 0; k < lambdas.size(); ++k) {
    const double lambda = lambdas[k];
    if (!(lambda > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("grid search: λ must be positive, got ", lambda));
    }
    inner.set_seed(config.seed() + k);
    if (run == nullptr || !warm_start) {
      if (run != nullptr) earlier_calls += run->oracle_calls();
      inner.set_lambda(lambda);
      run = std::make_unique<BcfwRun>(inner, problem);
      absl::Status valid = run->Validate();
      if (!valid.ok()) return valid;
      run->Initialize();
      run->set_refresh_block_gaps();
    } else {
      run->BlockDeltas(&deltas, /*allow_stale=*/false);
      run->ScaleLambda(lambda / run->lambda(), deltas, run->block_gaps_exact());
      run->Reseed(inner.seed());
    }
    absl::StatusOr<TrainingSummary> summary = run->Run(nullptr);
    if (!summary.ok()) return summary.status();
    PathPoint point;
    point.index = static_cast<int>(k);
    point.lambda = run->lambda();
    point.lambda_end = point.lambda;
    FillFromSolve(*summary, *run, &point);
    point.cumulative_passes = EffectivePasses(*run, n, earlier_calls);
    point.seconds = ElapsedSeconds(start);
    if (callback) {
      absl::Status status = callback(point, run->ReturnedPoint());
      if (!status.ok()) return status;
    }
    points.push_back(point);
  }
  return points;
}

}  // namespace chaintag
