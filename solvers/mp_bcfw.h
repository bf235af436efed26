// Multi-plane block-coordinate Frank-Wolfe (Shah, Kolmogorov and Lampert
// 2015, Algorithm 3 with §3.4-3.5), behaving like Kolmogorov's reference code
// by default.
//
// Every block i keeps a working set W_i of at most N = mp_max_planes planes:
// corners with their loss and a last-access timestamp, never ψ vectors. An
// outer iteration draws one permutation (randomize_method 2) and uses it for
//   - one exact pass: a BCFW line-search step with the real oracle's corner,
//     which joins W_i unless already there (a duplicate only refreshes its
//     timestamp); a full W_i overwrites its least recently accessed plane;
//   - up to M = mp_max_approx_passes approximate passes: the same step with
//     the best plane of W_i at the current w (one Problem::ScoreCorners call;
//     ties go to the last maximum, as in the reference code), after which
//     planes not accessed for T = mp_inactive_iterations outer iterations
//     leave W_i (the chosen plane always stays).
// Working sets start empty and block states at the gold corner
// (zero_lower_bound in the reference code). Steps always use the exact line
// search; `sampling` and `line_search` are ignored.
//
// Stopping the approximate passes (§3.4): after approximate pass p, stop if
// its dual increase per unit cost is below the increase per unit cost from
// the start of the outer iteration to the end of pass p−1, or if it did not
// increase the dual at all (the reference code would keep running its M
// passes at an optimum). The cost is
//   - DETERMINISTIC: oracle calls × r + plane evaluations, where r (the cost
//     of an oracle call in plane evaluations) is measured once, from the
//     first exact and first approximate pass (whole-pass seconds / calls and
//     / planes scored), then rounded to a power of two and frozen. Given r the
//     iterates depend on the seed only; rounding makes different runs on one
//     machine pick the same r unless the measured ratio sits at a rounding
//     boundary, or a busy machine moves it. solver.mp_bcfw.oracle_cost pins
//     r.
//   - WALL_CLOCK: seconds, as the paper.
//
// Averaging (§3.5): with weighted_averaging, the iterates after exact steps
// and after approximate steps are averaged separately (ρ = 2/(k+2) with each
// sequence's own k), at O(size of block) per step with the accumulator of
// bcfw.h: w̄_E = w − u_E/C(K_E) with C(m) = m(m+1)/2 and
// u_E = Σ_s C(m_s)·Δw_s over all steps s, m_s = exact steps before s (the
// same for approximate steps). The returned point is the point of the segment
// [w̄_E, w̄_A] with the best dual, D(t) = ℓ(t) − λ/2‖w(t)‖² being a concave
// quadratic in t; t is clipped to [0, 1]. Forming it is O(dim), done once per
// pass.
//
// Log: one PassRecord per pass, exact or approximate; `pass` numbers all
// passes in order, `approx_passes` is the pass's index among its outer
// iteration's approximate passes (0 for the exact pass), dual is at the
// returned point, mean_active_set_size is the mean |W_i|. Exact passes carry
// the sum of their block gaps as a gap estimate (of the iterate, before
// averaging; gap_exact false); every gap_check outer iterations, and at the
// end with final_gap, the last record of the outer iteration carries the
// exact gap at the returned point instead (n more oracle calls). max_passes
// counts outer iterations, and so does TrainingSummary.passes.
//
// Thread-safety: see Solver.

#ifndef CHAINTAG_SOLVERS_MP_BCFW_H_
#define CHAINTAG_SOLVERS_MP_BCFW_H_

#include <vector>

#include "solvers/solver.h"

namespace chaintag {

// The dual bookkeeping at the end of a run, for tests.
struct MpBcfwInvariants {
  double max_weight_error = 0;  // ‖w − Σ_i v_i/(λn)‖∞
  // Over the blocks whose working set holds their whole state:
  double max_state_error = 0;     // max |v_i − Σ_p α_p ψ_i(y_p)|
  double max_distance_error = 0;  // ‖v_i − ψ_i(y_p)‖² from α vs from v_i
  double max_alpha_sum = 0;       // max_i Σ_p α_p (≤ 1: the rest is gold)
  int blocks_checked = 0;
};

class MpBcfwSolver : public Solver {
 public:
  explicit MpBcfwSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

  // The largest working set of the last Solve, at any time.
  int max_working_set_size() const { return max_working_set_size_; }
  // The oracle cost r the last Solve used (0 if never needed).
  double oracle_cost() const { return oracle_cost_; }
  // Filled at the end of each Solve when set.
  void set_invariants_output(MpBcfwInvariants* invariants) {
    invariants_ = invariants;
  }

 private:
  SolverConfig config_;
  int max_working_set_size_ = 0;
  double oracle_cost_ = 0;
  MpBcfwInvariants* invariants_ = nullptr;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_MP_BCFW_H_
