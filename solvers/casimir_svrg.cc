#include "solvers/casimir_svrg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/random.h"
#include "solvers/duality_gap.h"
#include "solvers/svrg.h"

namespace chaintag {
namespace {

Smoothing::Kind SmoothingKindOf(SolverConfig::SmoothingKind kind) {
  switch (kind) {
    case SolverConfig::L2_TOP_K:
      return Smoothing::Kind::kTopKL2;
    case SolverConfig::ENTROPY:
      return Smoothing::Kind::kEntropy;
    default:
      return Smoothing::Kind::kNone;
  }
}

// The next Catalyst α for constant κ: the root in (0, 1] of
// α² = (1 − α)α_prev² + qα.
double NextAlpha(double alpha_prev, double q) {
  const double a2 = alpha_prev * alpha_prev;
  const double b = a2 - q;
  return 0.5 * (-b + std::sqrt(b * b + 4 * a2));
}

}  // namespace

absl::StatusOr<TrainingSummary> CasimirSvrgSolver::Solve(
    const Problem& problem, Monitor* monitor, std::vector<double>* w_out) {
  const std::string& name = config_.name();
  const bool casimir = name == "casimir_svrg";
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  if (n <= 0)
    return absl::InvalidArgumentError(name + ": no training examples");
  const double lambda = ResolveLambda(config_, n);
  const double smoothness = config_.svrg().smoothness();
  if (config_.svrg().learning_rate() < 0 || smoothness < 0 ||
      config_.casimir().kappa() < 0) {
    return absl::InvalidArgumentError(
        name + ": learning_rate, smoothness and kappa must not be negative");
  }
  if (config_.svrg().learning_rate() == 0 && smoothness == 0) {
    return absl::InvalidArgumentError(
        name + ": set learning_rate, or smoothness (L) for η = 1/(L + λ + κ)");
  }
  Smoothing smoothing;
  smoothing.kind = SmoothingKindOf(config_.svrg().smoothing());
  smoothing.top_k = config_.svrg().top_k();
  if (smoothing.kind != Smoothing::Kind::kNone &&
      !(config_.svrg().smoothing_mu() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": smoothing_mu must be positive, got ",
                     config_.svrg().smoothing_mu()));
  }
  if (smoothing.kind == Smoothing::Kind::kTopKL2 && smoothing.top_k < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": top_k must be at least 1, got ", smoothing.top_k));
  }

  // κ: none for svrg; else given, or the variant's rule.
  double kappa = 0;
  if (casimir) {
    if (config_.casimir().kappa() > 0) {
      kappa = config_.casimir().kappa();
    } else if (config_.casimir().variant() == SolverConfig::CASIMIR_ADAPT) {
      kappa = lambda;
    } else {
      if (smoothness == 0) {
        return absl::InvalidArgumentError(
            name +
            ": CASIMIR_CONST takes κ from smoothness (L); set it or "
            "kappa");
      }
      const double reduced = smoothness / (n + 1);
      kappa = reduced > lambda ? reduced - lambda : reduced;
    }
  }
  const double learning_rate = config_.svrg().learning_rate() > 0
                                   ? config_.svrg().learning_rate()
                                   : 1.0 / (smoothness + lambda + kappa);
  SolverConfig::SmoothingSchedule schedule = SolverConfig::CONSTANT_SMOOTHING;
  if (config_.svrg().has_smoothing_schedule()) {
    schedule = config_.svrg().smoothing_schedule();
  } else if (casimir &&
             config_.casimir().variant() == SolverConfig::CASIMIR_ADAPT) {
    schedule = SolverConfig::EXPONENTIAL_DECAY;
  }
  const double decay_q = config_.casimir().decay_q() == SolverConfig::Q_PAPER
                             ? lambda / (lambda + kappa)
                             : kappa / (kappa + lambda);
  const double smoothing_decay = std::sqrt(1 - 0.5 * std::sqrt(decay_q));
  auto smoothing_at = [&](int epoch) {  // μ_k, epoch k = 0, 1, …
    switch (schedule) {
      case SolverConfig::LINEAR_DECAY:
        return config_.svrg().smoothing_mu() / (epoch + 1);
      case SolverConfig::EXPONENTIAL_DECAY:
        return config_.svrg().smoothing_mu() * std::pow(smoothing_decay, epoch);
      default:
        return config_.svrg().smoothing_mu();
    }
  };

  SvrgEpochSettings settings;
  settings.lambda = lambda;
  settings.kappa = kappa;
  settings.learning_rate = learning_rate;
  settings.smoothing = smoothing;
  settings.lazy_updates = config_.svrg().lazy_updates();
  settings.num_threads = std::max(1, config_.num_threads());

  // Catalyst state: w_{k−1}, z_{k−1}, z_{k−2}, α_{k−1}.
  const double q = lambda / (lambda + kappa);
  double alpha = std::sqrt(q);
  std::vector<double> previous(dim, 0.0);  // w_{k−1}
  std::vector<double> center(dim, 0.0);    // z_{k−1}
  std::vector<double> older_center;        // z_{k−2} (extrapolation only)
  const bool extrapolate =
      config_.casimir().warm_start() == SolverConfig::EXTRAPOLATION;
  if (extrapolate) older_center = center;
  std::vector<double> start, output;

  SvrgEpoch epoch(problem);
  SolverRandom random(config_.seed());
  const absl::Time start_time = absl::Now();
  auto elapsed = [&] {
    return absl::ToDoubleSeconds(absl::Now() - start_time);
  };
  TrainingSummary summary;
  summary.set_solver(name);
  summary.set_lambda(lambda);
  summary.set_num_examples(n);
  summary.set_dim(dim);
  std::string stop_reason = "max_passes";
  int64_t oracle_calls = 0;
  const int64_t budget = static_cast<int64_t>(config_.max_passes()) * n;
  double primal = 0;

  for (int k = 1; oracle_calls < budget; ++k) {
    switch (config_.casimir().warm_start()) {
      case SolverConfig::PREV_ITERATE:
        start = previous;
        break;
      case SolverConfig::EXTRAPOLATION:
        start = previous;
        for (int64_t j = 0; j < dim; ++j) {
          start[j] += kappa / (kappa + lambda) * (center[j] - older_center[j]);
        }
        break;
      default:
        start = center;
    }
    settings.smoothing.mu = smoothing_at(k - 1);
    oracle_calls +=
        epoch.Run(settings, start, center.data(), &random, &output, nullptr);

    // Catalyst's extrapolation (a no-op at κ = 0: α = 1, β = 0).
    const double next_alpha = NextAlpha(alpha, q);
    const double beta = alpha * (1 - alpha) / (alpha * alpha + next_alpha);
    alpha = next_alpha;
    if (extrapolate) std::swap(older_center, center);
    center.resize(dim);
    bool finite = true;
    for (int64_t j = 0; j < dim; ++j) {
      finite = finite && std::isfinite(output[j]);
      center[j] = output[j] + beta * (output[j] - previous[j]);
    }
    std::swap(previous, output);  // w_k
    if (!finite) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, ": the iterate diverged in epoch ", k, " (learning rate ",
          learning_rate, " too large for μ = ", settings.smoothing.mu,
          "); lower learning_rate or raise smoothness"));
    }
    const bool out_of_time =
        config_.max_seconds() > 0 && elapsed() >= config_.max_seconds();
    const bool final_epoch = oracle_calls >= budget || out_of_time;
    if (out_of_time && oracle_calls < budget) stop_reason = "max_seconds";
    primal = 0.5 * lambda * SquaredNorm(previous.data(), dim) +
             AverageHingeLoss(problem, previous.data(), settings.num_threads);
    PassRecord record;
    record.set_solver(name);
    record.set_pass(k);
    record.set_lambda(lambda);
    record.set_primal(primal);
    record.set_smoothing_mu(settings.smoothing.mu);
    record.set_oracle_calls(oracle_calls);
    record.set_effective_passes(static_cast<double>(oracle_calls) / n);
    record.set_seconds(elapsed());
    if (monitor != nullptr) {
      absl::Status status = monitor->Record(record, previous, final_epoch);
      if (!status.ok()) return status;
    }
    summary.set_passes(k);
    if (final_epoch) break;
  }

  *w_out = std::move(previous);
  summary.set_oracle_calls(oracle_calls);
  summary.set_seconds(elapsed());
  summary.set_primal(primal);
  summary.set_stop_reason(stop_reason);
  return summary;
}

}  // namespace chaintag
