// BcfwRun's weighted averaging (bcfw.h's top comment): each block's
// Σ_s s·v_i^(s), to which a state's weight is added when the block moves,
// and w̄ = Σ_i v̄_i/(λn) formed from these sums (and the weight of each
// state since) only when it is read: block by block in block order in one
// process, chained along the ranks in a distributed run.
//
// Thread-safety: BcfwRun's, one thread at a time; AddAveragedBlocks runs
// solver.num_threads threads on disjoint slices of w̄.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "base/communicator.h"
#include "base/huge_pages.h"
#include "base/parallel.h"
#include "solvers/bcfw_run.h"

namespace chaintag {
namespace {

// 2/(K(K+1)) = 1/Σ_{s≤K} s: normalises the weights s of the average.
double AverageScale(int64_t steps) {
  if (steps == 0) return 0;
  const double k = static_cast<double>(steps);
  return 2.0 / (k * (k + 1.0));
}

// Σ_{s=first}^{last} s, the weight of an iterate that held over those steps.
double StepWeightSum(int64_t first, int64_t last) {
  if (last < first) return 0;
  return 0.5 * static_cast<double>(first + last) *
         static_cast<double>(last - first + 1);
}

}  // namespace

double BcfwRun::ReturnedEll() const {
  return averaging_ ? ell_ - AverageScale(steps_) * ell_accumulator_ : ell_;
}

void BcfwRun::FoldIntoAverage(int i, int64_t through) {
  const double weight = StepWeightSum(averaged_through_[i] + 1, through);
  averaged_through_[i] = through;
  if (weight == 0) return;
  const double* block_state = state(i);
  double* sum = average_state_sums_.data() + state_offset_[i];
  const int64_t size = state_offset_[i + 1] - state_offset_[i];
  for (int64_t k = 0; k < size; ++k) sum[k] += weight * block_state[k];
}

// w̄ = Σ_i v̄_i/(λn): one update per block with its averaged state, the cost
// of about one pass of BCFW updates, paid only when w̄ is read.
const std::vector<double>& BcfwRun::ReturnedPoint() {
  if (!averaging_) return w_;
  if (average_steps_ == steps_) return average_;  // already current
  average_steps_ = steps_;
  ReserveFaultedIn(&average_, dim_, /*huge_pages=*/true, NumThreads());
  average_.resize(dim_);
  boxes_.ClearAverage();
  if (steps_ == 0) {
    average_ = w_;
    return average_;
  }
  if (distribution_.communicator != nullptr) {
    distribution_status_.Update(ChainAverage());
  } else {
    AddAveragedBlocks(/*from_zero=*/true);
  }
  boxes_.TruncateAverage(average_.data());
  return average_;
}

// average_ += c·v̄_i for this process's blocks, from zero or onto what
// average_ holds. Each block's sum is read with the weight its state has
// held since its last fold added on the fly, not folded in: a read of w̄
// writes nothing of the run (so the iterates do not depend on when w̄ is
// read), and it saves a pass over the sums (writing them) and the states.
// The threads own slices of whole granularity slots and each goes through
// all the blocks in order, so every coordinate gets its additions in block
// order, as on one thread.
void BcfwRun::AddAveragedBlocks(bool from_zero) {
  const int threads = NumThreads();
  const double scale = AverageScale(steps_);
  const double c = 1.0 / (lambda_ * n_);
  const int64_t slots = dim_ / Granularity();
  const int slices = static_cast<int>(std::min<int64_t>(threads, slots));
  ParallelFor(slices, slices, [&](int first, int last) {
    // One block's v̄_i, scaled by every slice's thread: the scaled state
    // has to exist before the problem reads it, and it is a small part of
    // the work next to the rows it is added to.
    std::vector<double> averaged_state;
    for (int slice = first; slice < last; ++slice) {
      const int64_t begin = SplitPoint(slots, slice, slices) * granularity_;
      const int64_t end = SplitPoint(slots, slice + 1, slices) * granularity_;
      if (from_zero) {
        std::fill(average_.begin() + begin, average_.begin() + end, 0.0);
      }
      for (int i = 0; i < n_; ++i) {
        if (!IsLocal(i)) continue;
        const int64_t size = state_offset_[i + 1] - state_offset_[i];
        const double* sum = average_state_sums_.data() + state_offset_[i];
        averaged_state.resize(size);
        // The weight the state has held since its last fold, added here
        // without folding it (the block's next move does).
        const double weight = StepWeightSum(averaged_through_[i] + 1, steps_);
        if (weight == 0) {
          for (int64_t k = 0; k < size; ++k) averaged_state[k] = scale * sum[k];
        } else {
          const double* block_state = states_.data() + state_offset_[i];
          for (int64_t k = 0; k < size; ++k) {
            averaged_state[k] = scale * (sum[k] + weight * block_state[k]);
          }
        }
        // w += −c·(ψ_i(gold) − v̄_i) = c·v̄_i, since ψ_i(gold) = 0.
        problem_.AddCornerMinusStateInSlice(i, problem_.GoldCorner(i),
                                            averaged_state.data(), -c, begin,
                                            end, average_.data());
      }
    }
  });
}

// Each coordinate gets the blocks' additions in block order, as in one
// process: rank r continues rank r − 1's sum over its own, later blocks.
absl::Status BcfwRun::ChainAverage() {
  Communicator* communicator = distribution_.communicator;
  const int rank = communicator->rank();
  const int last = communicator->size() - 1;
  if (rank > 0) {
    absl::Status status =
        communicator->Receive(rank - 1, average_.data(), dim_);
    if (!status.ok()) return status;
  }
  AddAveragedBlocks(/*from_zero=*/rank == 0);
  if (rank < last) {
    absl::Status status = communicator->Send(rank + 1, average_.data(), dim_);
    if (!status.ok()) return status;
  }
  return communicator->Broadcast(last, average_.data(), dim_);
}

}  // namespace chaintag
