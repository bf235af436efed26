#include "solvers/block_states.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chaintag {
namespace {

// A thread's dense copy of one block of one BlockStates. While `clean`,
// its entries other than +0 are at `support` alone, so moving it to
// another block zeroes those and not the whole copy: a step then costs the
// states' nonzero entries, not their size.
struct ThreadCopy {
  uint64_t id = 0;
  int block = -1;
  uint32_t version = 0;
  std::vector<double> state;
  bool clean = true;
  std::vector<int32_t> support;
};

ThreadCopy& Copy() {
  thread_local ThreadCopy copy;
  return copy;
}

// Ids of BlockStates objects: a thread's copy never passes for another
// object's (one may be built where an earlier one was freed).
uint64_t NextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

// Whether `nonzeros` entries held sparsely (an int32 index and a double
// each) would take more memory than `size` held densely.
bool DenserThanSparse(int64_t nonzeros, int64_t size) {
  return 3 * nonzeros > 2 * size;
}

}  // namespace

void BlockStates::Initialize(const Problem& problem) {
  id_ = NextId();
  offsets_ = BlockStateOffsets(problem);
  const int n = problem.NumExamples();
  blocks_.assign(n, Block());
  versions_.assign(n, 0);
  std::vector<double> state;
  for (int i = 0; i < n; ++i) {
    state.assign(Size(i), 0.0);
    problem.InitBlockState(i, state.data());
    Store(i, state.data());
  }
}

void BlockStates::Store(int i, const double* state) {
  const int64_t size = Size(i);
  Block& block = blocks_[i];
  if (block.dense) {
    std::copy(state, state + size, block.value.data());
    return;
  }
  if (size > std::numeric_limits<int32_t>::max()) {
    block.dense = true;
    block.value.assign(state, state + size);
    return;
  }
  // Compacted without a branch per entry: most entries are zeros, in runs
  // that a predictor misses at every end.
  thread_local std::vector<int32_t> index;
  thread_local std::vector<double> value;
  if (static_cast<int64_t>(index.size()) < size) {
    index.resize(size);
    value.resize(size);
  }
  int64_t held = 0;
  for (int64_t k = 0; k < size; ++k) {
    index[held] = static_cast<int32_t>(k);
    value[held] = state[k];
    held += IsEntry(state[k]);
  }
  if (DenserThanSparse(held, size)) {
    block.dense = true;
    block.value.assign(state, state + size);
    std::vector<int32_t>().swap(block.index);
    return;
  }
  // assign allocates exactly what it needs when it grows a vector: a
  // block's support mostly only grows, a few entries at a time.
  if (static_cast<size_t>(held) != block.index.size() ||
      !std::equal(index.begin(), index.begin() + held, block.index.begin())) {
    block.index.assign(index.begin(), index.begin() + held);
  }
  block.value.assign(value.begin(), value.begin() + held);
}

void HeldBlock::Densify(int64_t size, double* out) const {
  if (dense) {
    std::copy(value.begin(), value.end(), out);
    return;
  }
  std::fill(out, out + size, 0.0);
  for (size_t e = 0; e < index.size(); ++e) out[index[e]] = value[e];
}

void HeldBlock::AppendEntries(int64_t offset, RealEntries* entries) const {
  if (!dense) {
    for (size_t e = 0; e < index.size(); ++e) {
      entries->positions.push_back(offset + index[e]);
      entries->values.push_back(value[e]);
    }
    return;
  }
  for (size_t k = 0; k < value.size(); ++k) {
    if (!IsEntry(value[k])) continue;
    entries->positions.push_back(offset + static_cast<int64_t>(k));
    entries->values.push_back(value[k]);
  }
}

absl::Status ForEachDenseBlock(
    const RealEntries& entries, const std::vector<int64_t>& offsets,
    absl::FunctionRef<void(int i, const double* block)> store) {
  const int64_t total = offsets.empty() ? 0 : offsets.back();
  if (entries.size != total ||
      entries.positions.size() != entries.values.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block entries: expected an array of ", total, " entries, got ",
        entries.size, " with ", entries.positions.size(), " positions for ",
        entries.values.size(), " values"));
  }
  for (size_t e = 0; e < entries.positions.size(); ++e) {
    const int64_t position = entries.positions[e];
    if (position < 0 || position >= total ||
        (e > 0 && position <= entries.positions[e - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("block entries: position ", position, " (entry ", e,
                       ") is out of order or outside the ", total, " entries"));
    }
  }
  std::vector<double> block;
  size_t e = 0;
  for (int i = 0; i + 1 < static_cast<int>(offsets.size()); ++i) {
    block.assign(offsets[i + 1] - offsets[i], 0.0);
    for (;
         e < entries.positions.size() && entries.positions[e] < offsets[i + 1];
         ++e) {
      block[entries.positions[e] - offsets[i]] = entries.values[e];
    }
    store(i, block.data());
  }
  return absl::OkStatus();
}

void BlockStates::Densify(int i, double* out) const {
  blocks_[i].Densify(Size(i), out);
}

const double* BlockStates::Read(int i) const {
  const Block& block = blocks_[i];
  if (block.dense) return block.value.data();
  ThreadCopy& copy = Copy();
  if (copy.id == id_ && copy.block == i && copy.version == versions_[i]) {
    return copy.state.data();
  }
  if (copy.clean) {
    for (int32_t k : copy.support) copy.state[k] = 0.0;
  } else {
    std::fill(copy.state.begin(), copy.state.end(), 0.0);
  }
  copy.state.resize(Size(i), 0.0);
  for (size_t e = 0; e < block.index.size(); ++e) {
    copy.state[block.index[e]] = block.value[e];
  }
  copy.support.assign(block.index.begin(), block.index.end());
  copy.clean = true;
  copy.id = id_;
  copy.block = i;
  copy.version = versions_[i];
  return copy.state.data();
}

double* BlockStates::Open(int i) {
  Block& block = blocks_[i];
  if (block.dense) return block.value.data();
  Read(i);
  ThreadCopy& copy = Copy();
  copy.clean = false;  // the caller may write anywhere
  return copy.state.data();
}

void BlockStates::Close(int i) {
  ++versions_[i];
  const Block& block = blocks_[i];
  if (block.dense) return;
  ThreadCopy& copy = Copy();
  // Open(i) made this thread's copy block i's.
  Store(i, copy.state.data());
  copy.version = versions_[i];
  // Held sparsely, the copy's nonzero entries are the block's held ones.
  copy.clean = !block.dense;
  if (copy.clean) copy.support.assign(block.index.begin(), block.index.end());
}

std::vector<double> BlockStates::Dense() const {
  std::vector<double> states(TotalSize());
  for (int i = 0; i < NumBlocks(); ++i) Densify(i, states.data() + offsets_[i]);
  return states;
}

RealEntries BlockStates::AllEntries() const {
  RealEntries entries;
  entries.size = TotalSize();
  for (int i = 0; i < NumBlocks(); ++i) {
    blocks_[i].AppendEntries(offsets_[i], &entries);
  }
  return entries;
}

absl::Status BlockStates::SetAllEntries(const RealEntries& entries) {
  return ForEachDenseBlock(entries, offsets_,
                           [this](int i, const double* state) {
                             blocks_[i] = Block();
                             Store(i, state);
                             ++versions_[i];
                           });
}

int64_t BlockStates::HeldSize() const {
  int64_t size = 0;
  for (const Block& block : blocks_) size += block.HeldSize();
  return size;
}

}  // namespace chaintag
