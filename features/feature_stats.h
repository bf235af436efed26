// Feature statistics over a corpus: how many distinct attributes the
// templates produce, how many buckets they land in, and so how much the
// hashing trick merges (the collision rate).
//
// Thread-safety: pure functions of their arguments (and the communicator's
// collective).

#ifndef CHAINTAG_FEATURES_FEATURE_STATS_H_
#define CHAINTAG_FEATURES_FEATURE_STATS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "base/communicator.h"
#include "corpora/sentence.h"
#include "features/feature_extractor.h"

namespace chaintag {

struct FeatureStats {
  // Distinct (template, part values), i.e. distinct 64-bit hashes before
  // reduction to buckets; the bias counts as one.
  int64_t distinct_attributes = 0;
  // Distinct buckets those hash into.
  int64_t distinct_buckets = 0;
  // Feature occurrences over all positions, before equal buckets merge.
  int64_t occurrences = 0;
  // 1 - distinct_buckets / distinct_attributes (0 when there are none).
  double collision_rate = 0;
};

// Fails as FeatureExtractor::Extract does on the first sentence it fails on.
// The sentences are shared among `num_threads` threads.
absl::StatusOr<FeatureStats> ComputeFeatureStats(
    const FeatureExtractor& extractor, const std::vector<Sentence>& sentences,
    int num_threads = 1);

// Distributed training: the statistics of every rank's `sentences` (its
// shard) together, the same on every rank and the same as
// ComputeFeatureStats over all the sentences in one process. Each rank
// sends its distinct attribute hashes. Collective.
absl::StatusOr<FeatureStats> FeatureStatsOfAllRanks(
    const FeatureExtractor& extractor, const std::vector<Sentence>& sentences,
    int num_threads, Communicator* communicator);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_STATS_H_
