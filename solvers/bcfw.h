// Block-coordinate Frank-Wolfe for structured SVMs and its variants:
//
//   bcfw             Lacoste-Julien et al. 2013 (Algorithm 4, line search),
//                    with the options of Osokin et al. 2016: gap sampling,
//                    pairwise / away / best steps over per-block active sets,
//                    the gap-based cache, and box constraints on w (App. H:
//                    v = Aα kept on the boxed coordinates, w its truncation);
//   active_set_bcfw  after adding the FW corner, the block's subproblem is
//                    solved over its whole active set (fully corrective, the
//                    GDMM appendix's block step on our sample-wise dual).
//
// Weighted average w̄_K = Σ_{s≤K} s·w_s / Σ_{s≤K} s of BCFW-wavg costs
// O(block state) per step, not O(size of the update of w): w is the sum of
// the blocks' v_i/(λn), each block's state only changes when it is visited,
// so the solver keeps per block Σ_s s·v_i^(s), adding the weight of the steps
// a state held only when the block moves (a read of w̄ adds it on the fly,
// changing nothing of the run). w̄ = Σ_i v̄_i/(λn) is formed — about one pass of
// updates of w — only when it is read (gap checks, evaluations, the end). ℓ̄ is
// averaged alongside, so the gap at w̄ is exact. (The reference gapBCFW code
// does not average; set weighted_averaging: false to match it.)
//
// Where the paper and the reference code differ, the code's behaviour is the
// default: the first gap-sampling pass sweeps the blocks in index order;
// cache hits do not refresh a block's gap estimate; the `away` step chooses
// between the FW and the away direction by exact dual improvement (the
// paper's BCAFW compares the two gaps); `best` tries FW, pairwise and away
// and applies the largest improvement, nothing when none improves.
//
// Thread-safety: see Solver.

#ifndef CHAINTAG_SOLVERS_BCFW_H_
#define CHAINTAG_SOLVERS_BCFW_H_

#include <vector>

#include "solvers/solver.h"

namespace chaintag {

// What a test can check of a finished run's dual iterate (all O(n + dim)).
struct BcfwInvariants {
  double max_alpha_sum_error = 0;  // max_i |Σ_y α_i(y) − 1| (active sets)
  double min_alpha = 0;            // min α over every stored corner
  double max_weight_error = 0;     // ‖w − Σ_i v_i/(λn)‖∞
  double max_state_error = 0;  // max |v_i − Σ_y α_i(y)·ψ_i(y)| (states)
  double max_ell_error = 0;    // max_i |ℓ_i − Σ_y α_i(y)·L_i(y)/n|
  // max |‖v_i − ψ_i(y)‖² from the stored corners' inner products − from
  // the state|, relative to max(1, the distance), over stored y (dots kept).
  double max_distance_error = 0;
  // The blocks whose α the checks above cover: all with active sets; with
  // FW steps and the cache, those whose store still holds all of α.
  int blocks_checked = 0;
};

class BcfwSolver : public Solver {
 public:
  explicit BcfwSolver(const SolverConfig& config) : config_(config) {}

  absl::StatusOr<TrainingSummary> Solve(const Problem& problem,
                                        Monitor* monitor,
                                        std::vector<double>* w) override;

  absl::Status SetDistribution(const BlockDistribution& distribution) override {
    distribution_ = distribution;
    return absl::OkStatus();
  }

  // For tests: fill `invariants` at the end of every Solve.
  void set_invariants_output(BcfwInvariants* invariants) {
    invariants_ = invariants;
  }

 private:
  SolverConfig config_;
  BcfwInvariants* invariants_ = nullptr;
  BlockDistribution distribution_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_H_
