// SVRG and Casimir-SVRG for the smoothed structured SVM (Pillutla et al.
// 2018, Alg. 3–4), both epochs of SvrgEpoch:
//
//   svrg          epochs on λ/2‖w‖² + 1/n Σ f_{i,μ_k}(w), each starting from
//                 the previous epoch's output (the average of its iterates);
//   casimir_svrg  the Catalyst outer loop: epoch k minimises the same plus
//                 κ/2‖w − z_{k−1}‖² from a warm start, then
//                 α_k² = (1 − α_k)α_{k−1}² + qα_k (q = λ/(λ+κ), α_0 = √q),
//                 β_k = α_{k−1}(1 − α_{k−1})/(α_{k−1}² + α_k),
//                 z_k = w_k + β_k(w_k − w_{k−1}).
// (The reference code's α update has α_{k−1}λ where eq. (27) has α_kλ;
// from α_0 = √q at constant κ both keep α_k = √q, so the runs agree.)
//
// svrg is casimir_svrg with κ = 0 (then α_k = 1, β_k = 0 and z_k = w_k), and
// is run as such. Variants and defaults (SolverConfig): CASIMIR_CONST takes
// κ as the reference code reads Prop. 29, κ = L/(n+1) − λ if L/(n+1) > λ,
// else L/(n+1) (the paper: L/n − λ if that exceeds 4λ, else λ, with L =
// A/μ; the two agree but for n + 1 whenever L/(n+1) > 4λ), and a constant μ;
// CASIMIR_ADAPT takes κ = λ and μ_k = μ·c^k, c = √(1 − √q'/2), k = 0 for the
// first epoch (the reference code's count; Cor. 18 starts at μ·c), where the
// reference code computes q' = κ/(κ+λ) and the paper's Cor. 18 says λ/(λ+κ)
// (decay_q picks; they agree at κ = λ). η = 1/(L + λ + κ) from `smoothness` L,
// or `learning_rate`.
//
// Each epoch logs the true (non-smooth) primal of its output, which costs
// one max-oracle pass that is not counted as training (effective passes
// count the 2n smoothed oracle calls of each epoch). There is no dual: the
// runs certify nothing, and the summary says so by leaving the gap unset.
//
// Thread-safety: see Solver.

#ifndef CHAINTAG_SOLVERS_CASIMIR_SVRG_H_
#define CHAINTAG_SOLVERS_CASIMIR_SVRG_H_

#include <vector>

#include "solvers/solver.h"

namespace chaintag {

// The options of svrg and casimir_svrg that need no data: a step size
// (learning_rate, or smoothness L), non-negative κ, CASIMIR_CONST's L or
// κ, and a usable smoothing. The registry runs it, so that a run is refused
// before its corpus is read.
absl::Status CheckSvrgOptions(const SolverConfig& config);

class CasimirSvrgSolver : public Solver {
 public:
  explicit CasimirSvrgSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

 private:
  SolverConfig config_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_CASIMIR_SVRG_H_
