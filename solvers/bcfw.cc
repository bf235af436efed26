#include "solvers/bcfw.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "solvers/duality_gap.h"
#include "solvers/random.h"

namespace chaintag {
namespace {

// Dual iterate of BCFW: w = Σ_i w_i, ℓ = Σ_i ℓ_i, the block states v_i
// (w_i = v_i/(λn)), and the weighted-average accumulators.
struct DualIterate {
  std::vector<double> w;
  double ell = 0;
  std::vector<double> ell_block;
  std::vector<int64_t> state_offset;  // n + 1 entries into `states`
  std::vector<double> states;
  std::vector<double> average_accumulator;  // u = Σ_s s(s−1)/2 · Δw_s
  double ell_accumulator = 0;               // Σ_s s(s−1)/2 · Δℓ_s
  int64_t steps = 0;                        // K
};

// Weight of w^(K) in w̄ = w − average_scale·u, i.e. 2/(K(K+1)).
double AverageScale(int64_t steps) {
  if (steps == 0) return 0;
  const double k = static_cast<double>(steps);
  return 2.0 / (k * (k + 1.0));
}

// ‖w − scale·u‖² without forming the difference.
double SquaredNormOfDifference(const double* w, double scale, const double* u,
                               int64_t dim) {
  double sum = 0;
  for (int64_t j = 0; j < dim; ++j) {
    const double x = w[j] - scale * u[j];
    sum += x * x;
  }
  return sum;
}

}  // namespace

absl::StatusOr<TrainingSummary> BcfwSolver::Solve(const Problem& problem,
                                                  Monitor* monitor,
                                                  std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  if (n <= 0) return absl::InvalidArgumentError("bcfw: no training examples");
  const double lambda = ResolveLambda(config_, n);
  const bool averaging = config_.weighted_averaging();
  const int threads = std::max(1, config_.num_threads());

  DualIterate it;
  it.w.assign(dim, 0.0);
  it.ell_block.assign(n, 0.0);
  it.state_offset.resize(n + 1);
  it.state_offset[0] = 0;
  for (int i = 0; i < n; ++i) {
    it.state_offset[i + 1] = it.state_offset[i] + problem.BlockStateSize(i);
  }
  it.states.resize(it.state_offset[n]);
  for (int i = 0; i < n; ++i) {
    problem.InitBlockState(i, it.states.data() + it.state_offset[i]);
  }
  if (averaging) it.average_accumulator.assign(dim, 0.0);
  std::vector<double> average;  // w̄, materialised when read
  int64_t average_steps = -1;   // it.steps when `average` was formed
  const std::vector<double> no_point;

  // The returned point: w̄ (formed into `average`) or w itself.
  auto returned_point = [&]() -> const std::vector<double>& {
    if (!averaging) return it.w;
    average.resize(dim);
    if (average_steps == it.steps) return average;  // already current
    average_steps = it.steps;
    const double scale = AverageScale(it.steps);
    const double* w = it.w.data();
    const double* u = it.average_accumulator.data();
    for (int64_t j = 0; j < dim; ++j) average[j] = w[j] - scale * u[j];
    return average;
  };
  auto returned_ell = [&]() {
    return averaging ? it.ell - AverageScale(it.steps) * it.ell_accumulator
                     : it.ell;
  };

  SolverRandom random(config_.seed());
  std::vector<int> order;
  OracleResult oracle;
  const absl::Time start = absl::Now();
  const double max_seconds = config_.max_seconds();
  auto elapsed = [&] { return absl::ToDoubleSeconds(absl::Now() - start); };

  TrainingSummary summary;
  summary.set_solver("bcfw");
  summary.set_lambda(lambda);
  summary.set_num_examples(n);
  summary.set_dim(dim);
  int64_t oracle_calls = 0;
  std::string stop_reason = "max_passes";
  DualityGap last_gap;
  bool have_gap = false;

  for (int pass = 1; pass <= config_.max_passes(); ++pass) {
    if (config_.sampling() == SolverConfig::PERMUTATION) {
      random.Permutation(n, &order);
    }
    bool out_of_time = false;
    for (int j = 0; j < n; ++j) {
      const int i = config_.sampling() == SolverConfig::PERMUTATION
                        ? order[j]
                        : static_cast<int>(random.Uniform(n));
      double* state = it.states.data() + it.state_offset[i];
      problem.MaxOracle(i, it.w.data(), state, &oracle);
      ++oracle_calls;
      // Block gap g_i = λ⟨w_i − w_s, w⟩ − ℓ_i + ℓ_s with w_i = v_i/(λn)
      // and w_s = ψ_i(y*)/(λn).
      const double ell_corner = oracle.loss / n;
      const double block_gap =
          (oracle.state_dot - oracle.score) / n - it.ell_block[i] + ell_corner;
      double gamma;
      if (config_.line_search()) {
        const double distance = problem.StateDistanceSquared(i, state,
                                                             oracle.corner) /
                                (lambda * n * n);  // λ‖w_i − w_s‖²
        gamma = distance > 0 ? std::clamp(block_gap / distance, 0.0, 1.0) : 0;
      } else {
        gamma = 2.0 * n / (static_cast<double>(it.steps) + 2.0 * n);
      }
      const int64_t step = ++it.steps;  // s, 1-based
      if (gamma > 0) {
        const double c = gamma / (lambda * n);
        problem.AddCornerMinusState(i, oracle.corner, state, c, it.w.data());
        const double delta_ell = gamma * (ell_corner - it.ell_block[i]);
        if (averaging) {
          const double weight =
              0.5 * static_cast<double>(step) * static_cast<double>(step - 1);
          if (weight > 0) {
            problem.AddCornerMinusState(i, oracle.corner, state, c * weight,
                                        it.average_accumulator.data());
          }
          it.ell_accumulator += weight * delta_ell;
        }
        it.ell += delta_ell;
        it.ell_block[i] += delta_ell;
        problem.MixCorner(i, oracle.corner, gamma, state);
      }
      if (max_seconds > 0 && (j & 63) == 0 && elapsed() >= max_seconds) {
        out_of_time = true;
        break;
      }
    }

    const bool last_pass = pass == config_.max_passes() || out_of_time;
    const bool check_gap =
        pass % config_.gap_check() == 0 || (last_pass && config_.final_gap());
    PassRecord record;
    record.set_solver("bcfw");
    record.set_pass(pass);
    record.set_lambda(lambda);
    const double ell = returned_ell();
    // w̄ is formed (O(dim) writes) only when something reads it; the dual
    // alone needs just ‖w̄‖², computed on the fly.
    const bool need_point =
        check_gap || last_pass ||
        (monitor != nullptr && monitor->WantsEvaluation(pass, last_pass));
    const std::vector<double>& point = need_point ? returned_point() : no_point;
    if (check_gap) {
      last_gap = ComputeDualityGap(problem, point.data(), ell, lambda, threads);
      have_gap = true;
      oracle_calls += n;
      record.set_primal(last_gap.primal);
      record.set_dual(last_gap.dual);
      record.set_gap(last_gap.gap);
      record.set_gap_exact(true);
    } else {
      const double norm = need_point  ? SquaredNorm(point.data(), dim)
                          : averaging ? SquaredNormOfDifference(
                                            it.w.data(), AverageScale(it.steps),
                                            it.average_accumulator.data(), dim)
                                      : SquaredNorm(it.w.data(), dim);
      record.set_dual(ell - 0.5 * lambda * norm);
    }
    const bool converged = check_gap && last_gap.gap <= config_.gap_tolerance();
    if (converged) {
      stop_reason = "gap_tolerance";
    } else if (out_of_time) {
      stop_reason = "max_seconds";
    }
    record.set_oracle_calls(oracle_calls);
    record.set_effective_passes(static_cast<double>(oracle_calls) / n);
    record.set_seconds(elapsed());
    const bool final_pass = last_pass || converged;
    if (monitor != nullptr) {
      absl::Status status = monitor->Record(record, point, final_pass);
      if (!status.ok()) return status;
    }
    summary.set_passes(pass);
    if (final_pass) break;
  }

  // Hand over the buffer instead of copying: at this size a copy is the
  // run's peak memory. The last pass has already formed w̄.
  if (averaging) returned_point();
  *w_out = averaging ? std::move(average) : std::move(it.w);
  summary.set_oracle_calls(oracle_calls);
  summary.set_seconds(elapsed());
  if (have_gap) {
    summary.set_primal(last_gap.primal);
    summary.set_dual(last_gap.dual);
    summary.set_gap(last_gap.gap);
  }
  summary.set_stop_reason(stop_reason);
  return summary;
}

}  // namespace chaintag
