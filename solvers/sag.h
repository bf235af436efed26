// The stochastic average gradient solver for the smooth objectives (the
// CRF's log-loss and the softmax-margin loss, SolverConfig.objective
// LOG_SUM_EXP), with an optional elastic net:
//
//   P(w) = 1/n Σ_i f_i(w) + λ/2‖w‖² + ℓ1‖w‖₁.
//
// SAG (Schmidt, Le Roux & Bach 2017; for CRFs Schmidt et al. 2015) keeps
// the gradient of every f_i at the point it was last drawn, as the block
// state of the distribution q_i that forward–backward returns, and their
// average ḡ. A step draws i, replaces its stored gradient, and moves
//
//   SAG:  w ← prox_{ηℓ1}(w − η(ḡ + λw)),
//   SAGA: w ← prox_{ηℓ1}(w − η(∇f_i(w) − y_i + ḡ + λw))  (Defazio et al. 2014),
//
// with ḡ already holding the new gradient (for SAGA the correction thus
// weighs 1 + 1/n). Between two steps that touch coordinate j, its step is
// the same scalar map, so coordinates are brought up to date only when a
// step reads them (LazyProx, Problem::TouchedRanges): a step costs the
// example's features, not Dim().
//
// Threads: a mini-batch of τ = SolverConfig.minibatch examples is drawn,
// their oracles run on the threads at the same w, their gradients replace
// the stored ones, and w takes τ steps: the first with the batch's SAGA
// corrections, all with the new average. The catch-up before the oracles
// and the steps after them run on one slice of w per thread (SliceBounds),
// each coordinate getting the members' operations in member order. The
// result depends on τ and the seed, never on the thread count; τ = 1 is
// plain SAG or SAGA.
//
// Catalyst (solvers/catalyst.h). Under weak regularization, where a pass
// contracts the distance to the optimum by only about ηnλ, the steps
// minimise P(w) + κ/2‖w − z‖² instead, and every catalyst_passes passes the
// center z moves to w + β(w − w_prev). The proximal term is one more pull
// of each coordinate towards a fixed point, so the lazy map keeps its form
// with a = 1 − η(λ + κ) and c_j = (κz_j − ḡ_j)/(λ + κ).
//
// A problem that fixes some coordinates at 0 (Problem::FreeCoordinates) is
// minimised over the others: w, c and the steps' bookkeeping hold the free
// coordinates alone, a step's coordinates are TouchedRangesAtFree's, its
// oracle reads w there (SmoothedOracleWithStateDotAtFree) and its gradient
// is added there; the w returned holds them alone.
//
// Certificate. The stored q_i are a dual point: D(q) = 1/n Σ_i (f_i(w_i) −
// ⟨w_i, ∇f_i(w_i)⟩) − Σ_j max(|ḡ_j| − ℓ1, 0)²/(2λ), each example's term
// taken where its gradient was (for the log-loss, the entropy of q_i).
// When the pass driver asks for the gap, a pass of forward–backward at w
// refreshes every stored gradient, giving the primal and the dual at the
// same point; the next pass starts from those gradients.
//
// Thread-safety: one solver per run.
//
//   SolverConfig config;
//   config.set_name("sag");
//   config.set_objective(SolverConfig::LOG_SUM_EXP);
//   config.set_l1(1e-5);
//   SagSolver solver(config);
//   std::vector<double> w;
//   absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, &monitor,
//   &w);

#ifndef CHAINTAG_SOLVERS_SAG_H_
#define CHAINTAG_SOLVERS_SAG_H_

#include <vector>

#include "absl/status/statusor.h"
#include "solvers/monitor.h"
#include "solvers/problem.h"
#include "solvers/solver.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

class SagSolver : public Solver {
 public:
  explicit SagSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

 private:
  const SolverConfig config_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SAG_H_
