#include "features/feature_stats.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "base/parallel.h"

namespace chaintag {
namespace {

// One thread's share of the sentences.
struct PartialStats {
  absl::flat_hash_set<uint64_t> attributes;
  int64_t occurrences = 0;
  absl::Status status;
};

void CollectRange(const FeatureExtractor& extractor,
                  const std::vector<Sentence>& sentences, int begin, int end,
                  PartialStats* partial) {
  std::vector<int32_t> offsets;
  std::vector<uint64_t> hashes;
  std::vector<float> values;
  for (int i = begin; i < end; ++i) {
    partial->status =
        extractor.ExtractHashes(sentences[i], &offsets, &hashes, &values);
    if (!partial->status.ok()) return;
    partial->occurrences += static_cast<int64_t>(hashes.size());
    partial->attributes.insert(hashes.begin(), hashes.end());
  }
}

}  // namespace

absl::StatusOr<FeatureStats> ComputeFeatureStats(
    const FeatureExtractor& extractor, const std::vector<Sentence>& sentences,
    int num_threads) {
  const int n = static_cast<int>(sentences.size());
  const int parts = std::max(1, std::min(num_threads, n));
  std::vector<PartialStats> partials(parts);
  ParallelFor(parts, parts, [&](int first, int last) {
    for (int part = first; part < last; ++part) {
      CollectRange(
          extractor, sentences, static_cast<int>(SplitPoint(n, part, parts)),
          static_cast<int>(SplitPoint(n, part + 1, parts)), &partials[part]);
    }
  });
  // The parts in sentence order: the first failure is the first sentence's.
  FeatureStats stats;
  absl::flat_hash_set<uint64_t> attributes = std::move(partials[0].attributes);
  for (PartialStats& partial : partials) {
    if (!partial.status.ok()) return partial.status;
    stats.occurrences += partial.occurrences;
    attributes.insert(partial.attributes.begin(), partial.attributes.end());
  }
  absl::flat_hash_set<uint32_t> buckets;
  for (uint64_t hash : attributes) buckets.insert(extractor.Bucket(hash));
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
