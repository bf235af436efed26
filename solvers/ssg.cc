#include "solvers/ssg.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/random.h"
#include "solvers/duality_gap.h"

namespace chaintag {
namespace {

// Below this the scale of w = scale·v is folded into v, long before
// v's entries could overflow.
constexpr double kMinScale = 1e-9;

}  // namespace

absl::StatusOr<TrainingSummary> SsgSolver::Solve(const Problem& problem,
                                                 Monitor* monitor,
                                                 std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  if (n <= 0) return absl::InvalidArgumentError("ssg: no training examples");
  if (config_.sampling() == SolverConfig::GAP) {
    return absl::InvalidArgumentError(
        "ssg: sampling must be UNIFORM or PERMUTATION (SSG has no block gaps)");
  }
  const double lambda = ResolveLambda(config_, n);
  const bool averaging = config_.weighted_averaging();
  const int threads = std::max(1, config_.num_threads());

  // w = scale·v, so the shrink w ← (1−γ)w costs O(1). The weighted average
  // 2/(M(M+1)) Σ_m m·w^(m) is kept the same way: with v_m = v_{m−1} + c_m ψ_m
  // and S_m = Σ_{k≤m} k·s_k, Σ_m m·s_m·v_m = S_M·v_M − u_M where
  // u_M = Σ_t c_t·S_{t−1}·ψ_t takes the same sparse updates as v.
  std::vector<double> v(dim, 0.0);
  double scale = 1;
  std::vector<double> u;
  if (averaging) u.assign(dim, 0.0);
  double weight_sum = 0;  // S_m
  std::vector<double> point;
  auto form_point = [&](int64_t steps) -> const std::vector<double>& {
    point.resize(dim);
    if (!averaging || steps == 0) {
      for (int64_t d = 0; d < dim; ++d) point[d] = scale * v[d];
      return point;
    }
    const double m = static_cast<double>(steps);
    const double normaliser = 2.0 / (m * (m + 1.0));
    for (int64_t d = 0; d < dim; ++d) {
      point[d] = normaliser * (weight_sum * v[d] - u[d]);
    }
    return point;
  };

  SolverRandom random(config_.seed());
  std::vector<int> order;
  OracleResult oracle;
  const absl::Time start = absl::Now();
  const double max_seconds = config_.max_seconds();
  auto elapsed = [&] { return absl::ToDoubleSeconds(absl::Now() - start); };

  TrainingSummary summary;
  summary.set_solver("ssg");
  summary.set_lambda(lambda);
  summary.set_num_examples(n);
  summary.set_dim(dim);
  std::string stop_reason = "max_passes";
  int64_t oracle_calls = 0;
  int64_t k = 0;  // global step, 0-based
  double primal = 0;
  bool have_primal = false;

  for (int pass = 1; pass <= config_.max_passes(); ++pass) {
    if (config_.sampling() == SolverConfig::PERMUTATION) {
      random.Permutation(n, &order);
    }
    bool out_of_time = false;
    for (int j = 0; j < n; ++j) {
      const int i = config_.sampling() == SolverConfig::PERMUTATION
                        ? order[j]
                        : static_cast<int>(random.Uniform(n));
      problem.MaxOracleScaled(i, v.data(), scale, &oracle);
      ++oracle_calls;
      const double gamma = 1.0 / (static_cast<double>(k) + 1.0);
      double shrunk = scale * (1.0 - gamma);
      // Only the first step shrinks w = 0 to nothing: restart the scale.
      if (shrunk == 0) shrunk = 1;
      const double c = gamma / (lambda * shrunk);
      if (averaging && weight_sum > 0) {
        problem.AddScaled(i, oracle.corner, c * weight_sum, u.data());
      }
      problem.AddScaled(i, oracle.corner, c, v.data());
      scale = shrunk;
      weight_sum += static_cast<double>(k + 1) * scale;
      if (scale < kMinScale) {
        // Fold the scale into v (O(dim), once in ~1/kMinScale steps); u is
        // unchanged because S scales inversely.
        for (int64_t d = 0; d < dim; ++d) v[d] *= scale;
        weight_sum /= scale;
        scale = 1;
      }
      ++k;
      if (max_seconds > 0 && (j & 63) == 0 && elapsed() >= max_seconds) {
        out_of_time = true;
        stop_reason = "max_seconds";
        break;
      }
    }

    const bool final_pass = pass == config_.max_passes() || out_of_time;
    PassRecord record;
    record.set_solver("ssg");
    record.set_pass(pass);
    record.set_lambda(lambda);
    const bool evaluate =
        monitor != nullptr && monitor->WantsEvaluation(pass, final_pass);
    if (pass % config_.gap_check() == 0 || final_pass || evaluate) {
      form_point(k);
    }
    if (pass % config_.gap_check() == 0 || final_pass) {
      primal = 0.5 * lambda * SquaredNorm(point.data(), dim) +
               AverageHingeLoss(problem, point.data(), threads);
      have_primal = true;
      oracle_calls += n;
      record.set_primal(primal);
    }
    record.set_oracle_calls(oracle_calls);
    record.set_effective_passes(static_cast<double>(oracle_calls) / n);
    record.set_seconds(elapsed());
    if (monitor != nullptr) {
      absl::Status status = monitor->Record(record, point, final_pass);
      if (!status.ok()) return status;
    }
    summary.set_passes(pass);
    if (final_pass) break;
  }

  form_point(k);
  *w_out = std::move(point);
  summary.set_oracle_calls(oracle_calls);
  summary.set_seconds(elapsed());
  if (have_primal) summary.set_primal(primal);
  summary.set_stop_reason(stop_reason);
  return summary;
}

}  // namespace chaintag
