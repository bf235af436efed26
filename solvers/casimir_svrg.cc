#include "solvers/casimir_svrg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/random.h"
#include "solvers/catalyst.h"
#include "solvers/duality_gap.h"
#include "solvers/pass_driver.h"
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

// What the config resolves to for one run: the epochs' settings (μ of the
// first epoch), κ, and the schedule of μ over epochs.
struct CasimirPlan {
  SvrgEpochSettings settings;
  SolverConfig::SmoothingSchedule schedule = SolverConfig::CONSTANT_SMOOTHING;
  double mu = 1;               // of the first epoch
  double smoothing_decay = 1;  // c of μ_k = μ·c^k
  // The loss the logged primal measures: the objective's (LOG_SUM_EXP:
  // entropy at mu = 1), else the true, non-smooth hinge.
  bool smooth_objective = false;

  double SmoothingAt(double mu, int epoch) const {  // μ_k, epoch k = 0, 1, …
    switch (schedule) {
      case SolverConfig::LINEAR_DECAY:
        return mu / (epoch + 1);
      case SolverConfig::EXPONENTIAL_DECAY:
        return mu * std::pow(smoothing_decay, epoch);
      default:
        return mu;
    }
  }
};

// κ: none for svrg; else given, or the variant's rule (CheckSvrgOptions
// has refused a negative κ, and CASIMIR_CONST with neither κ nor L).
double ResolveKappa(const SolverConfig& config, int n, double lambda) {
  const SolverConfig::Casimir& casimir = config.casimir();
  if (config.name() != "casimir_svrg") return 0.0;
  if (casimir.kappa() > 0) return casimir.kappa();
  if (casimir.variant() == SolverConfig::CASIMIR_ADAPT) return lambda;
  const double reduced = config.svrg().smoothness() / (n + 1);
  return reduced > lambda ? reduced - lambda : reduced;
}

// The smoothing of the epochs: the objective's own (LOG_SUM_EXP is the
// entropy-smoothed loss at μ = 1), else the configured one.
Smoothing SmoothingOf(const SolverConfig& config) {
  Smoothing smoothing;
  smoothing.kind = config.objective() == SolverConfig::LOG_SUM_EXP
                       ? Smoothing::Kind::kEntropy
                       : SmoothingKindOf(config.svrg().smoothing());
  smoothing.top_k = config.svrg().top_k();
  return smoothing;
}

}  // namespace

