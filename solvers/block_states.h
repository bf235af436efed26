// BlockStates: a BCFW run's block states v_i (the Problem's state layout),
// each held as its nonzero entries (sorted 32-bit positions and their
// values), or densely once that is smaller. A chain's state is the
// marginals of the few labelings its steps took, while its layout is dense
// in positions × labels and in the allowed transitions: at 319 labels
// (CoNLL-2000's joint POS|chunk tags) 0.8% of the states' 114M entries were
// nonzero after 30 passes, and the dense states were the run's largest
// array (0.9 GB).
//
// Steps read, and change, a dense copy of one block. An entry is held by
// its bits (a -0 too), so a state read back is the one written, and a
// solver's iterates are those it would have with dense states.
//
//   BlockStates states;
//   states.Initialize(problem);
//   const double* v = states.Read(i);
//   double* u = states.Open(i);  ...change u...;  states.Close(i);
//
// Thread-safety: distinct blocks may be read and changed on different
// threads at once; one block by one thread at a time (reads of one block on
// several threads are fine). Each thread keeps one dense copy
// (thread_local), so what Read or Open returns is valid until the same
// thread reads or opens another block (of any BlockStates), or Closes it.

#ifndef CHAINTAG_SOLVERS_BLOCK_STATES_H_
#define CHAINTAG_SOLVERS_BLOCK_STATES_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "solvers/checkpoint.h"
#include "solvers/problem.h"

namespace chaintag {

// A block's numbers held as they are worth: all of them (`dense`), or the
// entries at the sorted positions `index`, the others 0. BlockStates holds
// the states so, BlockAverage their weighted sums.
struct HeldBlock {
  bool dense = false;
  std::vector<int32_t> index;
  std::vector<double> value;

  // The block as `size` dense entries into `out`.
  void Densify(int64_t size, double* out) const;
  // Its entries whose bits are not +0, at `offset` + their index, onto
  // `entries`.
  void AppendEntries(int64_t offset, RealEntries* entries) const;
  // The numbers held, counted as doubles (an int32 index is half a double).
  int64_t HeldSize() const {
    return static_cast<int64_t>(value.size()) +
           (static_cast<int64_t>(index.size()) + 1) / 2;
  }
};

// Calls store(i, block) with each block i of `entries` (an array in the
// layout `offsets`, block i at offsets[i]) as offsets[i + 1] − offsets[i]
// dense entries, in block order; fails, storing nothing, unless `entries`
// has offsets.back() entries at ascending positions.
absl::Status ForEachDenseBlock(
    const RealEntries& entries, const std::vector<int64_t>& offsets,
    absl::FunctionRef<void(int i, const double* block)> store);

class BlockStates {
 public:
  // Every block on its gold labeling (Problem::InitBlockState).
  void Initialize(const Problem& problem);

  int NumBlocks() const { return static_cast<int>(blocks_.size()); }
  // Block i's state at offsets()[i] of the dense layout (BlockStateOffsets).
  const std::vector<int64_t>& offsets() const { return offsets_; }
  int64_t Size(int i) const { return offsets_[i + 1] - offsets_[i]; }
  int64_t TotalSize() const { return offsets_.back(); }

  // Block i's state, dense (Size(i) entries).
  const double* Read(int i) const;
  // The same, to change in place; Close(i) keeps the change.
  double* Open(int i);
  void Close(int i);

  // Block i's entries other than +0, when it is held sparsely: `count`
  // sorted positions and their values, valid until the block is next
  // closed. False for a block held densely.
  bool Entries(int i, const int32_t** index, const double** value,
               int64_t* count) const {
    const Block& block = blocks_[i];
    if (block.dense) return false;
    *index = block.index.data();
    *value = block.value.data();
    *count = static_cast<int64_t>(block.index.size());
    return true;
  }

  // All states in the dense layout (checks).
  std::vector<double> Dense() const;
  // All states as their entries in the dense layout, and back (checkpoints),
  // with no dense copy of them all; SetAllEntries fails unless `entries`
  // has TotalSize() entries, ascending.
  RealEntries AllEntries() const;
  absl::Status SetAllEntries(const RealEntries& entries);
  // The numbers held (dense entries, values and indices of sparse ones,
  // counted as doubles): what the states cost.
  int64_t HeldSize() const;

 private:
  // A state held sparsely keeps its entries whose bits are not +0.
  using Block = HeldBlock;
  // Holds `state` (Size(i) entries) as block i.
  void Store(int i, const double* state);
  void Densify(int i, double* out) const;

  uint64_t id_ = 0;  // this object's run, for the threads' copies
  std::vector<int64_t> offsets_;
  std::vector<Block> blocks_;
  // Per block, one more at each Close: a thread's copy is current while
  // its version is.
  std::vector<uint32_t> versions_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BLOCK_STATES_H_
