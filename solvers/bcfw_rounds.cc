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
#include "base/cpu_dispatch.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_run.h"
#include "solvers/bcfw_wire.h"
#include "solvers/corner_store.h"
#include "solvers/problem.h"

namespace chaintag {

using bcfw_internal::kInfinity;
using bcfw_internal::LineSearch;

namespace {

// How many additions ahead the round's slot lookups are prefetched, and
// how many ranges ahead the rows of w that U is added to.
constexpr size_t kSlotLookahead = 16;
constexpr size_t kRowLookahead = 4;
// Slots are dealt to the parts in runs of this many (a cache line of
// BcfwRun::SlotEntry), by norm group: run r is in group r mod kNormGroups,
// and group g's runs go to part g mod parts. The round's ‖U‖² is summed
// per group, then over the groups in order, so it does not depend on the
// number of parts as long as that is at most kNormGroups.
constexpr uint64_t kSlotsPerPartRun = 8;
constexpr uint64_t kNormGroups = 256;

uint64_t NormGroup(uint64_t slot) {
  return slot / kSlotsPerPartRun % kNormGroups;
}

// The round's merge loops, for AVX2 where there is one (no FMA: the clones
// round as the portable code does, so a model does not depend on the CPU).
// One delta's additions owned by a part into U, at the ranges
// `round_indices` gives in turn; returns the next delta's first index.
CHAINTAG_AVX2_CLONES const int32_t* AddOwnedAdditions(
    const BlockUpdate& delta, const int32_t* owned_begin,
    const int32_t* owned_end, const int32_t* round_indices,
    const int64_t* offsets, double* update) {
  for (const int32_t* a = owned_begin; a < owned_end; ++a) {
    delta.AddTo(*a, update + offsets[*round_indices++]);
  }
  return round_indices;
}

int32_t PartBegin(const BcfwRun::BlockOracle& oracle, int part) {
  return part == 0 ? 0 : oracle.part_ends[part - 1];
}

// ‖v‖² with four partial sums (x mod 4), added pairwise: a fixed order that
// vectorises, where one running sum waits on every addition.
CHAINTAG_AVX2_CLONES double NormSquared(const double* v, int64_t length) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t x = 0;
  for (; x + 4 <= length; x += 4) {
    s0 += v[x] * v[x];
    s1 += v[x + 1] * v[x + 1];
    s2 += v[x + 2] * v[x + 2];
    s3 += v[x + 3] * v[x + 3];
  }
  for (; x < length; ++x) s0 += v[x] * v[x];
  return (s0 + s1) + (s2 + s3);
}

CHAINTAG_AVX2_CLONES void AddScaledVector(const double* u, double t,
                                          int64_t length, double* w) {
  for (int64_t x = 0; x < length; ++x) w[x] += t * u[x];
}

}  // namespace

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
    if (averaging_ && !IsLocal(i)) FoldIntoAverage(i, step - 1);
  }
  const int parts = RoundParts();
  // The parts first: they are the longest items.
  RunRoundPhase(parts + size, [this, t, parts, first_step](int item) {
    if (item < parts) {
      ApplyRoundUpdate(item, t);
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
    if (averaging_) FoldIntoAverage(i, step - 1);
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

// At most 255 parts: an addition's owner is a byte.
int BcfwRun::RoundParts() const {
  return std::clamp(config_.num_threads(), 1, 255);
}

// Each addition's granularity slot of w and the part that owns it: slots
// in runs of kSlotsPerPartRun, dealt round the parts, so that threads
// merge disjoint coordinates and write to disjoint cache lines of the slot
// table.
void BcfwRun::LocateAdditions(int k) {
  BlockOracle& oracle = round_oracles_[k];
  const std::vector<int64_t>& targets = oracle.delta.targets;
  const uint64_t parts = RoundParts();
  const size_t additions = targets.size();
  oracle.slots.resize(additions);
  oracle.owners.resize(additions);
  oracle.part_ends.assign(parts, 0);
  for (size_t j = 0; j < additions; ++j) {
    const uint64_t slot = slot_map_.SlotOf(targets[j]);
    oracle.slots[j] = static_cast<int64_t>(slot);
    const uint8_t owner =
        parts == 1 ? 0 : static_cast<uint8_t>(NormGroup(slot) % parts);
    oracle.owners[j] = owner;
    ++oracle.part_ends[owner];
  }
  // A counting sort by owner, stable: each part's additions in order.
  int32_t end = 0;
  for (int32_t& part_end : oracle.part_ends) {
    end += part_end;
    part_end = end;
  }
  oracle.part_additions.resize(additions);
  for (size_t j = additions; j-- > 0;) {
    oracle.part_additions[--oracle.part_ends[oracle.owners[j]]] =
        static_cast<int32_t>(j);
  }
  // The decrements left part_ends[p] at part p's begin: shift to ends.
  for (uint64_t p = 0; p < parts; ++p) {
    oracle.part_ends[p] = p + 1 < parts ? oracle.part_ends[p + 1]
                                        : static_cast<int32_t>(additions);
  }
}

// Part p of U: the distinct ranges of its slots in order of first
// appearance, every block's additions there in block order, and the
// squared norms of its norm groups, each summed over the group's ranges in
// order of first appearance: the same numbers in the same order for any
// number of parts.
void BcfwRun::AccumulateRoundPart(int part, int size) {
  RoundPart& round_part = round_parts_[part];
  size_t capacity = 0;
  for (int k = 0; k < size; ++k) {
    if (round_oracles_[k].moves) {
      capacity += round_oracles_[k].delta.targets.size();
    }
  }
  // Grown, never shrunk: the first `count` ranges and as many indices as
  // the part has additions are this round's.
  if (round_part.ranges.size() < capacity) {
    round_part.ranges.resize(capacity);
    round_part.offsets.resize(capacity);
    round_part.indices.resize(capacity);
  }
  CoordinateRange* ranges = round_part.ranges.data();
  int64_t* offsets = round_part.offsets.data();
  int32_t* indices = round_part.indices.data();
  const uint32_t stamp = round_stamp_;
  SlotEntry* entries = slot_entries_.data();
  int64_t count = 0, total = 0, owned = 0;
  for (int k = 0; k < size; ++k) {
    const BlockOracle& oracle = round_oracles_[k];
    if (!oracle.moves) continue;
    const BlockUpdate& delta = oracle.delta;
    const int64_t* slots = oracle.slots.data();
    const int32_t* owned_begin =
        oracle.part_additions.data() + PartBegin(oracle, part);
    const int32_t* owned_end =
        oracle.part_additions.data() + oracle.part_ends[part];
    for (const int32_t* a = owned_begin; a < owned_end; ++a) {
      // The slots are scattered over w's rows: fetch ahead.
      if (a + kSlotLookahead < owned_end) {
        __builtin_prefetch(entries + slots[a[kSlotLookahead]], 1);
      }
      const int32_t j = *a;
      // Without branches on whether the slot is new to the round: that is
      // a coin toss.
      SlotEntry& entry = entries[slots[j]];
      const bool first = entry.stamp != stamp;
      const int64_t length = delta.VectorLength(delta.vectors[j]);
      ranges[count] = {delta.targets[j], length};
      offsets[count] = total;
      entry.range = first ? static_cast<int32_t>(count) : entry.range;
      entry.stamp = stamp;
      count += first;
      total += first ? length : 0;
      indices[owned++] = entry.range;
    }
  }
  round_part.count = count;
  round_part.update.assign(total, 0.0);
  double* update = round_part.update.data();
  const int32_t* next_index = indices;
  for (int k = 0; k < size; ++k) {
    const BlockOracle& oracle = round_oracles_[k];
    if (!oracle.moves) continue;
    next_index = AddOwnedAdditions(
        oracle.delta, oracle.part_additions.data() + PartBegin(oracle, part),
        oracle.part_additions.data() + oracle.part_ends[part], next_index,
        offsets, update);
  }
  // Ranges in order of first appearance: within a norm group, the same
  // order for any number of parts.
  round_part.group_norms.assign(kNormGroups, 0.0);
  for (int64_t r = 0; r < count; ++r) {
    round_part.group_norms[NormGroup(slot_map_.SlotOf(ranges[r].begin))] +=
        NormSquared(update + offsets[r], ranges[r].length);
  }
}

void BcfwRun::ApplyRoundUpdate(int part, double t) {
  const RoundPart& round_part = round_parts_[part];
  const size_t ranges = round_part.count;
  for (size_t r = 0; r < ranges; ++r) {
    if (r + kRowLookahead < ranges) {
      const double* ahead =
          w_.data() + round_part.ranges[r + kRowLookahead].begin;
      __builtin_prefetch(ahead, 1);
      __builtin_prefetch(ahead + 8, 1);
      __builtin_prefetch(ahead + 16, 1);
    }
    const CoordinateRange& range = round_part.ranges[r];
    AddScaledVector(round_part.update.data() + round_part.offsets[r], t,
                    range.length, w_.data() + range.begin);
  }
}

double BcfwRun::RoundScale(int size) {
  if (slot_entries_.empty()) {
    slot_entries_.assign(slot_map_.count(), SlotEntry());
    round_parts_.resize(RoundParts());
  }
  ++round_stamp_;
  RunRoundPhase(RoundParts(),
                [this, size](int part) { AccumulateRoundPart(part, size); });
  // Group by group: the same sum for any number of parts, and on every
  // rank.
  const int parts = RoundParts();
  double norm = 0, slope = 0;
  for (uint64_t group = 0; group < kNormGroups; ++group) {
    norm += round_parts_[group % parts].group_norms[group];
  }
  for (int k = 0; k < size; ++k) slope += round_oracles_[k].slope;
  return LineSearch(slope, lambda_ * norm, 1.0);
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
  BlockUpdate* delta = &oracle->delta;
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
  if (!slot_map_.is_set()) slot_map_ = SlotMap(dim_, Granularity());
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
    if (round_oracles_[k].moves) LocateAdditions(k);
  });
}

}  // namespace chaintag
