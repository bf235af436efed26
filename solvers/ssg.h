// Stochastic subgradient descent for structured SVMs: Pegasos without the
// projection, as BCFWstruct's solverSSG.m and Casimir's `pegasos` run it.
// Step k (global, 0-based) on a sampled block i:
//   γ = 1/(k+1),  w ← (1−γ)w + γ·ψ_i(y*)/λ,
// and, with weighted_averaging, w̄ ← (1−ρ)w̄ + ρw with ρ = 2/(k+2), so
// w̄ = 2/(K(K+1)) Σ_k k·w^(k); the returned point is w̄ (else w).
//
// SSG keeps no dual variables, so there is no dual value and no duality gap:
// PassRecord.primal (and TrainingSummary.primal) is the primal at the
// returned point, computed with a separate oracle pass (counted in
// oracle_calls) every gap_check passes and at the end; dual and gap are left
// unset. The run stops on max_passes or max_seconds only.
//
// Cost: a step costs O(dim), not O(size of example). The shrink
// w ← (1−γ)w could be made lazy by keeping w = s·v, but Problem::MaxOracle
// needs w itself (L_i is not scaled along with w), so w has to be dense and
// current at every oracle call; with w dense, the average is a dense update
// too. A Problem operation taking the scale s would make both O(size of
// example).
//
// Thread-safety: see Solver.

#ifndef CHAINTAG_SOLVERS_SSG_H_
#define CHAINTAG_SOLVERS_SSG_H_

#include <vector>

#include "solvers/solver.h"

namespace chaintag {

class SsgSolver : public Solver {
 public:
  explicit SsgSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

 private:
  SolverConfig config_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SSG_H_
