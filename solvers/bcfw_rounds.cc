// BcfwRounds (bcfw_rounds.h), mini-batch rounds (solver.minibatch τ > 1): τ
// distinct blocks drawn, their oracles and steps prepared at the round's w on
// the threads (phase one), the shared bookkeeping in the order drawn, the
// steps' changes of w summed into U by parts of w that the threads own, one
// line search along U, and w += t·U. Every coordinate gets its deltas in block
// order, so a round does not depend on the thread count, nor, in a
// distributed run (bcfw_exchange.cc), on the ranks.
//
// Thread-safety: one thread at a time; a round's phases run on
// solver.num_threads threads, each item writing only its own data.

#include "solvers/bcfw_rounds.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "base/batch_pool.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_wire.h"
#include "solvers/corner_store.h"
#include "solvers/problem.h"
#include "solvers/round_merge.h"

namespace chaintag {

using bcfw_internal::kInfinity;
using bcfw_internal::LineSearch;

// A round of τ blocks: their oracles and steps at the round's w (phase one,
// on the threads, or on the ranks that own them), the shared bookkeeping in
// the order drawn, then one line search along the sum of the steps (each
// block's step was line-searched alone, at a w the others then move:
// scaling them all by the best t keeps every round an ascent step of the
// dual), and the scaled steps applied in the order drawn.
absl::Status BcfwRounds::RunRound(int j, int size) {
  in_round_.resize(shared_.n, 0);
  round_blocks_.clear();
  for (int k = 0; k < size; ++k) {
    const int i = DrawRoundBlock(j + k);
    in_round_[i] = 1;
    round_blocks_.push_back(i);
  }
  for (int i : round_blocks_) in_round_[i] = 0;
  PrepareRound(size);
  if (shared_.distribution.communicator != nullptr) {
    absl::Status status = ExchangeRound(size);
    if (!status.ok()) return status;
  }
  for (int k = 0; k < size; ++k) {
    ++shared_.pass_draws;
    steps_.RecordBlockOracle(round_blocks_[k], round_oracles_[k]);
  }
  const double t = RoundScale(size);
  // The scalars in block order; each block's state and w's parts on the
  // threads.
  const int64_t first_step = shared_.steps + 1;
  for (int k = 0; k < size; ++k) {
    const int i = round_blocks_[k];
    const BcfwBlockOracle& oracle = round_oracles_[k];
    const int64_t step = ++shared_.steps;
    if (t <= 0 || !oracle.moves) continue;
    steps_.UpdateBlockScalars(i, t * oracle.ell_slope, step);
    if (shared_.averaging && !shared_.IsLocal(i))
      shared_.block_average.Fold(i, step - 1);
  }
  const int parts = merge_->parts();
  // The parts first: they are the longest items.
  RunRoundPhase(parts + size, [this, t, parts, first_step](int item) {
    if (item < parts) {
      merge_->ApplyPart(item, t, shared_.w.data());
    } else if (shared_.IsLocal(round_blocks_[item - parts])) {
      UpdateRoundBlock(item - parts, t, first_step + item - parts);
    }
  });
  return absl::OkStatus();
}

// A local round block's own state after the round's scale t: its average,
// its state and, with corners, their α.
void BcfwRounds::UpdateRoundBlock(int k, double t, int64_t step) {
  const int i = round_blocks_[k];
  BcfwBlockOracle& oracle = round_oracles_[k];
  BcfwMove& move = oracle.move;
  for (double& c : move.coefficients) c *= t;
  move.state_coefficient *= t;
  if (t > 0 && oracle.moves) {
    if (shared_.averaging) shared_.block_average.Fold(i, step - 1);
    steps_.UpdateBlockState(i, move, oracle.oracle.corner);
  }
  if (!shared_.keep_corners) return;
  CornerStore& store = shared_.corners[i];
  if (move.state_coefficient <= -1.0) {
    for (int e = 0; e < store.size(); ++e) store.entry(e).alpha = 0;
    store.entry(oracle.fw_entry).alpha = 1;
  }
  if (!shared_.use_cache) store.RemoveInactive();
}

double BcfwRounds::RoundScale(int size) {
  moving_deltas_.clear();
  for (int k = 0; k < size; ++k) {
    if (round_oracles_[k].moves) {
      moving_deltas_.push_back(&round_oracles_[k].located);
    }
  }
  merge_->BeginRound();
  RunRoundPhase(merge_->parts(), [this](int part) {
    merge_->AccumulatePart(part, moving_deltas_);
  });
  double slope = 0;
  for (int k = 0; k < size; ++k) slope += round_oracles_[k].slope;
  return LineSearch(slope, shared_.lambda * merge_->NormSquared(), 1.0);
}

template <typename Job>
void BcfwRounds::RunRoundPhase(int items, const Job& job) {
  const int threads = shared_.NumThreads();
  if (threads == 1) {
    for (int item = 0; item < items; ++item) job(item);
    return;
  }
  if (round_pool_ == nullptr) {
    round_pool_ = std::make_unique<BatchPool>(threads);
  }
  round_pool_->Run(items, job);
}

// Block i's Δw at unit scale, c/(λn)·Δv, as the problem encodes it.
void BcfwRounds::EncodeBlockDelta(int i, BcfwBlockOracle* oracle) const {
  const BcfwMove& move = oracle->move;
  BlockUpdate* delta = &oracle->located.delta;
  delta->Clear();
  const double c = 1.0 / (shared_.lambda * shared_.n);
  auto corner_of = [&](int entry) -> const Corner& {
    return entry < 0 ? oracle->oracle.corner
                     : shared_.corners[i].entry(entry).corner;
  };
  if (move.state_coefficient != 0) {
    shared_.problem.EncodeCornerMinusState(i, corner_of(move.entries[0]),
                                           shared_.states.Read(i),
                                           c * move.coefficients[0], delta);
    return;
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    if (move.coefficients[k] == 0) continue;
    shared_.problem.EncodeScaled(i, corner_of(move.entries[k]),
                                 c * move.coefficients[k], delta);
  }
}

void BcfwRounds::PrepareBlockStep(int i, BcfwBlockOracle* oracle) {
  BcfwMove& move = oracle->move;
  move.Clear();
  if (!shared_.keep_corners) {
    const OracleResult& result = oracle->oracle;
    oracle->fw_gap = (result.state_dot - result.score) / shared_.n -
                     shared_.ell_block[i] + result.loss / shared_.n;
    double gamma;
    if (shared_.config.line_search()) {
      const double curvature = shared_.problem.StateDistanceSquared(
                                   i, shared_.states.Read(i), result.corner) /
                               (shared_.lambda * shared_.n * shared_.n);
      gamma =
          curvature > 0 ? std::clamp(oracle->fw_gap / curvature, 0.0, 1.0) : 0;
    } else {
      gamma = 2.0 * shared_.n /
              (static_cast<double>(shared_.steps) + 2.0 * shared_.n);
    }
    if (gamma > 0) {
      move.Add(-1, gamma);
      move.state_coefficient = -gamma;
    }
  } else {
    oracle->fw_entry = steps_.PrepareFwCorner(i, oracle, &oracle->fw_gap);
    if (shared_.fully_corrective) {
      steps_.FullyCorrectiveMove(i, oracle->fw_entry, oracle->scores, &move,
                                 oracle);
    } else {
      steps_.ChooseStep(i, oracle->fw_entry, oracle->fw_gap, oracle->state_dot,
                        oracle->scores, &move);
    }
  }
  oracle->slope = MoveSlope(i, move, *oracle, &oracle->ell_slope);
  oracle->moves = !move.entries.empty();
  if (oracle->moves) EncodeBlockDelta(i, oracle);
}

// dD/dγ of the move at the w `oracle` saw: Δℓ − ⟨w, Δv⟩/n with
// Δv = Σ c_k ψ(y_k) + c_state·v_i.
double BcfwRounds::MoveSlope(int i, const BcfwMove& move,
                             const BcfwBlockOracle& oracle,
                             double* ell_slope) const {
  double delta_ell = move.state_coefficient * shared_.ell_block[i];
  double dot = move.state_coefficient * oracle.state_dot;
  for (size_t k = 0; k < move.entries.size(); ++k) {
    const int entry = move.entries[k];
    const double c = move.coefficients[k];
    if (entry < 0) {
      delta_ell += c * oracle.oracle.loss / shared_.n;
      dot += c * oracle.oracle.score;
    } else {
      delta_ell += c * shared_.corners[i].entry(entry).loss / shared_.n;
      dot += c * oracle.scores[entry];
    }
  }
  *ell_slope = delta_ell;
  return delta_ell - dot / shared_.n;
}

// The configured sampler, but never a block already in the round (a block's
// oracle is computed from its state before the round's steps): a repeat
// draws again, and unvisited blocks are swept in index order past those
// the round holds.
int BcfwRounds::DrawRoundBlock(int j) {
  if (shared_.config.sampling() == SolverConfig::PERMUTATION)
    return shared_.order[j];
  if (shared_.gap_sampling && shared_.num_unvisited > 0) {
    for (int i = shared_.next_unvisited; i < shared_.n; ++i) {
      if (shared_.block_gap[i] == kInfinity && !in_round_[i]) return i;
    }
  }
  for (int attempt = 0; attempt < 64; ++attempt) {
    int i;
    if (shared_.gap_sampling && shared_.gap_tree.Total() > 0) {
      i = shared_.gap_tree.Sample(shared_.random.UniformDouble());
    } else {
      i = static_cast<int>(shared_.random.Uniform(shared_.n));
    }
    if (!in_round_[i]) return i;
  }
  // Almost every block is in the round: the first one that is not.
  int i = 0;
  while (in_round_[i]) ++i;
  return i;
}

// Phase one on solver.num_threads threads: each block writes only its own
// slot and state, so the round is the same whatever the thread count. A
// distributed run prepares its own blocks only.
void BcfwRounds::PrepareRound(int size) {
  if (static_cast<int>(round_oracles_.size()) < size) {
    round_oracles_.resize(size);
  }
  if (merge_ == nullptr) {
    // At most 255 parts: an addition's owner is a byte.
    merge_ = std::make_unique<RoundMerge>(
        shared_.dim, shared_.Granularity(),
        std::clamp(shared_.config.num_threads(), 1, 255));
  }
  // Longest blocks first (their state size is proportional to their
  // length), so that the threads finish together.
  prepare_order_.resize(size);
  for (int k = 0; k < size; ++k) prepare_order_[k] = k;
  std::stable_sort(prepare_order_.begin(), prepare_order_.end(),
                   [this](int a, int b) {
                     return shared_.problem.BlockStateSize(round_blocks_[a]) >
                            shared_.problem.BlockStateSize(round_blocks_[b]);
                   });
  RunRoundPhase(size, [this](int item) {
    const int k = prepare_order_[item];
    if (!shared_.IsLocal(round_blocks_[k])) return;
    steps_.ComputeBlockOracle(round_blocks_[k], &round_oracles_[k]);
    PrepareBlockStep(round_blocks_[k], &round_oracles_[k]);
    if (round_oracles_[k].moves) merge_->Locate(&round_oracles_[k].located);
  });
}

}  // namespace chaintag
