#include "features/feature_names.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"

namespace chaintag {

namespace {

void AddOther(uint64_t hash, std::vector<uint64_t>* others) {
  if (std::find(others->begin(), others->end(), hash) == others->end()) {
    others->push_back(hash);
  }
}

}  // namespace

void FeatureNames::Add(uint32_t bucket, absl::string_view name) {
  auto [it, inserted] = names_.try_emplace(bucket);
  Entry& entry = it->second;
  if (inserted) {
    entry.name = std::string(name);
    return;
  }
  if (name != entry.name) AddOther(absl::HashOf(name), &entry.others);
}

void FeatureNames::Merge(const FeatureNames& others) {
  for (const auto& [bucket, entry] : others.names_) {
    auto [it, inserted] = names_.try_emplace(bucket, entry);
    if (inserted) continue;
    Entry& kept = it->second;
    if (entry.name != kept.name) {
      AddOther(absl::HashOf(absl::string_view(entry.name)), &kept.others);
    }
    for (uint64_t hash : entry.others) {
      if (hash != absl::HashOf(absl::string_view(kept.name))) {
        AddOther(hash, &kept.others);
      }
    }
  }
}

const std::string* FeatureNames::Find(uint32_t bucket) const {
  auto it = names_.find(bucket);
  return it == names_.end() ? nullptr : &it->second.name;
}

int FeatureNames::Others(uint32_t bucket) const {
  auto it = names_.find(bucket);
  return it == names_.end() ? 0 : static_cast<int>(it->second.others.size());
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

namespace {

absl::Status AddNames(const FeatureExtractor& extractor,
                      const Sentence& sentence, size_t first_position,
                      std::vector<std::vector<NamedFeature>>* named,
                      FeatureNames* to) {
  absl::Status status = extractor.ExtractNames(sentence, named);
  if (!status.ok()) return status;
  for (size_t t = first_position; t < named->size(); ++t) {
    for (const NamedFeature& feature : (*named)[t]) {
      to->Add(feature.bucket, feature.name);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AddSentenceNames(const FeatureExtractor& extractor,
                              const Sentence& sentence,
                              std::vector<std::vector<NamedFeature>>* named,
                              FeatureNames* emission, FeatureNames* pair) {
  absl::Status status = AddNames(extractor, sentence, 0, named, emission);
  if (!status.ok() || extractor.pair_extractor() == nullptr) return status;
  return AddNames(*extractor.pair_extractor(), sentence, 1, named, pair);
}

}  // namespace chaintag
