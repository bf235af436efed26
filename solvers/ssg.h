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
// Cost: a step costs O(size of the example): w is kept as scale·v (the
// oracle reads it through Problem::MaxOracleScaled), and the weighted
// average through an accumulator that takes the same sparse updates. The
// point is formed (O(dim)) only when the primal or an evaluation reads it.
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
