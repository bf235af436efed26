#include "features/feature_keys.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace chaintag {

FeatureKeys::FeatureKeys(std::vector<uint64_t> keys) : keys_(std::move(keys)) {
  // The smallest power of two (at least 2) that the keys fill to at most
  // 70%: linear probing's expected probes are then at most about 2 for a
  // key found and 6 for one that is not, four slots to a cache line.
  uint64_t capacity = 2;
  int bits = 1;
  while (static_cast<double>(keys_.size()) >
         0.7 * static_cast<double>(capacity)) {
    capacity *= 2;
    ++bits;
  }
  shift_ = 64 - bits;
  mask_ = capacity - 1;
  slots_.assign(capacity, Slot());
  for (size_t b = 0; b < keys_.size(); ++b) {
    uint64_t slot = Home(keys_[b]);
    while (slots_[slot].bucket != kEmpty) slot = (slot + 1) & mask_;
    slots_[slot].key = keys_[b];
    slots_[slot].bucket = static_cast<uint32_t>(b);
  }
}

absl::StatusOr<FeatureKeys> FeatureKeys::FromSorted(
    absl::Span<const uint64_t> keys) {
  if (keys.size() > kMaxKeys) {
    return absl::InvalidArgumentError(absl::StrCat(
        keys.size(), " feature keys: at most ", kMaxKeys, " fit a key table"));
  }
  for (size_t k = 1; k < keys.size(); ++k) {
    if (keys[k] <= keys[k - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("feature key ", k,
                       " is not above the one before it (the keys must "
                       "be sorted and distinct)"));
    }
  }
  return FeatureKeys(std::vector<uint64_t>(keys.begin(), keys.end()));
}

void FeatureKeySet::Merge(const FeatureKeySet& other) {
  checks_.reserve(checks_.size() + other.checks_.size());
  for (const auto& [key, check] : other.checks_) Add(key, check);
  if (other.collision_.has_value()) NoteCollision(*other.collision_);
}

std::vector<uint64_t> FeatureKeySet::SortedKeys() const {
  std::vector<uint64_t> keys;
  keys.reserve(checks_.size());
  for (const auto& entry : checks_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace chaintag
