#include "solvers/round_merge.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/cpu_dispatch.h"

namespace chaintag {

namespace {

// How many additions ahead the round's slot lookups are prefetched, and
// how many ranges ahead the rows of w that U is added to.
constexpr size_t kSlotLookahead = 16;
constexpr size_t kRowLookahead = 4;
// Slots are dealt to the parts in runs of this many (a cache line of
// RoundMerge::SlotEntry), by norm group: run r is in group r mod kNormGroups,
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

int32_t PartBegin(const LocatedDelta& block, int part) {
  return part == 0 ? 0 : block.part_ends[part - 1];
}

// ‖v‖² with four partial sums (x mod 4), added pairwise: a fixed order that
// vectorises, where one running sum waits on every addition.
CHAINTAG_AVX2_CLONES double RangeNormSquared(const double* v, int64_t length) {
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

RoundMerge::RoundMerge(int64_t dim, int64_t granularity, int parts)
    : parts_(std::clamp(parts, 1, 255)), slot_map_(dim, granularity) {}

void RoundMerge::Locate(LocatedDelta* block) const {
  const std::vector<int64_t>& targets = block->delta.targets;
  const uint64_t parts = parts_;
  const size_t additions = targets.size();
  block->slots.resize(additions);
  block->owners.resize(additions);
  block->part_ends.assign(parts, 0);
  for (size_t j = 0; j < additions; ++j) {
    const uint64_t slot = slot_map_.SlotOf(targets[j]);
    block->slots[j] = static_cast<int64_t>(slot);
    const uint8_t owner =
        parts == 1 ? 0 : static_cast<uint8_t>(NormGroup(slot) % parts);
    block->owners[j] = owner;
    ++block->part_ends[owner];
  }
  // A counting sort by owner, stable: each part's additions in order.
  int32_t end = 0;
  for (int32_t& part_end : block->part_ends) {
    end += part_end;
    part_end = end;
  }
  block->part_additions.resize(additions);
  for (size_t j = additions; j-- > 0;) {
    block->part_additions[--block->part_ends[block->owners[j]]] =
        static_cast<int32_t>(j);
  }
  // The decrements left part_ends[p] at part p's begin: shift to ends.
  for (uint64_t p = 0; p < parts; ++p) {
    block->part_ends[p] = p + 1 < parts ? block->part_ends[p + 1]
                                        : static_cast<int32_t>(additions);
  }
}

void RoundMerge::BeginRound() {
  if (slot_entries_.empty()) {
    slot_entries_.assign(slot_map_.count(), SlotEntry());
    round_parts_.resize(parts_);
  }
  ++round_stamp_;
}

// Part p of U: the distinct ranges of its slots in order of first
// appearance, every block's additions there in block order, and the
// squared norms of its norm groups, each summed over the group's ranges in
// order of first appearance: the same numbers in the same order for any
// number of parts.
void RoundMerge::AccumulatePart(
    int part, const std::vector<const LocatedDelta*>& blocks) {
  Part& round_part = round_parts_[part];
  size_t capacity = 0;
  for (const LocatedDelta* block : blocks) {
    capacity += block->delta.targets.size();
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
  for (const LocatedDelta* block : blocks) {
    const BlockUpdate& delta = block->delta;
    const int64_t* slots = block->slots.data();
    const int32_t* owned_begin =
        block->part_additions.data() + PartBegin(*block, part);
    const int32_t* owned_end =
        block->part_additions.data() + block->part_ends[part];
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
  for (const LocatedDelta* block : blocks) {
    next_index = AddOwnedAdditions(
        block->delta, block->part_additions.data() + PartBegin(*block, part),
        block->part_additions.data() + block->part_ends[part], next_index,
        offsets, update);
  }
  // Ranges in order of first appearance: within a norm group, the same
  // order for any number of parts.
  round_part.group_norms.assign(kNormGroups, 0.0);
  for (int64_t r = 0; r < count; ++r) {
    round_part.group_norms[NormGroup(slot_map_.SlotOf(ranges[r].begin))] +=
        RangeNormSquared(update + offsets[r], ranges[r].length);
  }
}

double RoundMerge::NormSquared() const {
  double norm = 0;
  for (uint64_t group = 0; group < kNormGroups; ++group) {
    norm += round_parts_[group % parts_].group_norms[group];
  }
  return norm;
}

void RoundMerge::ApplyPart(int part, double t, double* w) const {
  const Part& round_part = round_parts_[part];
  const size_t ranges = round_part.count;
  for (size_t r = 0; r < ranges; ++r) {
    if (r + kRowLookahead < ranges) {
      const double* ahead = w + round_part.ranges[r + kRowLookahead].begin;
      __builtin_prefetch(ahead, 1);
      __builtin_prefetch(ahead + 8, 1);
      __builtin_prefetch(ahead + 16, 1);
    }
    const CoordinateRange& range = round_part.ranges[r];
    AddScaledVector(round_part.update.data() + round_part.offsets[r], t,
                    range.length, w + range.begin);
  }
}

}  // namespace chaintag
