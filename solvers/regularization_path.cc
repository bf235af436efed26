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
  if (config.objective() == SolverConfig::LOG_SUM_EXP) {
    return absl::InvalidArgumentError(
        "regularization path: the path is the hinge loss's (its breakpoints "
        "come from the block gaps of BCFW); for model.loss LOG or "
        "SOFTMAX_MARGIN give a lambda (--lambda, and --set=lambda= to turn "
        "off a config's lambda: \"path\")");
  }
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
  return static_cast<double>(run.OracleCalls() + extra_calls) / n;
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

namespace {

// The path's settings and the inner solver's config (tolerance κε; the
// heuristic mode never runs an exact pass).
struct PathPlan {
  SolverConfig inner;
  bool exact = true;
  double epsilon = 0;
  double kappa = 0;
};

absl::StatusOr<PathPlan> MakePathPlan(const Problem& problem,
                                      const SolverConfig& config) {
  absl::StatusOr<SolverConfig> inner = InnerConfig(problem, config);
  if (!inner.ok()) return inner.status();
  PathPlan plan;
  plan.inner = *std::move(inner);
  const RegularizationPathConfig& path = config.path();
  plan.exact = path.mode() == RegularizationPathConfig::EPSILON_APPROXIMATE;
  plan.epsilon = path.epsilon();
  // 0 stands for the defaults; a negative value is a mistake, not one.
  if (!(path.kappa() >= 0) || !(path.lambda_min() >= 0) ||
      !(path.lambda_max() >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "regularization path: kappa, lambda_min and lambda_max must not be "
        "negative (0 takes the default), got ",
        path.kappa(), ", ", path.lambda_min(), ", ", path.lambda_max()));
  }
  if (path.lambda_max() > 0 && path.lambda_min() > path.lambda_max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("regularization path: lambda_min (", path.lambda_min(),
                     ") is above lambda_max (", path.lambda_max(), ")"));
  }
  plan.kappa = path.kappa() > 0 ? path.kappa() : (plan.exact ? 0.9 : 0.7);
  if (!(plan.epsilon > 0) || !(plan.kappa > 0 && plan.kappa < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "regularization path: need ε > 0 and 0 < κ < 1, got ε = ", plan.epsilon,
        ", κ = ", plan.kappa));
  }
  plan.inner.set_gap_tolerance(plan.kappa * plan.epsilon);
  // The path's guarantee is an absolute ε on every segment.
  plan.inner.set_relative_gap_tolerance(0);
  plan.inner.set_exact_gap_when_converged(plan.exact);
  if (!plan.exact) {
    // The reference code's gap_check = 10000, true_gap_when_converged = 0.
    plan.inner.set_gap_check(std::max(plan.inner.gap_check(), 10000));
    plan.inner.set_final_gap(false);
  }
  // The inner solver's own checks, before the initialisation's passes
  // (constructing a run allocates nothing).
  absl::Status valid = BcfwRun(plan.inner, problem).Validate();
  if (!valid.ok()) return valid;
  return plan;
}

// What λ∞ is computed from (Algorithm 6): the max-loss labelings ỹ_i (the
// oracle at w = 0), ψ̃ = 1/n Σ ψ_i(ỹ_i), θ_i = max_y −⟨ψ̃, ψ_i(y)⟩ by plain
// decoding, and λ∞·κε = ‖ψ̃‖² + Σθ_i/n.
struct PathStart {
  std::vector<Corner> max_loss;
  std::vector<double> theta, tilde_score;
  std::vector<double> psi_tilde;
  double numerator = 0;
  // The two passes (max-loss oracle, decoding at ψ̃), in oracle calls.
  int64_t oracle_calls = 0;
};

PathStart ComputePathStart(const Problem& problem, int threads) {
  const int n = problem.NumExamples();
  PathStart start;
  start.max_loss.resize(n);
  start.theta.resize(n);
  start.tilde_score.resize(n);
  // Still all zeros while the oracle runs: its w = 0.
  start.psi_tilde.assign(problem.Dim(), 0.0);
  const double* psi_tilde = start.psi_tilde.data();
  ParallelFor(n, threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = begin; i < end; ++i) {
      problem.MaxOracle(i, psi_tilde, &result);
      start.max_loss[i] = result.corner;
    }
  });
  for (int i = 0; i < n; ++i) {
    problem.AddScaled(i, start.max_loss[i], 1.0 / n, start.psi_tilde.data());
  }
  ParallelFor(n, threads, [&](int begin, int end) {
    Corner decoded;
    for (int i = begin; i < end; ++i) {
      problem.Decode(i, psi_tilde, &decoded);
      start.theta[i] = -problem.Score(i, psi_tilde, decoded);
      start.tilde_score[i] = problem.Score(i, psi_tilde, start.max_loss[i]);
    }
  });
  start.oracle_calls = 2 * static_cast<int64_t>(n);
  double theta_sum = 0;
  for (double t : start.theta) theta_sum += t;
  start.numerator =
      SquaredNorm(start.psi_tilde.data(), problem.Dim()) + theta_sum / n;
  return start;
}

