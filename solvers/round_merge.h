// RoundMerge: the merge of a mini-batch round (bcfw_rounds.cc). Each moving
// block's change of w, as the problem encodes it (a BlockUpdate), is summed
// into U = sum of the blocks' changes, by parts of w that threads own; the
// round reads ||U||^2 for its line search, then adds t*U to w part by part.
// Every coordinate receives its additions in block order, and ||U||^2 is
// summed in an order that does not depend on the number of parts, so a
// round gives the same bits on any thread count (up to 255 parts).
//
//   RoundMerge merge(dim, RangeGranularity(problem), parts);
//   for (LocatedDelta* block : moving_blocks) merge.Locate(block);
//   merge.BeginRound();
//   for (int p = 0; p < merge.parts(); ++p) merge.AccumulatePart(p, blocks);
//   const double t = LineSearch(slope, lambda * merge.NormSquared(), 1);
//   for (int p = 0; p < merge.parts(); ++p) merge.ApplyPart(p, t, w);
//
// Thread-safety: Locate is const; within a round, distinct parts'
// AccumulatePart and ApplyPart calls may run concurrently (each writes its
// own part); BeginRound and NormSquared on one thread between them.

#ifndef CHAINTAG_SOLVERS_ROUND_MERGE_H_
#define CHAINTAG_SOLVERS_ROUND_MERGE_H_

#include <cstdint>
#include <vector>

#include "solvers/bcfw_wire.h"
#include "solvers/problem.h"

namespace chaintag {

// A block's change of w and where its additions go: per addition its
// granularity slot of w and the part that merges it, and the additions
// grouped by part, in order (part p's are
// part_additions[part_ends[p - 1], part_ends[p]), from 0 for p = 0).
struct LocatedDelta {
  BlockUpdate delta;
  std::vector<int64_t> slots;
  std::vector<uint8_t> owners;
  std::vector<int32_t> part_additions;
  std::vector<int32_t> part_ends;
};

class RoundMerge {
 public:
  // w of `dim` coordinates in slots of `granularity` (which divides dim and
  // the start and length of every addition's range); `parts` in [1, 255].
  RoundMerge(int64_t dim, int64_t granularity, int parts);

  int parts() const { return parts_; }
  const SlotMap& slot_map() const { return slot_map_; }

  // Fills `block`'s slots, owners and part lists from its delta: slots in
  // runs of a cache line of the slot table, dealt round the parts, so that
  // threads merge disjoint coordinates.
  void Locate(LocatedDelta* block) const;
  // Starts a round (the slot table remembers which round saw a slot).
  void BeginRound();
  // Part `part` of U from the round's moving blocks in block order.
  void AccumulatePart(int part, const std::vector<const LocatedDelta*>& blocks);
  // ||U||^2, group by group: the same sum for any number of parts.
  double NormSquared() const;
  // w += t*U on part `part`.
  void ApplyPart(int part, double t, double* w) const;

 private:
  // A part's U, compact: its `count` distinct ranges, range r at offsets[r]
  // in update; per addition the part merges (in block order), its range's
  // index; and ||U||^2 of the part's norm groups. Each part's own arrays,
  // so that threads do not write to each other's cache lines.
  struct Part {
    int64_t count = 0;
    std::vector<CoordinateRange> ranges;
    std::vector<int64_t> offsets;
    std::vector<double> update;
    std::vector<int32_t> indices;
    std::vector<double> group_norms;
  };
  // Per granularity slot of w: the round it was last collected in, and its
  // index in its part's ranges then (together: one cache miss per lookup).
  struct SlotEntry {
    uint32_t stamp = 0;
    int32_t range = 0;
  };

  const int parts_;
  SlotMap slot_map_;
  std::vector<SlotEntry> slot_entries_;  // allocated by the first round
  std::vector<Part> round_parts_;
  uint32_t round_stamp_ = 0;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_ROUND_MERGE_H_
