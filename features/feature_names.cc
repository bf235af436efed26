#include "features/feature_names.h"

#include "absl/hash/hash.h"

namespace chaintag {

void FeatureNames::Add(uint32_t bucket, absl::string_view name) {
  auto [it, inserted] = names_.try_emplace(bucket);
  Entry& entry = it->second;
  if (inserted) {
    entry.name = std::string(name);
    return;
  }
  if (name == entry.name) return;
  // Names arrive in text order, so a colliding attribute often comes back
  // to back: count such a run once.
  const uint64_t hash = absl::HashOf(name);
  if (hash == entry.last_other_hash) return;
  entry.last_other_hash = hash;
  ++entry.others;
}

void FeatureNames::Merge(const FeatureNames& others) {
  for (const auto& [bucket, entry] : others.names_) {
    auto [it, inserted] = names_.try_emplace(bucket, entry);
    if (inserted) continue;
    if (entry.name != it->second.name) ++it->second.others;
    it->second.others += entry.others;
  }
}

const std::string* FeatureNames::Find(uint32_t bucket) const {
  auto it = names_.find(bucket);
  return it == names_.end() ? nullptr : &it->second.name;
}

int FeatureNames::Others(uint32_t bucket) const {
  auto it = names_.find(bucket);
  return it == names_.end() ? 0 : it->second.others;
}

}  // namespace chaintag
