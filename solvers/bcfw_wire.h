// The wire format of a distributed BCFW round (BcfwRun::ExchangeRound in
// bcfw_exchange.cc): plain values appended in a fixed order, each as its
// bytes in memory, and a block's Δw (a BlockUpdate, problem.h) in compact
// form, with the checks that refuse a truncated, malformed or out-of-range
// one. SlotMap names the granularity slots of w that a round's deltas add
// on: the rounds merge by them (bcfw_rounds.cc), and the wire sends a
// delta's targets as them.
//
// Thread-safety: SlotMap is an immutable value and the free functions are
// pure; a WireReader or a DeltaCodec is used by one thread at a time.

#ifndef CHAINTAG_SOLVERS_BCFW_WIRE_H_
#define CHAINTAG_SOLVERS_BCFW_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "solvers/problem.h"

namespace chaintag {

// Appends `value` as its bytes in memory.
template <typename T>
void WireAppend(const T& value, std::string* out) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Appends the element count (int64_t), then the elements' bytes.
template <typename T>
void WireAppendArray(const std::vector<T>& values, std::string* out) {
  WireAppend<int64_t>(static_cast<int64_t>(values.size()), out);
  out->append(reinterpret_cast<const char*>(values.data()),
              values.size() * sizeof(T));
}

// The reader of what WireAppend and WireAppendArray wrote: a view of one
// rank's bytes. A read that would pass the end fails and consumes nothing.
class WireReader {
 public:
  explicit WireReader(absl::string_view data) : data_(data) {}
  template <typename T>
  bool Read(T* value) {
    if (data_.size() - offset_ < sizeof(T)) return false;
    std::memcpy(value, data_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return true;
  }
  template <typename T>
  bool ReadArray(std::vector<T>* values) {
    int64_t count = 0;
    if (!Read(&count) || count < 0 ||
        static_cast<uint64_t>(count) > (data_.size() - offset_) / sizeof(T)) {
      return false;
    }
    // Copied, not cast: the bytes may be unaligned for T.
    values->resize(count);
    if (count > 0) {
      std::memcpy(values->data(), data_.data() + offset_, count * sizeof(T));
    }
    offset_ += count * sizeof(T);
    return true;
  }
  bool done() const { return offset_ == data_.size(); }

 private:
  absl::string_view data_;
  size_t offset_ = 0;
};

// w's `dim` coordinates as slots of `granularity` (RangeGranularity,
// problem.h, which divides dim): slot = coordinate / granularity.
class SlotMap {
 public:
  // Unset: only is_set() may be asked.
  SlotMap() = default;
  SlotMap(int64_t dim, int64_t granularity);

  bool is_set() const { return inverse_ != 0; }
  int64_t dim() const { return dim_; }
  int64_t granularity() const { return granularity_; }
  uint64_t count() const { return static_cast<uint64_t>(dim_ / granularity_); }
  // target / granularity as (target >> shift) · inverse mod 2^64, exact
  // since targets are multiples of it (a division costs ~40 cycles). For a
  // non-negative x that is no multiple of it, far above count() (an exact
  // division's multiplier).
  uint64_t SlotOf(int64_t target) const {
    return (static_cast<uint64_t>(target) >> shift_) * inverse_;
  }
  // Whether x is a whole number of slots, at most count(): x ≥ 0, a
  // multiple of the granularity, x ≤ dim. Divisibility by the odd part of
  // the granularity is tested through SlotOf: for a multiple of it, the
  // slot is at most the slot count; for anything else, far above.
  bool WholeSlots(int64_t x) const {
    const int64_t low_bits = (int64_t{1} << shift_) - 1;
    return x >= 0 && (x & low_bits) == 0 && SlotOf(x) <= count();
  }

 private:
  int64_t dim_ = 0;
  int64_t granularity_ = 1;
  // granularity = odd · 2^shift_; inverse_ = odd⁻¹ mod 2^64 (0: unset).
  int shift_ = 0;
  uint64_t inverse_ = 0;
};

// A Δw on the wire: its values and vector ends as they are; per addition
// only its 32-bit slot, the vectors as runs (each position's vector is
// added at consecutive additions), and the scales only when one is not 1
// (binary features): 12.5 KB per CoNLL-2000 sentence instead of 21. Keeps
// its scratch between calls, for its capacity.
class DeltaCodec {
 public:
  // Appends `delta`, whose addition j adds on slot slots[j] (below 2^32),
  // to `out`.
  void Append(const BlockUpdate& delta, const std::vector<int64_t>& slots,
              std::string* out);
  // Reads one delta Append wrote into `delta` (its targets the slots'
  // first coordinates). False, with `delta` unspecified, when the bytes end
  // early, a slot is outside `slot_map`, the runs do not cover the
  // additions exactly, or the scales' flag is neither 0 nor 1. The vectors
  // and targets are checked by ValidDelta.
  bool Read(const SlotMap& slot_map, WireReader* reader, BlockUpdate* delta);

 private:
  std::vector<uint32_t> slots_;
  std::vector<std::pair<int32_t, int32_t>> runs_;
};

// Whether a received Δw is well formed and adds on whole granularity slots
// of w: as many vectors, scales as targets, vector ends increasing by whole
// slots up to the values' size, every addition's vector one of them and
// its target a slot start with the vector inside w.
bool ValidDelta(const SlotMap& slot_map, const BlockUpdate& delta);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_WIRE_H_
