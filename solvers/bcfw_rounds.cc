// BcfwRun's mini-batch rounds (solver.minibatch τ > 1): τ distinct blocks
// drawn, their oracles and steps prepared at the round's w on the threads
// (phase one), the shared bookkeeping in the order drawn, the steps'
// changes of w summed into U by parts of w that the threads own, one line
// search along U, and w += t·U. Every coordinate gets its deltas in block
// order, so a round does not depend on the thread count, nor, in a
// distributed run (bcfw_exchange.cc), on the ranks.
//
// Thread-safety: BcfwRun's, one thread at a time; a round's phases run on
// solver.num_threads threads, each item writing only its own data.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "base/batch_pool.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_run.h"
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
absl::Status BcfwRun::RunRound(int j, int size) {
  in_round_.resize(n_, 0);
  round_blocks_.clear();
  for (int k = 0; k < size; ++k) {
    const int i = DrawRoundBlock(j + k);
    in_round_[i] = 1;
    round_blocks_.push_back(i);
  }
  for (int i : round_blocks_) in_round_[i] = 0;
  PrepareRound(size);
  if (distribution_.communicator != nullptr) {
    absl::Status status = ExchangeRound(size);
    if (!status.ok()) return status;
  }
  for (int k = 0; k < size; ++k) {
    ++pass_draws_;
    RecordBlockOracle(round_blocks_[k], round_oracles_[k]);
  }
  const double t = RoundScale(size);
  // The scalars in block order; each block's state and w's parts on the
  // threads.
  const int64_t first_step = steps_ + 1;
  for (int k = 0; k < size; ++k) {
    const int i = round_blocks_[k];
    const BlockOracle& oracle = round_oracles_[k];
    const int64_t step = ++steps_;
    if (t <= 0 || !oracle.moves) continue;
    UpdateBlockScalars(i, t * oracle.ell_slope, step);
    if (averaging_ && !IsLocal(i)) block_average_.Fold(i, step - 1);
  }
  const int parts = merge_->parts();
  // The parts first: they are the longest items.
  RunRoundPhase(parts + size, [this, t, parts, first_step](int item) {
    if (item < parts) {
      merge_->ApplyPart(item, t, w_.data());
    } else if (IsLocal(round_blocks_[item - parts])) {
      UpdateRoundBlock(item - parts, t, first_step + item - parts);
    }
  });
  return absl::OkStatus();
}

// A local round block's own state after the round's scale t: its average,
// its state and, with corners, their α.
void BcfwRun::UpdateRoundBlock(int k, double t, int64_t step) {
  const int i = round_blocks_[k];
  BlockOracle& oracle = round_oracles_[k];
  BcfwMove& move = oracle.move;
  for (double& c : move.coefficients) c *= t;
  move.state_coefficient *= t;
  if (t > 0 && oracle.moves) {
    if (averaging_) block_average_.Fold(i, step - 1);
    UpdateBlockState(i, move, oracle.oracle.corner);
  }
  if (!keep_corners_) return;
  CornerStore& store = corners_[i];
  if (move.state_coefficient <= -1.0) {
    for (int e = 0; e < store.size(); ++e) store.entry(e).alpha = 0;
    store.entry(oracle.fw_entry).alpha = 1;
  }
  if (!use_cache_) store.RemoveInactive();
}

double BcfwRun::RoundScale(int size) {
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
  return LineSearch(slope, lambda_ * merge_->NormSquared(), 1.0);
}

void BcfwRun::RunRoundPhase(int items, const std::function<void(int)>& job) {
  const int threads = NumThreads();
  if (threads == 1) {
    for (int item = 0; item < items; ++item) job(item);
    return;
  }
  if (round_pool_ == nullptr) {
    round_pool_ = std::make_unique<BatchPool>(
        threads, [this](int, int item) { round_job_(item); });
  }
  round_job_ = job;
  round_pool_->Start(items);
  round_pool_->Finish();
}

// Block i's Δw at unit scale, c/(λn)·Δv, as the problem encodes it.
void BcfwRun::EncodeBlockDelta(int i, BlockOracle* oracle) const {
  const BcfwMove& move = oracle->move;
  BlockUpdate* delta = &oracle->located.delta;
  delta->Clear();
  const double c = 1.0 / (lambda_ * n_);
  auto corner_of = [&](int entry) -> const Corner& {
    return entry < 0 ? oracle->oracle.corner : corners_[i].entry(entry).corner;
  };
  if (move.state_coefficient != 0) {
    problem_.EncodeCornerMinusState(i, corner_of(move.entries[0]),
                                    states_.data() + state_offset_[i],
                                    c * move.coefficients[0], delta);
    return;
  }
  for (size_t k = 0; k < move.entries.size(); ++k) {
    if (move.coefficients[k] == 0) continue;
    problem_.EncodeScaled(i, corner_of(move.entries[k]),
                          c * move.coefficients[k], delta);
  }
}