absl::Status CheckSvrgOptions(const SolverConfig& config) {
  const std::string& name = config.name();
  const SolverConfig::Svrg& svrg = config.svrg();
  if (svrg.learning_rate() < 0 || svrg.smoothness() < 0 ||
      config.casimir().kappa() < 0) {
    return absl::InvalidArgumentError(
        name + ": learning_rate, smoothness and kappa must not be negative");
  }
  if (svrg.learning_rate() == 0 && svrg.smoothness() == 0) {
    return absl::InvalidArgumentError(
        name + ": set learning_rate, or smoothness (L) for η = 1/(L + λ + κ)");
  }
  if (name == "casimir_svrg" && config.casimir().kappa() == 0 &&
      config.casimir().variant() != SolverConfig::CASIMIR_ADAPT &&
      svrg.smoothness() == 0) {
    return absl::InvalidArgumentError(
        name + ": CASIMIR_CONST takes κ from smoothness (L); set it or kappa");
  }
  const Smoothing smoothing = SmoothingOf(config);
  if (smoothing.kind != Smoothing::Kind::kNone && !(svrg.smoothing_mu() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": smoothing_mu must be positive, got ", svrg.smoothing_mu()));
  }
  if (smoothing.kind == Smoothing::Kind::kTopKL2 && smoothing.top_k < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": top_k must be at least 1, got ", smoothing.top_k));
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<CasimirPlan> MakePlan(const SolverConfig& config, int n,
                                     double lambda) {
  absl::Status valid = CheckSvrgOptions(config);
  if (!valid.ok()) return valid;
  const SolverConfig::Svrg& svrg = config.svrg();
  CasimirPlan plan;
  SvrgEpochSettings& settings = plan.settings;
  settings.smoothing = SmoothingOf(config);
  const bool log_sum_exp = config.objective() == SolverConfig::LOG_SUM_EXP;
  const double kappa = ResolveKappa(config, n, lambda);
  settings.lambda = lambda;
  settings.kappa = kappa;
  settings.learning_rate = svrg.learning_rate() > 0
                               ? svrg.learning_rate()
                               : 1.0 / (svrg.smoothness() + lambda + kappa);
  settings.lazy_updates = svrg.lazy_updates();
  settings.num_threads = std::max(1, config.num_threads());
  const bool adapt = config.name() == "casimir_svrg" &&
                     config.casimir().variant() == SolverConfig::CASIMIR_ADAPT;
  plan.mu = svrg.smoothing_mu();
  plan.smooth_objective = log_sum_exp;
  if (log_sum_exp) {
    plan.schedule = SolverConfig::CONSTANT_SMOOTHING;
    plan.mu = 1;
  } else if (svrg.has_smoothing_schedule()) {
    plan.schedule = svrg.smoothing_schedule();
  } else if (adapt) {
    plan.schedule = SolverConfig::EXPONENTIAL_DECAY;
  }
  const double decay_q = config.casimir().decay_q() == SolverConfig::Q_PAPER
                             ? lambda / (lambda + kappa)
                             : kappa / (kappa + lambda);
  plan.smoothing_decay = std::sqrt(1 - 0.5 * std::sqrt(decay_q));
  return plan;
}

// One pass of the loop is one epoch (2n smoothed oracle calls) and the
// Catalyst update after it.
class CasimirSteps : public PassSteps {
 public:
  CasimirSteps(const SolverConfig& config, const Problem& problem,
               const CasimirPlan& plan)
      : config_(config),
        problem_(problem),
        dim_(problem.Dim()),
        plan_(plan),
        settings_(plan.settings),
        q_(settings_.lambda / (settings_.lambda + settings_.kappa)),
        alpha_(std::sqrt(q_)),
        previous_(dim_, 0.0),
        center_(dim_, 0.0),
        extrapolate_(config.casimir().warm_start() ==
                     SolverConfig::EXTRAPOLATION),
        epoch_(problem),
        random_(config.seed()) {
    if (extrapolate_) older_center_ = center_;
  }

