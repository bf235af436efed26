// BcfwRounds: BCFW's mini-batch rounds (solver.minibatch tau > 1). tau
// distinct blocks are drawn; their oracles and steps are prepared at the
// round's w on the threads (phase one), or on the ranks that own them in a
// distributed run, which then exchange what the round reads of each block
// (bcfw_exchange.cc, in bcfw_wire.h's format); the shared bookkeeping runs
// in the order drawn; the steps' changes of w are merged into U
// (RoundMerge) and one line search along U gives t; then w += t*U and each
// block's state moves by t times its step. Every coordinate gets its deltas
// in block order, so a round does not depend on the thread count, nor on
// the ranks.
//
//   BcfwRounds rounds(&shared, &block_steps);
//   for (int j = 0; j < n; j += tau) RETURN_IF_ERROR(rounds.RunRound(j, tau));
//
// Thread-safety: one thread at a time; a round's phases run on
// solver.num_threads threads, each item writing only its own data.

#ifndef CHAINTAG_SOLVERS_BCFW_ROUNDS_H_
#define CHAINTAG_SOLVERS_BCFW_ROUNDS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/batch_pool.h"
#include "solvers/bcfw_block_steps.h"
#include "solvers/bcfw_shared.h"
#include "solvers/bcfw_wire.h"
#include "solvers/round_merge.h"

namespace chaintag {

class BcfwRounds {
 public:
  BcfwRounds(BcfwShared* shared, BcfwBlockSteps* steps)
      : shared_(*shared), steps_(*steps) {}

  // The round of `size` blocks starting at step j of the pass.
  absl::Status RunRound(int j, int size);

 private:
  // The configured sampler, never a block already in the round.
  int DrawRoundBlock(int j);
  // Phase one of a round, on the threads: each block's oracle and step at
  // the round's w, touching only the block's own state.
  void PrepareRound(int size);
  void PrepareBlockStep(int i, BcfwBlockOracle* oracle);
  // The prepared step's dw (BcfwBlockOracle::located).
  void EncodeBlockDelta(int i, BcfwBlockOracle* oracle) const;
  // The linear change of the dual per unit of `move` at the w `oracle` saw.
  // Also its change of l per unit, into `ell_slope`.
  double MoveSlope(int i, const BcfwMove& move, const BcfwBlockOracle& oracle,
                   double* ell_slope) const;
  // The round's joint line search: t in [0, 1] maximising the dual along
  // U, the sum of the steps' changes of w.
  double RoundScale(int size);
  // job(item) for items [0, items) on solver.num_threads threads, each
  // writing only its own item's data. A template, so that the job is called
  // through BatchPool::Run's pointer and never copied into a
  // std::function (a capture of more than two words would allocate).
  template <typename Job>
  void RunRoundPhase(int items, const Job& job);
  // The state side of the round's k-th block (its step is `step`).
  void UpdateRoundBlock(int k, double t, int64_t step);
  // Distributed rounds: every rank's prepared blocks into every rank's
  // round_oracles_ (the fields a round reads of a remote block).
  absl::Status ExchangeRound(int size);

  BcfwShared& shared_;
  BcfwBlockSteps& steps_;
  // The round's blocks and their oracles, which blocks are in the round,
  // and the threads.
  std::vector<int> round_blocks_;
  std::vector<int> prepare_order_;  // PrepareRound's order of the blocks
  std::vector<BcfwBlockOracle> round_oracles_;
  std::vector<char> in_round_;
  std::unique_ptr<BatchPool> round_pool_;
  // The round's merge, made by the first round; its moving blocks' deltas.
  std::unique_ptr<RoundMerge> merge_;
  std::vector<const LocatedDelta*> moving_deltas_;
  // ExchangeRound's buffers, kept for their capacity.
  std::string exchange_local_, exchange_all_;
  std::vector<int64_t> exchange_offsets_;
  DeltaCodec delta_codec_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_ROUNDS_H_
