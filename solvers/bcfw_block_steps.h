// BcfwBlockSteps: one block's step of the BCFW family (bcfw.h): its oracle
// side at the current w (the max oracle, or, with stored corners, their
// scores and a possible cache hit), the FW corner joining the block's
// store, the move (plain FW, pairwise, away, best, or fully corrective over
// the active set), and the move applied to w, the block state, the loss
// terms, the average and the corners' alpha. A pass (BcfwRun) and a
// mini-batch round (BcfwRounds) are made of these.
//
//   BcfwShared shared(config, problem);  // ...initialised by BcfwRun
//   BcfwBlockSteps steps(&shared);
//   BcfwBlockOracle oracle;
//   steps.ComputeBlockOracle(i, &oracle);  // reads only
//   steps.ApplyBlockStep(i, &oracle);      // moves w and block i
//
// Thread-safety: ComputeBlockOracle, PrepareFwCorner, ChooseStep and
// FullyCorrectiveMove touch only block i's data (distinct blocks may run
// at once, as a round's phase one does); the rest one thread at a time.

#ifndef CHAINTAG_SOLVERS_BCFW_BLOCK_STEPS_H_
#define CHAINTAG_SOLVERS_BCFW_BLOCK_STEPS_H_

#include <cstdint>
#include <vector>

#include "solvers/bcfw_shared.h"
#include "solvers/corner_store.h"
#include "solvers/problem.h"

namespace chaintag {

class BcfwBlockSteps {
 public:
  explicit BcfwBlockSteps(BcfwShared* shared) : shared_(*shared) {}

  // The next block of a pass at step j: the configured sampler (`order`
  // is the pass's permutation).
  int NextBlock(int j, const std::vector<int>& order);
  // The oracle side of block i's step at the current w, changing nothing
  // of the run: the oracle's corner, or, with corners kept, the stored
  // corners' scores, <v_i, w> and either a cached corner that passes the
  // hit test or the oracle's corner.
  void ComputeBlockOracle(int i, BcfwBlockOracle* out) const;
  // The whole step of a pass (tau = 1) from ComputeBlockOracle's result.
  void ApplyBlockStep(int i, BcfwBlockOracle* oracle);
  // The FW corner's store index (adding the oracle's corner to the store)
  // and its block gap, without the shared bookkeeping.
  int PrepareFwCorner(int i, BcfwBlockOracle* oracle, double* fw_gap);
  // The shared bookkeeping of a prepared block (counters, gap estimates).
  void RecordBlockOracle(int i, const BcfwBlockOracle& oracle);
  // The configured move (FW, pairwise, away or the best of the three, each
  // with its exact dual improvement) from the FW corner `fw`, into `move`.
  void ChooseStep(int i, int fw, double fw_gap, double state_dot,
                  const std::vector<double>& scores, BcfwMove* move) const;
  // Maximises the block's dual over alpha on its active set plus the FW
  // corner (active_set_bcfw).
  void FullyCorrectiveMove(int i, int fw_entry,
                           const std::vector<double>& scores, BcfwMove* move,
                           BcfwBlockOracle* scratch) const;
  // UpdateBlock's scalars, for any block (remote ones included): the
  // average's accumulator, l and l_i (the state's average is folded
  // before).
  void UpdateBlockScalars(int i, double delta_ell, int64_t step);
  // UpdateBlock's state and alpha part (the owner's).
  void UpdateBlockState(int i, const BcfwMove& move,
                        const Corner& oracle_corner);
  // The stored corners' inner products with `corner` (keep_dots).
  std::vector<double> CornerDots(int i, const Corner& corner) const;

  // ||v_i - psi_i(stored corner k)||^2: from the stored corners' inner
  // products when the block's alpha is complete and dots are kept
  // (O(active^2), without reading the block state), else from the state.
  double StateToCornerDistanceSquared(int i, int k) const;

 private:
  void PlainStep(int i, const OracleResult& oracle);
  void MakeRoom(int i, CornerStore* store, std::vector<double>* scores);
  int FwCorner(int i, BcfwBlockOracle* oracle, double* fw_gap);
  // Applies x += scale/(lambda n)*dv of `move` (before the block state
  // changes).
  void ApplyToVector(int i, const BcfwMove& move, const Corner& oracle_corner,
                     double scale, double* x) const;
  void ApplyMove(int i, const BcfwMove& move, const Corner& oracle_corner,
                 double oracle_loss);
  // ApplyMove's block part (all but w): loss terms, averaging, the state,
  // the corners' alpha; `step` is the step's number s.
  void UpdateBlock(int i, const BcfwMove& move, const Corner& oracle_corner,
                   double oracle_loss, int64_t step);
  // Whether a step scaling block i's state (`state_size` doubles) adds
  // -c*alpha_k psi_k per active stored corner instead: alpha complete and
  // cheaper.
  bool ScalesStateThroughAlpha(int i, int64_t state_size) const;

  BcfwShared& shared_;
  // ApplyToVector's list of a block's active corners and their alpha.
  mutable std::vector<const Corner*> mixture_corners_;
  mutable std::vector<double> mixture_weights_;
  BcfwMove move_;  // per-step scratch
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_BLOCK_STEPS_H_
