#include "solvers/block_average.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/communicator.h"
#include "base/huge_pages.h"
#include "base/parallel.h"

namespace chaintag {
namespace {

// 2/(K(K+1)) = 1/sum_{s<=K} s: normalises the weights s of the average.
double AverageScale(int64_t steps) {
  if (steps == 0) return 0;
  const double k = static_cast<double>(steps);
  return 2.0 / (k * (k + 1.0));
}

// sum_{s=first}^{last} s, the weight of an iterate that held over those
// steps.
double StepWeightSum(int64_t first, int64_t last) {
  if (last < first) return 0;
  return 0.5 * static_cast<double>(first + last) *
         static_cast<double>(last - first + 1);
}

bool IsLocal(const BlockDistribution& distribution, int i) {
  return distribution.communicator == nullptr ||
         (i >= distribution.shard.begin && i < distribution.shard.end);
}

}  // namespace

BlockAverage::BlockAverage(const Problem& problem,
                           const std::vector<double>& states,
                           const std::vector<int64_t>& state_offset)
    : problem_(problem), states_(states), state_offset_(state_offset) {}

void BlockAverage::Initialize(int threads) {
  ReserveFaultedIn(&sums_, states_.size(), /*huge_pages=*/false, threads);
  sums_.assign(states_.size(), 0.0);
  averaged_through_.assign(problem_.NumExamples(), 0);
}

void BlockAverage::Fold(int i, int64_t through) {
  const double weight = StepWeightSum(averaged_through_[i] + 1, through);
  averaged_through_[i] = through;
  if (weight == 0) return;
  const double* block_state = states_.data() + state_offset_[i];
  double* sum = sums_.data() + state_offset_[i];
  const int64_t size = state_offset_[i + 1] - state_offset_[i];
  for (int64_t k = 0; k < size; ++k) sum[k] += weight * block_state[k];
}

void BlockAverage::AddEllChange(int64_t step, double delta_ell) {
  ell_accumulator_ += 0.5 * static_cast<double>(step) *
                      static_cast<double>(step - 1) * delta_ell;
}

double BlockAverage::Ell(double ell, int64_t steps) const {
  return ell - AverageScale(steps) * ell_accumulator_;
}

// Each block's sum is read with the weight its state has held since its
// last fold added on the fly: a read of the average writes nothing of the
// run (so the iterates do not depend on when it is read), and it saves a
// pass over the sums (writing them) and the states. Every thread goes
// through all the blocks in order, so every coordinate gets its additions
// in block order, as on one thread.
void BlockAverage::AddBlocks(bool from_zero, int64_t steps, double lambda,
                             int64_t granularity, int threads,
                             const BlockDistribution& distribution,
                             double* average) const {
  const int n = problem_.NumExamples();
  const double scale = AverageScale(steps);
  const double c = 1.0 / (lambda * n);
  const std::vector<int64_t> bounds =
      SliceBounds(problem_.Dim(), granularity, threads);
  const int slices = static_cast<int>(bounds.size()) - 1;
  ParallelFor(slices, slices, [&](int first, int last) {
    // One block's v_avg_i, scaled by every slice's thread: the scaled
    // state has to exist before the problem reads it, and it is a small
    // part of the work next to the rows it is added to.
    std::vector<double> averaged_state;
    for (int slice = first; slice < last; ++slice) {
      const int64_t begin = bounds[slice];
      const int64_t end = bounds[slice + 1];
      if (from_zero) std::fill(average + begin, average + end, 0.0);
      for (int i = 0; i < n; ++i) {
        if (!IsLocal(distribution, i)) continue;
        const int64_t size = state_offset_[i + 1] - state_offset_[i];
        const double* sum = sums_.data() + state_offset_[i];
        averaged_state.resize(size);
        // The weight the state has held since its last fold, added here
        // without folding it (the block's next move does).
        const double weight = StepWeightSum(averaged_through_[i] + 1, steps);
        if (weight == 0) {
          for (int64_t k = 0; k < size; ++k) averaged_state[k] = scale * sum[k];
        } else {
          const double* block_state = states_.data() + state_offset_[i];
          for (int64_t k = 0; k < size; ++k) {
            averaged_state[k] = scale * (sum[k] + weight * block_state[k]);
          }
        }
        // w += -c*(psi_i(gold) - v_avg_i) = c*v_avg_i, since psi_i(gold) = 0.
        problem_.AddCornerMinusStateInSlice(i, problem_.GoldCorner(i),
                                            averaged_state.data(), -c, begin,
                                            end, average);
      }
    }
  });
}

absl::Status BlockAverage::Form(int64_t steps, double lambda,
                                int64_t granularity, int threads,
                                const BlockDistribution& distribution,
                                double* average) const {
  Communicator* communicator = distribution.communicator;
  if (communicator == nullptr) {
    AddBlocks(/*from_zero=*/true, steps, lambda, granularity, threads,
              distribution, average);
    return absl::OkStatus();
  }
  // Each coordinate gets the blocks' additions in block order, as in one
  // process: rank r continues rank r - 1's sum over its own, later blocks.
  const int64_t dim = problem_.Dim();
  const int rank = communicator->rank();
  const int last = communicator->size() - 1;
  if (rank > 0) {
    absl::Status status = communicator->Receive(rank - 1, average, dim);
    if (!status.ok()) return status;
  }
  AddBlocks(/*from_zero=*/rank == 0, steps, lambda, granularity, threads,
            distribution, average);
  if (rank < last) {
    absl::Status status = communicator->Send(rank + 1, average, dim);
    if (!status.ok()) return status;
  }
  return communicator->Broadcast(last, average, dim);
}

}  // namespace chaintag
