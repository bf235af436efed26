// BcfwRun: one run of the block-coordinate Frank-Wolfe family (bcfw.h) as an
// object whose dual state outlives a solve, so that the regularization path
// (regularization_path.h) can warm-start it at a smaller λ. BcfwSolver is
// Initialize + Run; nothing else should need this header.
//
// Thread-safety: one thread at a time (exact gap passes use
// config.num_threads internally).

#ifndef CHAINTAG_SOLVERS_BCFW_RUN_H_
#define CHAINTAG_SOLVERS_BCFW_RUN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/random.h"
#include "solvers/bcfw.h"
#include "solvers/corner_store.h"
#include "solvers/monitor.h"
#include "solvers/pass_driver.h"
#include "solvers/problem.h"
#include "solvers/solver_config.pb.h"
#include "solvers/sum_tree.h"

namespace chaintag {

// A block move Δv_i = Σ_k c_k·ψ_i(y_k) + c_state·v_i with Σ c_k + c_state = 0
// (so α stays on the simplex). FW: c_s = γ, c_state = −γ. Pairwise:
// c_s = γ, c_a = −γ. Away: c_a = −γ, c_state = γ. Fully corrective: c_k = Δα_k.
struct BcfwMove {
  std::vector<int> entries;  // store indices, or −1 for the oracle corner
  std::vector<double> coefficients;
  double state_coefficient = 0;
  void Clear() {
    entries.clear();
    coefficients.clear();
    state_coefficient = 0;
  }
  void Add(int entry, double c) {
    entries.push_back(entry);
    coefficients.push_back(c);
  }
};

class BcfwRun : public PassSteps {
 public:
  BcfwRun(const SolverConfig& config, const Problem& problem);

  // Checks the config against the problem (steps that need line search,
  // cache sizes, boxes). Call once, before either Initialize.
  absl::Status Validate();
  // α_i concentrated on the gold labelings: w = 0, every gap unknown.
  void Initialize();
  // α_i concentrated on corners[i], at λ = `lambda`, with block-gap
  // estimates `block_gaps` (upper bounds or exact values): the
  // regularization path's starting point at λ∞.
  void InitializeAtCorners(double lambda, const std::vector<Corner>& corners,
                           const std::vector<double>& block_gaps);

  // Passes until the gap tolerance, the pass budget or the time budget;
  // the returned point is then ReturnedPoint(). Can be called again after
  // ScaleLambda: passes are numbered per call, oracle calls (and so
  // effective passes) accumulate over the run's life.
  absl::StatusOr<TrainingSummary> Run(Monitor* monitor);
  // Initialize, Run and hand over the returned point.
  absl::StatusOr<TrainingSummary> Solve(Monitor* monitor,
                                        std::vector<double>* w_out);

  // Δ_i = ℓ_i − λ⟨w_i, w⟩ at the current iterate (Osokin et al. 2016,
  // eq. 11: the rate at which block i's gap grows as λ shrinks); returns
  // ΣΔ_i = ℓ − λ‖w‖², always exact. The Δ_i are free after a run that
  // ended on an exact gap pass; otherwise they cost one scoring pass
  // (counted as n oracle calls), or, with `allow_stale`, they use each
  // block's ⟨v_i, w⟩ from its last visit, like the stale gap estimates
  // (the heuristic path).
  double BlockDeltas(std::vector<double>* deltas, bool allow_stale);
  // The warm start "keep_primal" to λ ← ρλ, 0 < ρ ≤ 1: w and every w_i are
  // kept, α moves towards the gold labelings (α(y ≠ y_i) ← ρα), so ℓ_i ←
  // ρℓ_i, and each gap estimate grows by (1 − ρ)Δ_i (Δ_i clipped at 0
  // unless `gaps_exact`, as the reference code does). Needs L_i(y_i) = 0
  // and weighted averaging off: the old λ's average is no dual point of the
  // new problem (the path and the grid search turn averaging off).
  void ScaleLambda(double rho, const std::vector<double>& deltas,
                   bool gaps_exact);
  // A new seed for the sampling of the following Run.
  void Reseed(uint64_t seed) { random_ = SolverRandom(seed); }

  double lambda() const { return lambda_; }
  // ℓ = Σ_i ℓ_i of the iterate: its dual is ℓ − λ/2‖w‖².
  double ell() const { return ell_; }
  // Keep and refresh block-gap estimates even without gap sampling or a
  // cache (a path reads them between solves).
  void set_refresh_block_gaps() { refresh_block_gaps_ = true; }
  // Whether the estimates are the exact block gaps at the current w (an
  // exact gap pass ran and no step followed).
  bool block_gaps_exact() const { return exact_gaps_steps_ == steps_; }
  const std::vector<double>& block_gaps() const { return block_gap_; }
  double GapEstimate() const;
  int64_t oracle_calls() const { return oracle_calls_; }
  // w̄ with weighted averaging, else w (formed on first read after a step).
  const std::vector<double>& ReturnedPoint();

  void set_invariants_output(BcfwInvariants* invariants) {
    invariants_ = invariants;
  }
  // Call before Solve hands w over.
  void CheckInvariants(BcfwInvariants* invariants) const;

