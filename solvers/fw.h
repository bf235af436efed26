// Batch Frank-Wolfe for structured SVMs (Lacoste-Julien et al. 2013,
// Algorithm 2; BCFWstruct's solverFW.m): every iteration calls the oracle
// on all n examples at the current w, which gives both the Frank-Wolfe
// corner w_s = Σ_i ψ_i(y_i*)/(λn), ℓ_s = Σ_i L_i(y_i*)/n and the exact
// duality gap g = λ⟨w, w − w_s⟩ − ℓ + ℓ_s at w, for free.
//
// Schedule. One pass = n oracle calls. An initial oracle pass at w = 0
// provides the first corner; pass k then steps to w^(k) and calls the oracle
// at w^(k), so every PassRecord carries the exact gap of the point it
// describes (the one the solver would return), and the returned w always has
// an exact gap. The run stops before stepping once that gap is ≤
// gap_tolerance. oracle_calls therefore counts (passes + 1)·n.
//
// Step: γ = clip(g/(λ‖w − w_s‖²), 0, 1) with line_search, else 2/(k+2)
// (k = 0, 1, …); w ← (1−γ)w + γw_s, ℓ likewise. No averaging.
//
// Thread-safety: see Solver. The oracle pass runs on config.num_threads
// threads; results are reduced in example order, so w does not depend on the
// thread count.

#ifndef CHAINTAG_SOLVERS_FW_H_
#define CHAINTAG_SOLVERS_FW_H_

#include <vector>

#include "solvers/solver.h"

namespace chaintag {

class FwSolver : public Solver {
 public:
  explicit FwSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

 private:
  SolverConfig config_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_FW_H_
