#include "solvers/fw.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/parallel.h"
#include "solvers/duality_gap.h"

namespace chaintag {
namespace {

// The oracle pass at one w, reduced in example order.
struct FwCorner {
  std::vector<double> w_s;  // Σ_i ψ_i(y_i*)/(λn), dense
  double ell_s = 0;         // Σ_i L_i(y_i*)/n
  double hinge = 0;         // 1/n Σ_i H_i(w)
};

void OraclePass(const Problem& problem, const double* w, double lambda,
                int threads, std::vector<OracleResult>* slots,
                FwCorner* corner) {
  const int n = problem.NumExamples();
  slots->resize(n);
  ParallelFor(n, threads, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      problem.MaxOracle(i, w, nullptr, &(*slots)[i]);
    }
  });
  // Summed sequentially in index order so the result is independent of the
  // thread count; AddScaled costs O(size of example i).
  std::fill(corner->w_s.begin(), corner->w_s.end(), 0.0);
  double loss = 0, hinge = 0;
  const double c = 1.0 / (lambda * n);
  for (int i = 0; i < n; ++i) {
    const OracleResult& r = (*slots)[i];
    problem.AddScaled(i, r.corner, c, corner->w_s.data());
    loss += r.loss;
    hinge += r.loss - r.score;
  }
  corner->ell_s = loss / n;
  corner->hinge = hinge / n;
}

}  // namespace

absl::StatusOr<TrainingSummary> FwSolver::Solve(const Problem& problem,
                                                Monitor* monitor,
                                                std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  if (n <= 0) return absl::InvalidArgumentError("fw: no training examples");
  const double lambda = ResolveLambda(config_, n);
  const int threads = std::max(1, config_.num_threads());

  std::vector<double> w(dim, 0.0);
  double ell = 0;
  FwCorner corner;
  corner.w_s.assign(dim, 0.0);
  std::vector<OracleResult> slots;

  const absl::Time start = absl::Now();
  const double max_seconds = config_.max_seconds();
  auto elapsed = [&] { return absl::ToDoubleSeconds(absl::Now() - start); };

  TrainingSummary summary;
  summary.set_solver("fw");
  summary.set_lambda(lambda);
  summary.set_num_examples(n);
  summary.set_dim(dim);
  std::string stop_reason = "max_passes";
  int64_t oracle_calls = 0;
  DualityGap gap;  // at the current w

  // The oracle pass at the current w: the next corner and the exact gap.
  auto evaluate = [&] {
    OraclePass(problem, w.data(), lambda, threads, &slots, &corner);
    oracle_calls += n;
    const double norm = SquaredNorm(w.data(), dim);
    double w_dot_ws = 0;
    for (int64_t j = 0; j < dim; ++j) w_dot_ws += w[j] * corner.w_s[j];
    gap.dual = ell - 0.5 * lambda * norm;
    // λ⟨w, w − w_s⟩ − ℓ + ℓ_s; equal to primal − dual with the primal's
    // hinge term Σ(L − ⟨w,ψ⟩)/n, but written as the Frank-Wolfe gap.
    gap.gap = lambda * (norm - w_dot_ws) - ell + corner.ell_s;
    gap.primal = gap.dual + gap.gap;
  };
  evaluate();

  // Every record carries the exact gap of the point the solver would return.
  auto report = [&](int pass, bool final_pass) -> absl::Status {
    if (monitor == nullptr) return absl::OkStatus();
    PassRecord record;
    record.set_solver("fw");
    record.set_pass(pass);
    record.set_lambda(lambda);
    SetCertificate(gap, &record);
    record.set_oracle_calls(oracle_calls);
    record.set_effective_passes(static_cast<double>(oracle_calls) / n);
    record.set_seconds(elapsed());
    return monitor->Record(record, w, final_pass);
  };

  int pass = 0;
  if (gap.gap <= config_.gap_tolerance()) {
    // Already optimal at w = 0: report it as pass 0, without a step.
    stop_reason = "gap_tolerance";
    absl::Status status = report(0, true);
    if (!status.ok()) return status;
  }
  while (stop_reason != "gap_tolerance" && pass < config_.max_passes()) {
    ++pass;
    double gamma;
    if (config_.line_search()) {
      double distance = 0;  // ‖w − w_s‖²
      for (int64_t j = 0; j < dim; ++j) {
        const double d = w[j] - corner.w_s[j];
        distance += d * d;
      }
      gamma = distance > 0 ? std::clamp(gap.gap / (lambda * distance), 0.0, 1.0)
                           : 0.0;
    } else {
      gamma = 2.0 / (static_cast<double>(pass - 1) + 2.0);
    }
    for (int64_t j = 0; j < dim; ++j) {
      w[j] = (1 - gamma) * w[j] + gamma * corner.w_s[j];
    }
    ell = (1 - gamma) * ell + gamma * corner.ell_s;
    evaluate();

    const bool converged = gap.gap <= config_.gap_tolerance();
    const bool out_of_time = max_seconds > 0 && elapsed() >= max_seconds;
    if (converged) {
      stop_reason = "gap_tolerance";
    } else if (out_of_time) {
      stop_reason = "max_seconds";
    }
    const bool final_pass =
        converged || out_of_time || pass == config_.max_passes();
    absl::Status status = report(pass, final_pass);
    if (!status.ok()) return status;
    if (final_pass) break;
  }

  *w_out = std::move(w);
  summary.set_passes(pass);
  summary.set_oracle_calls(oracle_calls);
  summary.set_seconds(elapsed());
  SetCertificate(gap, &summary);
  summary.set_stop_reason(stop_reason);
  return summary;
}

}  // namespace chaintag
