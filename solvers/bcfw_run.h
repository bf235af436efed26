// BcfwRun: one run of the block-coordinate Frank-Wolfe family (bcfw.h) as an
// object whose dual state outlives a solve, so that the regularization path
// (regularization_path.h) can warm-start it at a smaller λ. BcfwSolver is
// Initialize + Run; nothing else should need this header.
//
// Its definitions are split by concern: bcfw.cc (initialisation, block
// steps, sampling, the pass loop), bcfw_moves.cc (the moves over a block's
// stored corners), bcfw_rounds.cc
// (mini-batch rounds), bcfw_exchange.cc (a distributed round's exchange,
// in bcfw_wire.h's format), bcfw_checkpoint.cc (checkpoints and the
// invariants) and bcfw_warm_start.cc (the regularization path's side).
//
// Thread-safety: one thread at a time (exact gap passes use
// config.num_threads internally).

#ifndef CHAINTAG_SOLVERS_BCFW_RUN_H_
#define CHAINTAG_SOLVERS_BCFW_RUN_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/batch_pool.h"
#include "base/random.h"
#include "solvers/bcfw.h"
#include "solvers/bcfw_wire.h"
#include "solvers/block_average.h"
#include "solvers/box_constraints.h"
#include "solvers/corner_store.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/pass_driver.h"
#include "solvers/problem.h"
#include "solvers/round_merge.h"
#include "solvers/solver_config.pb.h"
#include "solvers/sum_tree.h"

namespace chaintag {

// A block move Δv_i = Σ_k c_k·ψ_i(y_k) + c_state·v_i with Σ c_k + c_state = 0
// (so α stays on the simplex). FW: c_s = γ, c_state = −γ. Pairwise:
// c_s = γ, c_a = −γ. Away: c_a = −γ, c_state = γ. Fully corrective: c_k = Δα_k.
struct BcfwMove {
  std::vector<int> entries;  // store indices, or -1 for the oracle corner
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
  // The oracle side of one block step, computed at the round's w (see
  // ComputeBlockOracle): what the step then needs.
  struct BlockOracle {
    OracleResult oracle;  // the max oracle's corner, unless a cache hit
    std::vector<const Corner*> corner_pointers;
    std::vector<double> scores;  // the stored corners' ⟨w, ψ_i(y)⟩
    double state_dot = 0;        // ⟨v_i, w⟩
    int cache_hit = -1;          // the store index of a cached FW corner
    double cache_gap = 0;        // its block gap
    // Rounds of τ > 1: the step chosen from these (at the round's w), its
    // FW corner's store index and block gap, and the step's linear dual
    // change per unit (the derivative the round's joint line search uses).
    BcfwMove move;
    int fw_entry = -1;
    double fw_gap = 0;
    double slope = 0;
    // Whether the step moves (so has a delta), its change of l per unit,
    // and its change of w per unit, dw = dv/(lambda n), in the problem's
    // encoding, located for the round's merge: what a round sums, and what
    // a distributed run's ranks exchange.
    bool moves = false;
    double ell_slope = 0;
    LocatedDelta located;
    // The fully corrective inner solve's scratch.
    std::vector<int> inner_active;
    std::vector<double> inner_alpha, inner_gradient, inner_delta;
  };

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
  // A distributed run (duality_gap.h): the problem is a ShardProblem, this
  // process computes its own blocks' oracles, and every round's block
  // deltas are exchanged, so that w is the same on every rank and the same
  // as a run in one process with the same τ and seed. Needs τ > 1.
  void set_distribution(const BlockDistribution& distribution) {
    distribution_ = distribution;
  }
  // Call before Solve hands w over.
  void CheckInvariants(BcfwInvariants* invariants) const;

  // The pass loop's side (pass_driver.h), for Run.
  absl::Status RunSteps(int pass, PassDriver* driver) override;
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord* record) override;
  absl::Span<const double> Point() override { return ReturnedPoint(); }
  int64_t OracleCalls() const override { return oracle_calls_; }
  absl::Status SaveState(CheckpointWriter* writer) const override;
  absl::Status LoadState(const CheckpointReader& reader) override;

