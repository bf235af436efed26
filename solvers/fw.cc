#include "solvers/fw.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "solvers/duality_gap.h"
#include "solvers/pass_driver.h"

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
      problem.MaxOracle(i, w, &(*slots)[i]);
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

// Batch FW's side of the pass loop: a pass is one step towards the corner
// of the last oracle pass, then the oracle pass at the new w, which is both
// the next corner and the exact gap of the point returned.
class FwSteps : public PassSteps {
 public:
  FwSteps(const SolverConfig& config, const Problem& problem, double lambda)
      : config_(config),
        problem_(problem),
        n_(problem.NumExamples()),
        dim_(problem.Dim()),
        lambda_(lambda),
        threads_(std::max(1, config.num_threads())),
        w_(dim_, 0.0) {
    corner_.w_s.assign(dim_, 0.0);
  }

  std::optional<DualityGap> StartCertificate() override {
    Evaluate();
    return gap_;
  }

  absl::Status RunSteps(int pass, PassDriver*) override {
    double gamma;
    if (config_.line_search()) {
      double distance = 0;  // ‖w − w_s‖²
      for (int64_t j = 0; j < dim_; ++j) {
        const double d = w_[j] - corner_.w_s[j];
        distance += d * d;
      }
      gamma = distance > 0
                  ? std::clamp(gap_.gap / (lambda_ * distance), 0.0, 1.0)
                  : 0.0;
    } else {
      gamma = 2.0 / (static_cast<double>(pass - 1) + 2.0);
    }
    for (int64_t j = 0; j < dim_; ++j) {
      w_[j] = (1 - gamma) * w_[j] + gamma * corner_.w_s[j];
    }
    ell_ = (1 - gamma) * ell_ + gamma * corner_.ell_s;
    Evaluate();
    return absl::OkStatus();
  }

  // Every pass ends certified: the oracle pass just computed the gap.
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest&, PassRecord*) override {
    PassEnd end;
    end.certificate = gap_;
    return end;
  }

  absl::Span<const double> Point() override { return w_; }
  int64_t OracleCalls() const override { return oracle_calls_; }

  absl::Status SaveState(CheckpointWriter* writer) const override {
    writer->Reals("w", w_);
    writer->Real("ell", ell_);
    writer->Reals("w_s", corner_.w_s);
    writer->Real("ell_s", corner_.ell_s);
    writer->Real("hinge", corner_.hinge);
    writer->Reals("gap", std::vector<double>{gap_.primal, gap_.dual, gap_.gap});
    writer->Integer("oracle_calls", oracle_calls_);
    return absl::OkStatus();
  }

  absl::Status LoadState(const CheckpointReader& reader) override {
    std::vector<double> gap;
    absl::Status status = reader.Reals("w", dim_, &w_);
    if (status.ok()) status = reader.Real("ell", &ell_);
    if (status.ok()) status = reader.Reals("w_s", dim_, &corner_.w_s);
    if (status.ok()) status = reader.Real("ell_s", &corner_.ell_s);
    if (status.ok()) status = reader.Real("hinge", &corner_.hinge);
    if (status.ok()) status = reader.Reals("gap", 3, &gap);
    if (status.ok()) status = reader.Integer("oracle_calls", &oracle_calls_);
    if (status.ok()) gap_ = DualityGap{gap[0], gap[1], gap[2]};
    return status;
  }
  std::vector<double> TakeWeights() { return std::move(w_); }

 private:
  // The oracle pass at the current w: the next corner and the exact gap.
  void Evaluate() {
    OraclePass(problem_, w_.data(), lambda_, threads_, &slots_, &corner_);
    oracle_calls_ += n_;
    const double norm = SquaredNorm(w_.data(), dim_);
    double w_dot_ws = 0;
    for (int64_t j = 0; j < dim_; ++j) w_dot_ws += w_[j] * corner_.w_s[j];
    gap_.dual = ell_ - 0.5 * lambda_ * norm;
    // λ⟨w, w − w_s⟩ − ℓ + ℓ_s; equal to primal − dual with the primal's
    // hinge term Σ(L − ⟨w,ψ⟩)/n, but written as the Frank-Wolfe gap.
    gap_.gap = lambda_ * (norm - w_dot_ws) - ell_ + corner_.ell_s;
    gap_.primal = gap_.dual + gap_.gap;
  }

  const SolverConfig& config_;
  const Problem& problem_;
  const int n_;
  const int64_t dim_;
  const double lambda_;
  const int threads_;
  std::vector<double> w_;
  double ell_ = 0;
  FwCorner corner_;
  std::vector<OracleResult> slots_;
  int64_t oracle_calls_ = 0;
  DualityGap gap_;  // at the current w
};

}  // namespace

absl::StatusOr<TrainingSummary> FwSolver::Solve(const Problem& problem,
                                                Monitor* monitor,
                                                std::vector<double>* w_out) {
  const int n = problem.NumExamples();
  if (n <= 0) return absl::InvalidArgumentError("fw: no training examples");
  const double lambda = ResolveLambda(config_, n);
  FwSteps steps(config_, problem, lambda);
  PassDriver driver(config_, "fw", lambda, n, problem.Dim(), monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  if (summary.ok()) *w_out = steps.TakeWeights();
  return summary;
}

}  // namespace chaintag
