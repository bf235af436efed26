// Block-coordinate Frank-Wolfe for structured SVMs (Lacoste-Julien et al.
// 2013, Algorithm 4 with line search), with the weighted average
// w̄ = 2/(K(K+1)) Σ_k k·w^(k) of BCFW-wavg.
//
// The average costs O(size of the block) per step, not O(dim): with
// w^(k) = w^(0) + Σ_{s≤k} Δ_s,
//   Σ_{k≤K} k·w^(k) = K(K+1)/2 · w^(K) − Σ_{s≤K} s(s−1)/2 · Δ_s,
// so the solver keeps u = Σ_s s(s−1)/2 · Δ_s (updated with the same sparse
// step as w) and forms w̄ = w − 2u/(K(K+1)) only when it is read. ℓ̄ is
// averaged the same way, so the gap at w̄ is exact.
//
// Thread-safety: see Solver.

#ifndef CHAINTAG_SOLVERS_BCFW_H_
#define CHAINTAG_SOLVERS_BCFW_H_

#include <vector>

#include "solvers/solver.h"

namespace chaintag {

class BcfwSolver : public Solver {
 public:
  explicit BcfwSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

 private:
  SolverConfig config_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_H_
