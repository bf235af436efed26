#include "solvers/block_average.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/communicator.h"
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

// Whether `nonzeros` entries held sparsely (an int32 index and a double
// each) would take more memory than `size` held densely.
bool DenserThanSparse(int64_t nonzeros, int64_t size) {
  return 3 * nonzeros > 2 * size;
}

bool IsLocal(const BlockDistribution& distribution, int i) {
  return distribution.communicator == nullptr ||
         (i >= distribution.shard.begin && i < distribution.shard.end);
}

}  // namespace

BlockAverage::BlockAverage(const Problem& problem, const BlockStates& states)
    : problem_(problem), states_(states) {}

void BlockAverage::Initialize() {
  const int n = problem_.NumExamples();
  sums_.assign(n, BlockSum());
  for (int i = 0; i < n; ++i) {
    const int64_t size = states_.Size(i);
    // A state too long for 32-bit indices is summed densely.
    if (size > std::numeric_limits<int32_t>::max()) {
      sums_[i].dense = true;
      sums_[i].value.assign(size, 0.0);
    }
  }
  averaged_through_.assign(n, 0);
}

void BlockAverage::Fold(int i, int64_t through) {
  const double weight = StepWeightSum(averaged_through_[i] + 1, through);
  averaged_through_[i] = through;
  if (weight == 0) return;
  const int64_t size = states_.Size(i);
  BlockSum& sum = sums_[i];
  if (sum.dense) {
    const double* block_state = states_.Read(i);
    double* dense = sum.value.data();
    for (int64_t k = 0; k < size; ++k) dense[k] += weight * block_state[k];
    return;
  }
  // The held entries merged with the state's nonzero ones (a zero entry
  // would add 0 and change nothing): from a sparse state's own entries, or
  // a scan of a dense one. A new entry is 0 + weight*x, as the dense sum
  // computes it (the same bits even when the product underflows to -0).
  thread_local std::vector<int32_t> index;
  thread_local std::vector<double> value;
  index.clear();
  value.clear();
  const size_t held = sum.index.size();
  size_t p = 0;
  auto add = [&](int32_t k, double x) {
    for (; p < held && sum.index[p] < k; ++p) {
      index.push_back(sum.index[p]);
      value.push_back(sum.value[p]);
    }
    index.push_back(k);
    if (p < held && sum.index[p] == k) {
      value.push_back(sum.value[p] + weight * x);
      ++p;
    } else {
      value.push_back(0.0 + weight * x);
    }
  };
  const int32_t* state_index;
  const double* state_value;
  int64_t count;
  if (states_.Entries(i, &state_index, &state_value, &count)) {
    for (int64_t e = 0; e < count; ++e) {
      if (state_value[e] != 0) add(state_index[e], state_value[e]);
    }
  } else {
    const double* block_state = states_.Read(i);
    for (int64_t k = 0; k < size; ++k) {
      if (block_state[k] != 0) add(static_cast<int32_t>(k), block_state[k]);
    }
  }
  for (; p < held; ++p) {
    index.push_back(sum.index[p]);
    value.push_back(sum.value[p]);
  }
  if (DenserThanSparse(static_cast<int64_t>(index.size()), size)) {
    std::vector<double> dense(size, 0.0);
    for (size_t e = 0; e < index.size(); ++e) dense[index[e]] = value[e];
    sum.dense = true;
    sum.value = std::move(dense);
    std::vector<int32_t>().swap(sum.index);
    return;
  }
  // The same support as held (the common case once a block's labelings
  // repeat): only the values change.
  if (index.size() != held) sum.index.assign(index.begin(), index.end());
  sum.value.assign(value.begin(), value.end());
}

void BlockAverage::Densify(int i, double* out) const {
  sums_[i].Densify(states_.Size(i), out);
}

std::vector<double> BlockAverage::DenseSums() const {
  std::vector<double> dense(states_.TotalSize());
  for (int i = 0; i < static_cast<int>(sums_.size()); ++i) {
    Densify(i, dense.data() + states_.offsets()[i]);
  }
  return dense;
}

RealEntries BlockAverage::AllSumEntries() const {
  RealEntries entries;
  entries.size = states_.TotalSize();
  for (int i = 0; i < static_cast<int>(sums_.size()); ++i) {
    sums_[i].AppendEntries(states_.offsets()[i], &entries);
  }
  return entries;
}

absl::Status BlockAverage::SetAllSumEntries(const RealEntries& entries) {
  // Not initialized (a run without averaging): nothing to hold.
  if (sums_.empty()) {
    if (entries.size == states_.TotalSize()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("average state sums: expected ", states_.TotalSize(),
                     " entries, got ", entries.size));
  }
  return ForEachDenseBlock(
      entries, states_.offsets(), [this](int i, const double* dense) {
        const int64_t size = states_.Size(i);
        BlockSum& sum = sums_[i];
        sum.index.clear();
        sum.value.clear();
        int64_t nonzeros = 0;
        for (int64_t k = 0; k < size; ++k) nonzeros += dense[k] != 0;
        sum.dense = size > std::numeric_limits<int32_t>::max() ||
                    DenserThanSparse(nonzeros, size);
        if (sum.dense) {
          sum.value.assign(dense, dense + size);
          return;
        }
        for (int64_t k = 0; k < size; ++k) {
          if (dense[k] == 0) continue;
          sum.index.push_back(static_cast<int32_t>(k));
          sum.value.push_back(dense[k]);
        }
      });
}

int64_t BlockAverage::HeldSize() const {
  int64_t size = 0;
  for (const BlockSum& sum : sums_) size += sum.HeldSize();
  return size;
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
    std::vector<double> averaged_state, dense_sum;
    for (int slice = first; slice < last; ++slice) {
      const int64_t begin = bounds[slice];
      const int64_t end = bounds[slice + 1];
      if (from_zero) std::fill(average + begin, average + end, 0.0);
      for (int i = 0; i < n; ++i) {
        if (!IsLocal(distribution, i)) continue;
        const int64_t size = states_.Size(i);
        const double* sum = sums_[i].value.data();
        if (!sums_[i].dense) {
          dense_sum.resize(size);
          Densify(i, dense_sum.data());
          sum = dense_sum.data();
        }
        averaged_state.resize(size);
        // The weight the state has held since its last fold, added here
        // without folding it (the block's next move does).
        const double weight = StepWeightSum(averaged_through_[i] + 1, steps);
        if (weight == 0) {
          for (int64_t k = 0; k < size; ++k) averaged_state[k] = scale * sum[k];
        } else {
          const double* block_state = states_.Read(i);
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
