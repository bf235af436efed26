// The round exchange's wire format: see bcfw_wire.h.

#include "solvers/bcfw_wire.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace chaintag {

SlotMap::SlotMap(int64_t dim, int64_t granularity)
    : dim_(dim), granularity_(granularity) {
  uint64_t odd = static_cast<uint64_t>(granularity);
  shift_ = 0;
  while (odd % 2 == 0) {
    odd /= 2;
    ++shift_;
  }
  // Newton's iteration for odd⁻¹ mod 2^64 doubles the correct low bits
  // each step, from 3 (odd·odd ≡ 1 mod 8).
  uint64_t inverse = odd;
  for (int step = 0; step < 5; ++step) inverse *= 2 - odd * inverse;
  inverse_ = inverse;
}

void DeltaCodec::Append(const BlockUpdate& delta,
                        const std::vector<int64_t>& slots, std::string* out) {
  WireAppendArray(delta.values, out);
  WireAppendArray(delta.vector_ends, out);
  slots_.assign(slots.begin(), slots.end());
  WireAppendArray(slots_, out);
  runs_.clear();
  for (size_t j = 0; j < delta.vectors.size(); ++j) {
    if (j > 0 && delta.vectors[j] == delta.vectors[j - 1]) {
      ++runs_.back().second;
    } else {
      runs_.push_back({delta.vectors[j], 1});
    }
  }
  WireAppendArray(runs_, out);
  const bool unit_scales =
      std::all_of(delta.scales.begin(), delta.scales.end(),
                  [](double scale) { return scale == 1.0; });
  WireAppend<uint8_t>(unit_scales ? 1 : 0, out);
  if (!unit_scales) WireAppendArray(delta.scales, out);
}

bool DeltaCodec::Read(const SlotMap& slot_map, WireReader* reader,
                      BlockUpdate* delta) {
  uint8_t unit_scales = 0;
  if (!reader->ReadArray(&delta->values) ||
      !reader->ReadArray(&delta->vector_ends) || !reader->ReadArray(&slots_) ||
      !reader->ReadArray(&runs_)) {
    return false;
  }
  const uint64_t slot_count = slot_map.count();
  const int64_t granularity = slot_map.granularity();
  const size_t additions = slots_.size();
  delta->targets.resize(additions);
  for (size_t j = 0; j < additions; ++j) {
    if (slots_[j] >= slot_count) return false;
    delta->targets[j] = static_cast<int64_t>(slots_[j]) * granularity;
  }
  delta->vectors.clear();
  for (const std::pair<int32_t, int32_t>& run : runs_) {
    if (run.second <= 0 ||
        static_cast<size_t>(run.second) > additions - delta->vectors.size()) {
      return false;
    }
    delta->vectors.insert(delta->vectors.end(), run.second, run.first);
  }
  if (delta->vectors.size() != additions || !reader->Read(&unit_scales)) {
    return false;
  }
  if (unit_scales == 1) {
    delta->scales.assign(additions, 1.0);
    return true;
  }
  return unit_scales == 0 && reader->ReadArray(&delta->scales);
}

bool ValidDelta(const SlotMap& slot_map, const BlockUpdate& delta) {
  const size_t additions = delta.targets.size();
  if (delta.vectors.size() != additions || delta.scales.size() != additions) {
    return false;
  }
  const int64_t dim = slot_map.dim();
  int64_t previous = 0;
  for (int64_t end : delta.vector_ends) {
    if (end <= previous || !slot_map.WholeSlots(end - previous) ||
        end - previous > dim) {
      return false;
    }
    previous = end;
  }
  if (previous != static_cast<int64_t>(delta.values.size())) return false;
  const int32_t count = static_cast<int32_t>(delta.vector_ends.size());
  for (size_t j = 0; j < additions; ++j) {
    const int32_t v = delta.vectors[j];
    if (v < 0 || v >= count) return false;
    const int64_t begin = delta.targets[j];
    if (!slot_map.WholeSlots(begin) || begin > dim - delta.VectorLength(v)) {
      return false;
    }
  }
  return true;
}

}  // namespace chaintag