// The first breakpoint: λ∞ with w = ψ̃/λ∞, w_i = ψ_i(ỹ_i)/(nλ∞) and the
// block-gap bounds g_i ≤ θ_i/(nλ∞) + λ∞⟨w_i, w⟩ (they sum to κε); or, when
// path.lambda_max is below λ∞, a cold solve there.
absl::StatusOr<PathPoint> StartPath(const PathStart& start,
                                    double lambda_infinity, int n,
                                    BcfwRun* run) {
  PathPoint point;
  point.index = 0;
  if (run->lambda() < lambda_infinity) {
    run->Initialize();
    run->set_refresh_block_gaps();
    absl::StatusOr<TrainingSummary> summary = run->Run(nullptr);
    if (!summary.ok()) return summary.status();
    point.lambda = run->lambda();
    FillFromSolve(*summary, *run, &point);
    return point;
  }
  std::vector<double> block_gaps(n);
  for (int i = 0; i < n; ++i) {
    block_gaps[i] =
        (start.theta[i] + start.tilde_score[i]) / (n * lambda_infinity);
  }
  run->InitializeAtCorners(lambda_infinity, start.max_loss, block_gaps);
  point.lambda = lambda_infinity;
  point.gap = run->GapEstimate();
  point.gap_exact = false;  // an upper bound
  point.ell = run->ell();
  point.stop_reason = "initialization";
  return point;
}

// The end of `point`'s segment (Algorithm 7, with the reference code's
// test: the paper prints it inverted): ρ, or 0 when the point is
// ε-approximate for every smaller λ.
absl::StatusOr<double> SegmentRatio(const BcfwRun& run, double delta_sum,
                                    double epsilon, const PathPoint& point) {
  const double tau = epsilon - run.GapEstimate();
  if (delta_sum <= tau) return 0.0;
  const double rho = 1.0 - tau / delta_sum;
  if (rho > 0 && rho <= 1) return rho;
  return absl::FailedPreconditionError(
      absl::StrCat("regularization path: at λ = ", point.lambda, " the gap (",
                   run.GapEstimate(), ") exceeds ε = ", epsilon,
                   " after the inner solve (stop: ", point.stop_reason,
                   "); raise max_passes or max_seconds"));
}

// ψ̃ = 0 (so every θ_i = 0): the bound is 0 at every λ, so w = 0 (α_i on
// ỹ_i) is optimal for every λ: one point.
absl::StatusOr<std::vector<PathPoint>> ZeroLossPath(
    const PathStart& start, int n, absl::Time begin,
    const PathCallback& callback) {
  PathPoint point;
  point.lambda = std::numeric_limits<double>::infinity();
  point.gap_exact = true;
  point.cumulative_passes = static_cast<double>(start.oracle_calls) / n;
  point.seconds = ElapsedSeconds(begin);
  point.stop_reason = "zero_loss";
  if (callback) {
    absl::Status status = callback(point, start.psi_tilde);
    if (!status.ok()) return status;
  }
  return std::vector<PathPoint>{point};
}

}  // namespace

absl::StatusOr<std::vector<PathPoint>> RunRegularizationPath(
    const Problem& problem, const SolverConfig& config,
    const PathCallback& callback) {
  absl::StatusOr<PathPlan> plan = MakePathPlan(problem, config);
  if (!plan.ok()) return plan.status();
  const RegularizationPathConfig& path = config.path();
  const int n = problem.NumExamples();
  const absl::Time begin = absl::Now();
  const PathStart start =
      ComputePathStart(problem, std::max(1, config.num_threads()));
  if (!(start.numerator > 0)) {
    return ZeroLossPath(start, n, begin, callback);
  }
  const double lambda_infinity =
      start.numerator / (plan->kappa * plan->epsilon);
  if (path.lambda_max() > 0 && path.lambda_max() < lambda_infinity) {
    plan->inner.set_lambda(path.lambda_max());
  } else {
    plan->inner.set_lambda(lambda_infinity);
  }
  BcfwRun run(plan->inner, problem);
  absl::StatusOr<PathPoint> point = StartPath(start, lambda_infinity, n, &run);
  if (!point.ok()) return point.status();
  std::vector<PathPoint> points;
  std::vector<double> deltas;
  for (int j = 0;; ++j) {
    const bool out_of_time = config.max_seconds() > 0 &&
                             ElapsedSeconds(begin) >= config.max_seconds();
    const double delta_sum =
        run.BlockDeltas(&deltas, /*allow_stale=*/!plan->exact);
    absl::StatusOr<double> rho =
        SegmentRatio(run, delta_sum, plan->epsilon, *point);
    if (!rho.ok() && (InterruptRequests() > 0 || out_of_time)) {
      // An interrupted solve, or one the time budget cut: kept as a point
      // of an empty segment, so the run still delivers what it has.
      rho = 1.0;
    }
    if (!rho.ok()) return rho.status();
    point->lambda_end = *rho * point->lambda;
    const bool last = *rho == 0 || point->lambda_end < path.lambda_min() ||
                      j + 1 >= path.max_breakpoints() || out_of_time;
    if (out_of_time && *rho != 0) {
      absl::StrAppend(&point->stop_reason, kPathTimeBudgetSpent);
    }
    point->cumulative_passes = EffectivePasses(run, n, start.oracle_calls);
    point->seconds = ElapsedSeconds(begin);
    if (callback) {
      absl::Status status = callback(*point, run.ReturnedPoint());
      if (!status.ok()) return status;
    }
    points.push_back(*point);
    if (last) break;

    // Interrupted: the breakpoints so far stand; the next would not be
    // solved.
    if (InterruptRequests() > 0) break;
    run.ScaleLambda(*rho, deltas, run.block_gaps_exact());
    run.Reseed(config.seed() + j + 1);
    absl::StatusOr<TrainingSummary> summary = run.Run(nullptr);
    if (!summary.ok()) return summary.status();
    if (summary->stop_reason() == StopReasonName(StopReason::kInterrupted)) {
      break;
    }
    *point = PathPoint();
    point->index = j + 1;
    point->lambda = run.lambda();
    FillFromSolve(*summary, run, &*point);
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
      if (run != nullptr) earlier_calls += run->OracleCalls();
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