 private:
  // Block steps, sampling and the pass loop: bcfw.cc.

  int NextBlock(int j, const std::vector<int>& order);
  void ComputeBlockOracle(int i, BlockOracle* out) const;
  void ApplyBlockStep(int i, BlockOracle* oracle);
  void PlainStep(int i, const OracleResult& oracle);
  void MakeRoom(int i, CornerStore* store, std::vector<double>* scores);
  int FwCorner(int i, BlockOracle* oracle, double* fw_gap);
  // The FW corner's store index (adding the oracle's corner to the store)
  // and its block gap, without the shared bookkeeping.
  int PrepareFwCorner(int i, BlockOracle* oracle, double* fw_gap);
  // The shared bookkeeping of a prepared block (counters, gap estimates).
  void RecordBlockOracle(int i, const BlockOracle& oracle);
  absl::StatusOr<DualityGap> RefreshBlockGaps();
  // Applies x += scale/(λn)·Δv of `move` (before the block state changes),
  void ApplyToVector(int i, const BcfwMove& move, const Corner& oracle_corner,
                     double scale, double* x) const;
  void ApplyMove(int i, const BcfwMove& move, const Corner& oracle_corner,
                 double oracle_loss);
  // ApplyMove's block part (all but w): loss terms, averaging, the state,
  // the corners' α; `step` is the step's number s.
  void UpdateBlock(int i, const BcfwMove& move, const Corner& oracle_corner,
                   double oracle_loss, int64_t step);
  // UpdateBlock's scalars, for any block (remote ones included): ℓ̄'s
  // accumulator, ℓ and ℓ_i (the state's average is folded before).
  void UpdateBlockScalars(int i, double delta_ell, int64_t step);
  // UpdateBlock's state and α part (the owner's).
  void UpdateBlockState(int i, const BcfwMove& move,
                        const Corner& oracle_corner);
  std::vector<double> CornerDots(int i, const Corner& corner) const;
  // Whether block i's store holds all of its α, so that v_i = Σ_k α_k ψ_k
  // over the stored corners: always with active sets; with FW steps and
  // the cache until a full store evicts a corner with α > 0 (its mass then
  // lives only in the state), and again after a full step.
  bool AlphaComplete(int i) const {
    return track_alpha_ || (!alpha_complete_.empty() && alpha_complete_[i]);
  }
  // ‖v_i − ψ_i(stored corner k)‖²: from the stored corners' inner products
  // when the block's α is complete and dots are kept (O(active²), without
  // reading the block state), else from the state.
  double StateToCornerDistanceSquared(int i, int k) const;
  // Whether a step scaling block i's state (`state_size` doubles) adds
  // −c·α_k ψ_k per active stored corner instead: α complete and cheaper.
  bool ScalesStateThroughAlpha(int i, int64_t state_size) const;
  void SetBlockGap(int i, double gap);
  double* state(int i) { return states_.data() + state_offset_[i]; }

  // Moves over a block's stored corners: bcfw_moves.cc.

  void ChooseStep(int i, int fw, double fw_gap, double state_dot,
                  const std::vector<double>& scores, BcfwMove* move) const;
  void FullyCorrectiveMove(int i, int fw_entry,
                           const std::vector<double>& scores, BcfwMove* move,
                           BlockOracle* scratch) const;

  // Mini-batch rounds: bcfw_rounds.cc.