  absl::Status RunSteps(int k, PassDriver*) override {
    WarmStart();
    settings_.smoothing.mu = plan_.SmoothingAt(plan_.mu, k - 1);
    oracle_calls_ += epoch_.Run(settings_, start_, center_.data(), &random_,
                                &output_, nullptr);
    // Catalyst's extrapolation (a no-op at κ = 0: α = 1, β = 0).
    const double next_alpha = NextCatalystAlpha(alpha_, q_);
    const double beta = CatalystBeta(alpha_, next_alpha);
    alpha_ = next_alpha;
    if (extrapolate_) std::swap(older_center_, center_);
    center_.resize(dim_);
    bool finite = true;
    for (int64_t j = 0; j < dim_; ++j) {
      finite = finite && std::isfinite(output_[j]);
      center_[j] = output_[j] + beta * (output_[j] - previous_[j]);
    }
    std::swap(previous_, output_);  // w_k
    if (finite) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        config_.name(), ": the iterate diverged in epoch ", k,
        " (learning rate ", settings_.learning_rate, " too large for μ = ",
        settings_.smoothing.mu, "); lower learning_rate or raise smoothness"));
  }

  // The true, non-smooth primal of every epoch's output, or, for the
  // LOG_SUM_EXP objective, its exact duality gap; not counted as training
  // oracle calls.
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest&,
                                  PassRecord* record) override {
    PassEnd end;
    if (plan_.smooth_objective) {
      // The objective is smooth: a certificate from the same pass.
      // Its full-gradient pass serves the next epoch when that starts
      // here.
      end.certificate = epoch_.Certify(settings_, previous_);
    } else {
      end.primal =
          0.5 * settings_.lambda * SquaredNorm(previous_.data(), dim_) +
          AverageHingeLoss(problem_, previous_.data(), settings_.num_threads);
    }

    record->set_smoothing_mu(settings_.smoothing.mu);
    return end;
  }

  absl::Span<const double> Point() override { return previous_; }
  int64_t OracleCalls() const override { return oracle_calls_; }

  absl::Status SaveState(CheckpointWriter* writer) const override {
    writer->Reals("previous", previous_);
    writer->Reals("center", center_);
    writer->Reals("older_center", older_center_);
    writer->Real("alpha", alpha_);
    writer->Integer("oracle_calls", oracle_calls_);
    writer->Random("random", random_);
    return absl::OkStatus();
  }

  absl::Status LoadState(const CheckpointReader& reader) override {
    absl::Status status = reader.Reals("previous", dim_, &previous_);
    if (status.ok()) status = reader.Reals("center", dim_, &center_);
    if (status.ok()) {
      status = reader.Reals("older_center",
                            static_cast<int64_t>(older_center_.size()),
                            &older_center_);
    }
    if (status.ok()) status = reader.Real("alpha", &alpha_);
    if (status.ok()) status = reader.Integer("oracle_calls", &oracle_calls_);
    if (status.ok()) status = reader.Random("random", &random_);
    return status;
  }
  std::vector<double> TakeWeights() { return std::move(previous_); }

 private:
  void WarmStart() {
    switch (config_.casimir().warm_start()) {
      case SolverConfig::PREV_ITERATE:
        start_ = previous_;
        break;
      case SolverConfig::EXTRAPOLATION: {
        start_ = previous_;
        const double kappa = settings_.kappa;
        for (int64_t j = 0; j < dim_; ++j) {
          start_[j] += kappa / (kappa + settings_.lambda) *
                       (center_[j] - older_center_[j]);
        }
        break;
      }
      default:
        start_ = center_;
    }
  }

  const SolverConfig& config_;
  const Problem& problem_;
  const int64_t dim_;
  const CasimirPlan plan_;
  SvrgEpochSettings settings_;
  // Catalyst state: w_{k−1}, z_{k−1}, z_{k−2}, α_{k−1}.
  const double q_;
  double alpha_;
  std::vector<double> previous_;
  std::vector<double> center_;
  std::vector<double> older_center_;  // extrapolation only
  const bool extrapolate_;
  std::vector<double> start_, output_;
  SvrgEpoch epoch_;
  SolverRandom random_;
  int64_t oracle_calls_ = 0;
};

}  // namespace

absl::StatusOr<TrainingSummary> CasimirSvrgSolver::Solve(
    const Problem& problem, Monitor* monitor, std::vector<double>* w_out) {
  const std::string& name = config_.name();
  const int n = problem.NumExamples();
  if (n <= 0)
    return absl::InvalidArgumentError(name + ": no training examples");
  const double lambda = ResolveLambda(config_, n);
  absl::StatusOr<CasimirPlan> plan = MakePlan(config_, n, lambda);
  if (!plan.ok()) return plan.status();
  const Smoothing::Kind kind = plan->settings.smoothing.kind;
  if (!problem.SupportsSmoothing(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": the problem has no smoothed oracle of kind ",
                     kind == Smoothing::Kind::kEntropy ? "ENTROPY" : "L2_TOP_K",
                     "; set svrg.smoothing to NO_SMOOTHING or implement "
                     "Problem::SmoothedOracle"));
  }
  CasimirSteps steps(config_, problem, *plan);
  PassDriver driver(config_, name, lambda, n, problem.Dim(), monitor);
  driver.CountBudgetInOracleCalls();
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  if (summary.ok()) *w_out = steps.TakeWeights();
  return summary;
}

}  // namespace chaintag
