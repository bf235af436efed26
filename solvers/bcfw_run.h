// BcfwRun: one run of the block-coordinate Frank-Wolfe family (bcfw.h) as an
// object whose dual state outlives a solve, so that the regularization path
// (regularization_path.h) can warm-start it at a smaller lambda. BcfwSolver
// is Initialize + Run; nothing else should need this header.
//
// BcfwRun is the pass loop's side (pass_driver.h): initialisation and the
// config's checks, the pass's steps, exact gap passes, the returned point,
// checkpoints (bcfw_checkpoint.cc) and warm starts (bcfw_warm_start.cc). Its
// data is a BcfwShared (bcfw_shared.h) that its parts share: BcfwBlockSteps
// (one block's step), BcfwRounds (mini-batch rounds and their exchange),
// BlockAverage (weighted averaging), BoxConstraints, RoundMerge.
//
//   BcfwRun run(config, problem);
//   RETURN_IF_ERROR(run.Validate());
//   run.Initialize();
//   absl::StatusOr<TrainingSummary> summary = run.Run(&monitor);
//   const std::vector<double>& w = run.ReturnedPoint();
//
// Thread-safety: one thread at a time (exact gap passes and rounds use
// config.num_threads internally).

#ifndef CHAINTAG_SOLVERS_BCFW_RUN_H_
#define CHAINTAG_SOLVERS_BCFW_RUN_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/step_helpers.h"
#include "solvers/bcfw.h"
#include "solvers/bcfw_block_steps.h"
#include "solvers/bcfw_rounds.h"
#include "solvers/bcfw_shared.h"
#include "solvers/duality_gap.h"
#include "solvers/monitor.h"
#include "solvers/pass_driver.h"
#include "solvers/problem.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

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
  void Reseed(uint64_t seed) { shared_.random = SolverRandom(seed); }

  double lambda() const { return shared_.lambda; }
  // l = sum_i l_i of the iterate: its dual is l - lambda/2 ||w||^2.
  double ell() const { return shared_.ell; }
  // Keep and refresh block-gap estimates even without gap sampling or a
  // cache (a path reads them between solves).
  void set_refresh_block_gaps() { shared_.refresh_block_gaps = true; }
  // Whether the estimates are the exact block gaps at the current w (an
  // exact gap pass ran and no step followed).
  bool block_gaps_exact() const {
    return shared_.exact_gaps_steps == shared_.steps;
  }
  const std::vector<double>& block_gaps() const { return shared_.block_gap; }
  double GapEstimate() const { return shared_.GapEstimate(); }
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
    shared_.distribution = distribution;
  }
  // Call before Solve hands w over.
  void CheckInvariants(BcfwInvariants* invariants) const;

  // The pass loop's side (pass_driver.h), for Run.
  absl::Status RunSteps(int pass, PassDriver* driver) override;
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord* record) override;
  absl::Span<const double> Point() override { return ReturnedPoint(); }
  int64_t OracleCalls() const override { return shared_.oracle_calls; }
  absl::Status SaveState(CheckpointWriter* writer) const override;
  absl::Status LoadState(const CheckpointReader& reader) override;

 private:
  // Exact block gaps at the iterate: they refresh every estimate, and
  // without averaging they are also the certificate.
  absl::StatusOr<DualityGap> RefreshBlockGaps();

  BcfwShared shared_;
  BcfwBlockSteps block_steps_;
  BcfwRounds rounds_;
  BcfwBlockOracle oracle_;  // a pass's step of tau = 1
  // The other threads, lent to the steps of tau = 1 (which run one after
  // another on this thread) for the problem to split a step's work over;
  // made at the first such pass with more than one thread.
  std::unique_ptr<StepHelpers> step_helpers_;
  BcfwInvariants* invariants_ = nullptr;
  // The average point, formed on first read after a step, after
  // average_steps_ steps.
  std::vector<double> average_;
  int64_t average_steps_ = -1;
  std::vector<double> exact_block_gaps_;  // scratch of RefreshBlockGaps
  // A failed exchange inside ReturnedPoint, reported by the next EndPass.
  absl::Status distribution_status_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_RUN_H_
