#include "solvers/ssg.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "solvers/duality_gap.h"
#include "solvers/random.h"

namespace chaintag {

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

  std::vector<double> w(dim, 0.0);
  std::vector<double> average;
  if (averaging) average.assign(dim, 0.0);
  const std::vector<double>& point = averaging ? average : w;

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
      problem.MaxOracle(i, w.data(), nullptr, &oracle);
      ++oracle_calls;
      const double gamma = 1.0 / (static_cast<double>(k) + 1.0);
      const double keep = 1.0 - gamma;
      for (int64_t d = 0; d < dim; ++d) w[d] *= keep;
      problem.AddScaled(i, oracle.corner, gamma / lambda, w.data());
      if (averaging) {
        const double rho = 2.0 / (static_cast<double>(k) + 2.0);
        for (int64_t d = 0; d < dim; ++d) {
          average[d] = (1 - rho) * average[d] + rho * w[d];
        }
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

  *w_out = averaging ? std::move(average) : std::move(w);
  summary.set_oracle_calls(oracle_calls);
  summary.set_seconds(elapsed());
  if (have_primal) summary.set_primal(primal);
  summary.set_stop_reason(stop_reason);
  return summary;
}

}  // namespace chaintag
