#include "solvers/ssg.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/random.h"
#include "solvers/duality_gap.h"
#include "solvers/pass_driver.h"

namespace chaintag {
namespace {

// Below this the scale of w = scale·v is folded into v, long before
// v's entries could overflow.
constexpr double kMinScale = 1e-9;

// Pegasos steps on w = scale·v, so the shrink w ← (1−γ)w costs O(1). The
// weighted average 2/(M(M+1)) Σ_m m·w^(m) is kept the same way: with
// v_m = v_{m−1} + c_m ψ_m and S_m = Σ_{k≤m} k·s_k,
// Σ_m m·s_m·v_m = S_M·v_M − u_M where u_M = Σ_t c_t·S_{t−1}·ψ_t takes the
// same sparse updates as v.
class SsgSteps : public PassSteps {
 public:
  SsgSteps(const SolverConfig& config, const Problem& problem, double lambda)
      : config_(config),
        problem_(problem),
        n_(problem.NumExamples()),
        dim_(problem.Dim()),
        lambda_(lambda),
        averaging_(config.weighted_averaging()),
        v_(dim_, 0.0),
        random_(config.seed()) {
    if (averaging_) u_.assign(dim_, 0.0);
  }

  absl::Status RunSteps(int, PassDriver* driver) override {
    const bool permutation = config_.sampling() == SolverConfig::PERMUTATION;
    if (permutation) random_.Permutation(n_, &order_);
    for (int j = 0; j < n_; ++j) {
      Step(permutation ? order_[j] : static_cast<int>(random_.Uniform(n_)));
      if (driver->Expired(j)) break;
    }
    return absl::OkStatus();
  }

  // No dual: the primal at the returned point, at the gap cadence.
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord*) override {
    PassEnd end;
    if (request.gap_check_due) {
      const absl::Span<const double> point = Point();
      end.primal = 0.5 * lambda_ * SquaredNorm(point.data(), dim_) +
                   AverageHingeLoss(problem_, point.data(),
                                    std::max(1, config_.num_threads()));
      oracle_calls_ += n_;
    }
    return end;
  }

  absl::Span<const double> Point() override {
    if (point_steps_ == steps_) return point_;
    point_steps_ = steps_;
    point_.resize(dim_);
    if (!averaging_ || steps_ == 0) {
      for (int64_t d = 0; d < dim_; ++d) point_[d] = scale_ * v_[d];
      return point_;
    }
    const double m = static_cast<double>(steps_);
    const double normaliser = 2.0 / (m * (m + 1.0));
    for (int64_t d = 0; d < dim_; ++d) {
      point_[d] = normaliser * (weight_sum_ * v_[d] - u_[d]);
    }
    return point_;
  }

  int64_t OracleCalls() const override { return oracle_calls_; }

  absl::Status SaveState(CheckpointWriter* writer) const override {
    writer->Reals("v", v_);
    writer->Real("scale", scale_);
    writer->Reals("u", u_);
    writer->Real("weight_sum", weight_sum_);
    writer->Integer("steps", steps_);
    writer->Integer("oracle_calls", oracle_calls_);
    writer->Random("random", random_);
    return absl::OkStatus();
  }

  absl::Status LoadState(const CheckpointReader& reader) override {
    absl::Status status = reader.Reals("v", dim_, &v_);
    if (status.ok()) status = reader.Real("scale", &scale_);
    if (status.ok()) {
      status = reader.Reals("u", static_cast<int64_t>(u_.size()), &u_);
    }
    if (status.ok()) status = reader.Real("weight_sum", &weight_sum_);
    if (status.ok()) status = reader.Integer("steps", &steps_);
    if (status.ok()) status = reader.Integer("oracle_calls", &oracle_calls_);
    if (status.ok()) status = reader.Random("random", &random_);
    point_steps_ = -1;
    return status;
  }

  std::vector<double> TakeWeights() {
    Point();
    return std::move(point_);
  }

 private:
  void Step(int i) {
    problem_.MaxOracleScaled(i, v_.data(), scale_, &oracle_);
    ++oracle_calls_;
    const double gamma = 1.0 / (static_cast<double>(steps_) + 1.0);
    double shrunk = scale_ * (1.0 - gamma);
    // Only the first step shrinks w = 0 to nothing: restart the scale.
    if (shrunk == 0) shrunk = 1;
    const double c = gamma / (lambda_ * shrunk);
    if (averaging_ && weight_sum_ > 0) {
      problem_.AddScaled(i, oracle_.corner, c * weight_sum_, u_.data());
    }
    problem_.AddScaled(i, oracle_.corner, c, v_.data());
    scale_ = shrunk;
    weight_sum_ += static_cast<double>(steps_ + 1) * scale_;
    if (scale_ < kMinScale) {
      // Fold the scale into v (O(dim), once in ~1/kMinScale steps); u is
      // unchanged because S scales inversely.
      for (int64_t d = 0; d < dim_; ++d) v_[d] *= scale_;
      weight_sum_ /= scale_;
      scale_ = 1;
    }
    ++steps_;
  }

  const SolverConfig& config_;
  const Problem& problem_;
  const int n_;
  const int64_t dim_;
  const double lambda_;
  const bool averaging_;
  std::vector<double> v_;
  double scale_ = 1;
  std::vector<double> u_;
  double weight_sum_ = 0;  // S_m
  int64_t steps_ = 0;      // global step k, 0-based for the next one
  std::vector<double> point_;
  int64_t point_steps_ = -1;  // steps_ when point_ was formed
  SolverRandom random_;
  std::vector<int> order_;
  OracleResult oracle_;
  int64_t oracle_calls_ = 0;
};

}  // namespace

absl::StatusOr<TrainingSummary> SsgSolver::Solve(const Problem& problem,
                                                 Monitor* monitor,
                                                 std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  if (n <= 0) return absl::InvalidArgumentError("ssg: no training examples");
  if (config_.sampling() == SolverConfig::GAP) {
    return absl::InvalidArgumentError(
        "ssg: sampling must be UNIFORM or PERMUTATION (SSG has no block gaps)");
  }
  const double lambda = ResolveLambda(config_, n);
  SsgSteps steps(config_, problem, lambda);
  PassDriver driver(config_, "ssg", lambda, n, problem.Dim(), monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  if (summary.ok()) *w_out = steps.TakeWeights();
  return summary;
}

}  // namespace chaintag
