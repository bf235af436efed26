#include "features/feature_names.h"

#include <algorithm>
#include <utility>

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

CompactFeatureNames FeatureNames::Compact() const {
  std::vector<std::pair<uint32_t, const std::string*>> sorted;
  sorted.reserve(names_.size());
  size_t bytes = 0;
  for (const auto& [bucket, entry] : names_) {
    sorted.emplace_back(bucket, &entry.name);
    bytes += entry.name.size();
  }
  std::sort(sorted.begin(), sorted.end());
  CompactFeatureNames compact;
  compact.buckets_.reserve(sorted.size());
  compact.ends_.reserve(sorted.size());
  compact.text_.reserve(bytes);
  for (const auto& [bucket, name] : sorted) {
    compact.buckets_.push_back(bucket);
    compact.text_ += *name;
    compact.ends_.push_back(static_cast<uint32_t>(compact.text_.size()));
  }
  return compact;
}

const char* CompactFeatureNames::Find(uint32_t bucket, size_t* length) const {
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), bucket);
  if (it == buckets_.end() || *it != bucket) return nullptr;
  const size_t k = it - buckets_.begin();
  const uint32_t begin = k == 0 ? 0 : ends_[k - 1];
  *length = ends_[k] - begin;
  return text_.data() + begin;
}

}  // namespace chaintag
