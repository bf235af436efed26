#include "features/feature_stats.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"

namespace chaintag {

absl::StatusOr<FeatureStats> ComputeFeatureStats(
    const FeatureExtractor& extractor, const std::vector<Sentence>& sentences) {
  absl::flat_hash_set<uint64_t> attributes;
  absl::flat_hash_set<uint32_t> buckets;
  FeatureStats stats;
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  for (const Sentence& sentence : sentences) {
    absl::Status status =
        extractor.ExtractHashes(sentence, &offsets, &hashes, &values);
    if (!status.ok()) return status;
    stats.occurrences += static_cast<int64_t>(hashes.size());
    for (uint64_t hash : hashes) {
      if (attributes.insert(hash).second) {
        buckets.insert(extractor.Bucket(hash));
      }
    }
  }
  stats.distinct_attributes = static_cast<int64_t>(attributes.size());
  stats.distinct_buckets = static_cast<int64_t>(buckets.size());
  if (stats.distinct_attributes > 0) {
    stats.collision_rate =
        1.0 - static_cast<double>(stats.distinct_buckets) /
                  static_cast<double>(stats.distinct_attributes);
  }
  return stats;
}

}  // namespace chaintag
