// L-BFGS (Liu & Nocedal 1989) for the smooth objectives (the CRF's
// log-loss and the softmax-margin loss, SolverConfig.objective
// LOG_SUM_EXP), and OWL-QN (Andrew & Gao 2007) when the elastic net's ℓ1
// is set:
//
//   P(w) = 1/n Σ_i f_i(w) + λ/2‖w‖² + ℓ1‖w‖₁,
//
// the objective sag solves, by the method CRFsuite trains it with. A pass
// is one iteration: a direction from the last `num_memories` pairs of
// steps s and gradient changes y (the two-loop recursion, scaled by
// ⟨s, y⟩/⟨y, y⟩), then a backtracking line search from a step of 1 (of
// 1/‖∇P‖ on the first iteration) that halves the step until P falls by at
// least 1e-4 of the decrease the direction promises (Armijo). With ℓ1,
// OWL-QN's pseudo-gradient replaces ∇P, the direction keeps only the
// coordinates where it agrees with −pseudo-gradient, and every trial
// point is projected onto the orthant the iterate stands in (coordinates
// that would cross zero stay at zero), so that the iterates hold exact
// zeros.
//
// Each evaluation of P is a pass of forward–backward over every example
// at one point, whose gradients are summed into ḡ = 1/n Σ_i ∇f_i in two
// lanes (the even and the odd examples, each in example order, then
// added). Up to three threads, each lane runs on a thread of its own, a
// sentence's oracle and its addition in turn; from four, chunk by chunk:
// the oracles on all threads, then each lane's sum in slices of w. Either
// way every coordinate gets the same additions in the same order: the
// same iterates on any thread count. That pass is also the certificate
// (solvers/duality_gap.h, SmoothCertificate): the distributions q_i it
// computes are a dual point, so every iteration ends certified without
// another pass over the examples.
//
// Memory: w, ḡ, the trial point and its ḡ, the second lane's sum and the
// direction (six Dim()-vectors of doubles; the pseudo-gradient is computed
// where it is read),
// 2·num_memories float vectors for the pairs, and two doubles an example
// (its loss and dual term); with ℓ1, each certificate also holds for a
// moment the |ḡ_j| above ℓ1 (up to one more Dim()-vector). Unlike sag, no
// per-example gradient is kept. On a problem that fixes coordinates at 0
// (Problem::FreeCoordinates) these vectors hold the free coordinates only,
// as do the w the solver reports and returns. Where the oracles read the
// point faster at the free coordinates (Problem::OraclesAtFreeAreFaster:
// chains of many labels) the gradients are summed there too
// (Problem::AddCornerMinusStateAtFree). Else three Dim()-vectors more hold
// the point in all of w, where the oracles read it, and the two lanes'
// sums, whose free coordinates are gathered into ḡ: a row's additions in
// all of w are one read of it, at the free coordinates three dependent
// ones.
//
// Thread-safety: one solver per run.
//
//   SolverConfig config;
//   config.set_name("lbfgs");
//   config.set_objective(SolverConfig::LOG_SUM_EXP);
//   config.set_c2(1.0);
//   LbfgsSolver solver(config);
//   std::vector<double> w;
//   absl::StatusOr<TrainingSummary> summary =
//       solver.Solve(problem, &monitor, &w);

#ifndef CHAINTAG_SOLVERS_LBFGS_H_
#define CHAINTAG_SOLVERS_LBFGS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "solvers/monitor.h"
#include "solvers/problem.h"
#include "solvers/solver.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

class LbfgsSolver : public Solver {
 public:
  explicit LbfgsSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

 private:
  const SolverConfig config_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_LBFGS_H_
