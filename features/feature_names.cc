#include "features/feature_names.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"

namespace chaintag {

void FeatureNames::AddOther(uint64_t hash, Entry* entry) {
  if (entry->others < 0) {
    entry->others = static_cast<int32_t>(others_.size());
    others_.emplace_back();
  }
  std::vector<uint64_t>& others = others_[entry->others];
  if (std::find(others.begin(), others.end(), hash) == others.end()) {
    others.push_back(hash);
  }
}

void FeatureNames::Add(uint32_t bucket, absl::string_view name) {
  auto [it, inserted] = names_.try_emplace(bucket);
  Entry& entry = it->second;
  if (inserted) {
    entry.begin = text_.size();
    entry.length = static_cast<uint32_t>(name.size());
    text_.append(name.data(), name.size());
    return;
  }
  if (name != NameOf(entry)) AddOther(absl::HashOf(name), &entry);
}

void FeatureNames::Merge(const FeatureNames& others) {
  for (const auto& [bucket, entry] : others.names_) {
    const absl::string_view name = others.NameOf(entry);
    auto [it, inserted] = names_.try_emplace(bucket);
    Entry& kept = it->second;
    if (inserted) {
      kept.begin = text_.size();
      kept.length = entry.length;
      text_.append(name.data(), name.size());
      if (entry.others >= 0) {
        kept.others = static_cast<int32_t>(others_.size());
        others_.push_back(others.others_[entry.others]);
      }
      continue;
    }
    const absl::string_view kept_name = NameOf(kept);
    if (name != kept_name) AddOther(absl::HashOf(name), &kept);
    if (entry.others < 0) continue;
    const uint64_t kept_hash = absl::HashOf(kept_name);
    for (uint64_t hash : others.others_[entry.others]) {
      if (hash != kept_hash) AddOther(hash, &kept);
    }
  }
}

std::optional<absl::string_view> FeatureNames::Find(uint32_t bucket) const {
  auto it = names_.find(bucket);
  if (it == names_.end()) return std::nullopt;
  return NameOf(it->second);
}

int FeatureNames::Others(uint32_t bucket) const {
  auto it = names_.find(bucket);
  if (it == names_.end() || it->second.others < 0) return 0;
  return static_cast<int>(others_[it->second.others].size());
}

CompactFeatureNames FeatureNames::Compact() const {
  std::vector<std::pair<uint32_t, absl::string_view>> sorted;
  sorted.reserve(names_.size());
  size_t bytes = 0;
  for (const auto& [bucket, entry] : names_) {
    sorted.emplace_back(bucket, NameOf(entry));
    bytes += entry.length;
  }
  std::sort(sorted.begin(), sorted.end());
  CompactFeatureNames compact;
  compact.buckets_.reserve(sorted.size());
  compact.ends_.reserve(sorted.size());
  compact.text_.reserve(bytes);
  for (const auto& [bucket, name] : sorted) {
    compact.buckets_.push_back(bucket);
    compact.text_.append(name.data(), name.size());
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
