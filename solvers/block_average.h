// BlockAverage: BCFW's weighted averaging (bcfw.h's top comment) kept per
// block, so that a step costs O(block state) and not O(Dim()): each block's
// sum_s s*v_i^(s), to which a state's weight is added when the block moves
// (Fold), the average's l through one scalar, and the average point
// w_avg = sum_i v_avg_i/(lambda n) formed only when it is read: block by
// block in block order in one process, chained along the ranks in a
// distributed run.
//
// A block's sum is held sparsely, as the entries its states have ever made
// nonzero, or densely once that would take more memory: a state is the
// marginals of a few labelings, so at hundreds of labels a dense sum is
// almost all zeros, and the sums were as large as the states themselves
// (0.9 GB at 319 labels). The additions are the dense sum's, entry by
// entry, so the average is the same to the bit.
//
//   BlockAverage average(problem, states);
//   average.Initialize();
//   ...before block i's state changes at step s: average.Fold(i, s - 1);
//   average.AddEllChange(s, delta_ell);
//   average.Form(steps, lambda, granularity, threads, distribution, w_avg);
//
// Thread-safety: one thread at a time, but Fold may run concurrently on
// distinct blocks (a round folds its blocks on the threads; scratch is
// thread_local); Form uses `threads` threads on
// disjoint slices of the average.

#ifndef CHAINTAG_SOLVERS_BLOCK_AVERAGE_H_
#define CHAINTAG_SOLVERS_BLOCK_AVERAGE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "solvers/block_states.h"
#include "solvers/duality_gap.h"
#include "solvers/problem.h"

namespace chaintag {

class BlockAverage {
 public:
  // The run's block states, which outlive this and keep their layout.
  BlockAverage(const Problem& problem, const BlockStates& states);

  // No step averaged yet: the sums zero (and nothing held).
  void Initialize();
  // Adds block i's state, held since its last fold, to its sum through
  // step `through` (call before the state changes).
  void Fold(int i, int64_t through);
  // The average's l gains a step s's change of l: u_l += s(s-1)/2 * delta.
  void AddEllChange(int64_t step, double delta_ell);
  // The average's l after `steps` steps of an iterate whose l is `ell`.
  double Ell(double ell, int64_t steps) const;
  // The average point after `steps` steps into `average` (Dim() entries),
  // from the sums and the weight each state has held since its last fold
  // (added on the fly, not folded: forming writes nothing of the run). In a
  // distributed run each rank adds its own blocks onto the previous
  // rank's sum, and the last rank's is broadcast.
  absl::Status Form(int64_t steps, double lambda, int64_t granularity,
                    int threads, const BlockDistribution& distribution,
                    double* average) const;

  // The per-block sums in the states' layout (TotalSize() entries), the
  // step each is folded through, and u_l (checkpoints, checks).
  std::vector<double> DenseSums() const;
  // The sums as their entries in that layout, and back, with no dense copy
  // of them all; SetAllSumEntries fails unless `entries` has the states'
  // TotalSize() entries, ascending.
  RealEntries AllSumEntries() const;
  absl::Status SetAllSumEntries(const RealEntries& entries);
  std::vector<int64_t>* mutable_averaged_through() {
    return &averaged_through_;
  }
  double* mutable_ell_accumulator() { return &ell_accumulator_; }
  const std::vector<int64_t>& averaged_through() const {
    return averaged_through_;
  }
  double ell_accumulator() const { return ell_accumulator_; }
  // The numbers the sums hold (entries of dense blocks, values and their
  // indices of sparse ones, counted as doubles): what they cost.
  int64_t HeldSize() const;

 private:
  // sum_{s <= t_i} s*v_i^(s) of one block, held sparsely as its nonzero
  // entries. An entry no state has made nonzero is 0 either way.
  using BlockSum = HeldBlock;
  // Block i's sum as a dense state into `out` (its state's size).
  void Densify(int i, double* out) const;

  // average += v_avg_i/(lambda n) for this process's blocks, from zero or
  // onto what it holds, on `threads` threads that own slices of whole
  // granularity slots.
  void AddBlocks(bool from_zero, int64_t steps, double lambda,
                 int64_t granularity, int threads,
                 const BlockDistribution& distribution, double* average) const;

  const Problem& problem_;
  const BlockStates& states_;
  // sum_{s <= t_i} s*v_i^(s), t_i = averaged_through_[i].
  std::vector<BlockSum> sums_;
  std::vector<int64_t> averaged_through_;
  double ell_accumulator_ = 0;  // u_l = sum_s s(s-1)/2 * delta_l_s
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BLOCK_AVERAGE_H_