  // Mini-batches (solver.minibatch τ > 1): the τ distinct blocks of the
  // round starting at step j of the pass into round_blocks_, their oracles
  // at the round's w (on the thread pool), then their steps in that order.
  absl::Status RunRound(int j, int size);
  int DrawRoundBlock(int j);
  // Phase one of a round, on the threads: each block's oracle and step at
  // the round's w, touching only the block's own state.
  void PrepareRound(int size);
  void PrepareBlockStep(int i, BlockOracle* oracle);
  // The prepared step's Δw (BlockOracle::delta).
  void EncodeBlockDelta(int i, BlockOracle* oracle) const;
  // The linear change of the dual per unit of `move` at the w `oracle` saw.
  // Also its change of ℓ per unit, into `ell_slope`.
  double MoveSlope(int i, const BcfwMove& move, const BlockOracle& oracle,
                   double* ell_slope) const;
  bool IsLocal(int i) const {
    return distribution_.communicator == nullptr ||
           (i >= distribution_.shard.begin && i < distribution_.shard.end);
  }
  // The round's joint line search: the sum U of the steps' changes of w
  // (each coordinate's deltas added in block order, merge_), and t in
  // [0, 1] maximising the dual along it.
  double RoundScale(int size);
  // The round's phases on solver.num_threads threads: job(item) for items
  // [0, items), each writing only its own item's data.
  void RunRoundPhase(int items, const std::function<void(int)>& job);
  // The state side of the round's k-th block (its step is `step`).
  void UpdateRoundBlock(int k, double t, int64_t step);

  // A distributed round's exchange: bcfw_exchange.cc.

  // Distributed rounds: every rank's prepared blocks into every rank's
  // round_oracles_ (the fields a round reads of a remote block).
  absl::Status ExchangeRound(int size);

  // Checkpoints: bcfw_checkpoint.cc.

  void SaveCorners(CheckpointWriter* writer) const;
  absl::Status LoadCorners(const CheckpointReader& reader);

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
  // The stored corners keep their inner products (StoredCorner::dots):
  // fully-corrective moves need them, and FW steps with the cache read
  // ‖v_i − ψ_i(y)‖² from them while alpha_complete_.
  const bool keep_dots_;
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
  // Weighted averaging, per block (see bcfw.h), and the average point it
  // last formed, after average_steps_ steps.
  BlockAverage block_average_;
  int64_t steps_ = 0;
  std::vector<double> average_;
  int64_t average_steps_ = -1;

  // Box constraints: the boxed coordinates of w hold the truncation of
  // v = A*alpha, whose own values the boxes keep.
  BoxConstraints boxes_;

  std::vector<CornerStore> corners_;
  // Per block (FW steps with the cache): see AlphaComplete.
  std::vector<char> alpha_complete_;
  // ApplyToVector's list of a block's active corners and their α.
  mutable std::vector<const Corner*> mixture_corners_;
  mutable std::vector<double> mixture_weights_;
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

  // Mini-batch rounds: τ, the round's blocks and their oracles (one slot
  // when τ = 1), which of the blocks are in the round, and the threads.
  const int minibatch_;
  std::vector<int> round_blocks_;
  std::vector<int> prepare_order_;  // PrepareRound's order of the blocks
  std::vector<BlockOracle> round_oracles_;
  std::vector<char> in_round_;
  std::unique_ptr<BatchPool> round_pool_;
  std::function<void(int)> round_job_;
  // The round's merge, made by the first round; its moving blocks' deltas.
  std::unique_ptr<RoundMerge> merge_;
  std::vector<const LocatedDelta*> moving_deltas_;
  // solver.num_threads, at least one.
  int NumThreads() const { return std::max(1, config_.num_threads()); }
  // RangeGranularity(problem_), computed on first use (it costs a look at
  // every block's ranges).
  int64_t Granularity() {
    if (granularity_ == 0) {
      granularity_ = RangeGranularity(problem_, NumThreads());
    }
    return granularity_;
  }
  int64_t granularity_ = 0;
  // Distributed runs (set_distribution); no communicator otherwise. A
  // failed exchange inside ReturnedPoint, reported by the next EndPass.
  BlockDistribution distribution_;
  absl::Status distribution_status_;
  // ExchangeRound's buffers, kept for their capacity.
  std::string exchange_local_, exchange_all_;
  std::vector<int64_t> exchange_offsets_;
  DeltaCodec delta_codec_;

  // Per-step scratch.
  BcfwMove move_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_RUN_H_