  // The pass loop's side (pass_driver.h), for Run.
  absl::Status RunSteps(int pass, PassDriver* driver) override;
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord* record) override;
  absl::Span<const double> Point() override { return ReturnedPoint(); }
  int64_t OracleCalls() const override { return oracle_calls_; }

 private:
  int NextBlock(int j, const std::vector<int>& order);
  void Step(int i);
  void PlainStep(int i);
  void MakeRoom(CornerStore* store);
  int FwCorner(int i, double* state_dot, double* fw_gap);
  void ChooseStep(int i, int fw, double fw_gap, double state_dot);
  DualityGap RefreshBlockGaps();
  // Applies x += scale/(λn)·Δv of `move` (before the block state changes).
  void ApplyToVector(int i, const BcfwMove& move, const Corner& oracle_corner,
                     double scale, double* x) const;
  void ApplyMove(int i, const BcfwMove& move, const Corner& oracle_corner);
  void FullyCorrectiveMove(int i, int fw_entry,
                           const std::vector<double>& scores, BcfwMove* move);
  std::vector<double> CornerDots(int i, const Corner& corner) const;
  void SetBlockGap(int i, double gap);
  // Adds block i's state, held since its last fold, to its weighted sum
  // through step `through` (before the state changes, and before reads).
  void FoldIntoAverage(int i, int64_t through);
  absl::Status InitializeBoxes();
  // λ·Σ_boxed (v_j − w_j)·w_j: the dual's box term (App. H) at the iterate
  // or at the average; 0 without boxes.
  double BoxTerm(bool averaged) const;
  double ReturnedEll() const;
  double* state(int i) { return states_.data() + state_offset_[i]; }

  const SolverConfig config_;
  const Problem& problem_;
  const int n_;
  const int64_t dim_;
  double lambda_;
  const bool averaging_;
  const bool fully_corrective_;
  const SolverConfig::Step step_;
  const bool track_alpha_;  // α per corner is authoritative (active sets)
  const bool use_cache_;
  const bool keep_corners_;
  const bool gap_sampling_;
  // Block-gap estimates kept and refreshed by exact passes (gap sampling,
  // caches, and runs that a regularization path warm-starts).
  bool refresh_block_gaps_;
  SolverRandom random_;
  BcfwInvariants* invariants_ = nullptr;

  // Dual iterate: w = Σ_i w_i, ℓ = Σ_i ℓ_i, block states v_i (w_i = v_i/(λn)).
  std::vector<double> w_;
  double ell_ = 0;
  std::vector<double> ell_block_;
  std::vector<int64_t> state_offset_;
  std::vector<double> states_;
  // Weighted average, per block (see bcfw.h): average_state_sums_ holds
  // Σ_{s≤t_i} s·v_i^(s) in the state layout, with t_i = averaged_through_[i];
  // ℓ̄ through the scalar u_ℓ = Σ_s s(s−1)/2·Δℓ_s.
  std::vector<double> average_state_sums_;
  std::vector<int64_t> averaged_through_;
  double ell_accumulator_ = 0;
  int64_t steps_ = 0;
  std::vector<double> average_;
  int64_t average_steps_ = -1;
  std::vector<double> average_state_;  // scratch: one block's v̄_i
  // v̄ on the boxed coordinates (before truncation), valid with average_.
  std::vector<double> box_v_average_;

  // Box constraints: the boxed coordinates of w hold the truncation of
  // v = Aα, whose own values are kept in box_v_.
  std::vector<int64_t> box_index_;
  std::vector<double> box_lower_, box_upper_, box_v_;

  std::vector<CornerStore> corners_;
  // Stale block-gap estimates g_i (+∞ until the block's first oracle call),
  // refreshed by oracle calls and exact passes, never by cache hits.
  std::vector<double> block_gap_;
  int num_unvisited_ = 0;
  int next_unvisited_ = 0;
  SumTree gap_tree_{0};
  double cache_global_gap_ = 1;  // G of the hit test: last exact gap

  int64_t oracle_calls_ = 0;
  // ⟨v_i, w⟩ from the last exact gap pass, valid while no step has moved w
  // since (state_dots_steps_ == steps_).
  std::vector<double> state_dots_;
  int64_t state_dots_steps_ = -1;
  int64_t exact_gaps_steps_ = -1;  // steps_ at the last exact gap pass
  // ⟨v_i, w⟩ at block i's last visit (before its step).
  std::vector<double> visit_state_dots_;
  int64_t pass_draws_ = 0;
  int64_t pass_hits_ = 0;
  std::vector<int> order_;                // this pass's permutation
  std::vector<double> exact_block_gaps_;  // scratch of RefreshBlockGaps

  // Per-step scratch.
  OracleResult oracle_;
  std::vector<const Corner*> corner_pointers_;
  std::vector<double> scores_;
  BcfwMove move_;
  // Fully-corrective inner solve, reused so the step allocates nothing.
  std::vector<int> inner_active_;
  std::vector<double> inner_alpha_, inner_gradient_, inner_delta_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_RUN_H_