void BcfwRun::PrepareBlockStep(int i, BlockOracle* oracle) {
  BcfwMove& move = oracle->move;
  move.Clear();
  if (!keep_corners_) {
    const OracleResult& result = oracle->oracle;
    oracle->fw_gap = (result.state_dot - result.score) / n_ - ell_block_[i] +
                     result.loss / n_;
    double gamma;
    if (config_.line_search()) {
      const double curvature =
          problem_.StateDistanceSquared(i, states_.data() + state_offset_[i],
                                        result.corner) /
          (lambda_ * n_ * n_);
      gamma =
          curvature > 0 ? std::clamp(oracle->fw_gap / curvature, 0.0, 1.0) : 0;
    } else {
      gamma = 2.0 * n_ / (static_cast<double>(steps_) + 2.0 * n_);
    }
    if (gamma > 0) {
      move.Add(-1, gamma);
      move.state_coefficient = -gamma;
    }
  } else {
    oracle->fw_entry = PrepareFwCorner(i, oracle, &oracle->fw_gap);
    if (fully_corrective_) {
      FullyCorrectiveMove(i, oracle->fw_entry, oracle->scores, &move, oracle);
    } else {
      ChooseStep(i, oracle->fw_entry, oracle->fw_gap, oracle->state_dot,
                 oracle->scores, &move);
    }
  }
  oracle->slope = MoveSlope(i, move, *oracle, &oracle->ell_slope);
  oracle->moves = !move.entries.empty();
  if (oracle->moves) EncodeBlockDelta(i, oracle);
}

// dD/dγ of the move at the w `oracle` saw: Δℓ − ⟨w, Δv⟩/n with
// Δv = Σ c_k ψ(y_k) + c_state·v_i.
double BcfwRun::MoveSlope(int i, const BcfwMove& move,
                          const BlockOracle& oracle, double* ell_slope) const {
  double delta_ell = move.state_coefficient * ell_block_[i];
  double dot = move.state_coefficient * oracle.state_dot;
  for (size_t k = 0; k < move.entries.size(); ++k) {
    const int entry = move.entries[k];
    const double c = move.coefficients[k];
    if (entry < 0) {
      delta_ell += c * oracle.oracle.loss / n_;
      dot += c * oracle.oracle.score;
    } else {
      delta_ell += c * corners_[i].entry(entry).loss / n_;
      dot += c * oracle.scores[entry];
    }
  }
  *ell_slope = delta_ell;
  return delta_ell - dot / n_;
}

// The configured sampler, but never a block already in the round (a block's
// oracle is computed from its state before the round's steps): a repeat
// draws again, and unvisited blocks are swept in index order past those
// the round holds.
int BcfwRun::DrawRoundBlock(int j) {
  if (config_.sampling() == SolverConfig::PERMUTATION) return order_[j];
  if (gap_sampling_ && num_unvisited_ > 0) {
    for (int i = next_unvisited_; i < n_; ++i) {
      if (block_gap_[i] == kInfinity && !in_round_[i]) return i;
    }
  }
  for (int attempt = 0; attempt < 64; ++attempt) {
    int i;
    if (gap_sampling_ && gap_tree_.Total() > 0) {
      i = gap_tree_.Sample(random_.UniformDouble());
    } else {
      i = static_cast<int>(random_.Uniform(n_));
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
void BcfwRun::PrepareRound(int size) {
  if (static_cast<int>(round_oracles_.size()) < size) {
    round_oracles_.resize(size);
  }
  if (merge_ == nullptr) {
    // At most 255 parts: an addition's owner is a byte.
    merge_ = std::make_unique<RoundMerge>(
        dim_, Granularity(), std::clamp(config_.num_threads(), 1, 255));
  }
  // Longest blocks first (their state size is proportional to their
  // length), so that the threads finish together.
  prepare_order_.resize(size);
  for (int k = 0; k < size; ++k) prepare_order_[k] = k;
  std::stable_sort(prepare_order_.begin(), prepare_order_.end(),
                   [this](int a, int b) {
                     return problem_.BlockStateSize(round_blocks_[a]) >
                            problem_.BlockStateSize(round_blocks_[b]);
                   });
  RunRoundPhase(size, [this](int item) {
    const int k = prepare_order_[item];
    if (!IsLocal(round_blocks_[k])) return;
    ComputeBlockOracle(round_blocks_[k], &round_oracles_[k]);
    PrepareBlockStep(round_blocks_[k], &round_oracles_[k]);
    if (round_oracles_[k].moves) merge_->Locate(&round_oracles_[k].located);
  });
}

}  // namespace chaintag
