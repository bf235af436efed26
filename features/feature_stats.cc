#include "features/feature_stats.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
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

// The distinct attributes of `sentences`, and their occurrences.
absl::StatusOr<PartialStats> CollectAttributes(
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
  PartialStats all = std::move(partials[0]);
  if (!all.status.ok()) return all.status;
  for (int part = 1; part < parts; ++part) {
    if (!partials[part].status.ok()) return partials[part].status;
    all.occurrences += partials[part].occurrences;
    all.attributes.insert(partials[part].attributes.begin(),
                          partials[part].attributes.end());
  }
  return all;
}

FeatureStats StatsOf(const FeatureExtractor& extractor,
                     const PartialStats& all) {
  FeatureStats stats;
  stats.occurrences = all.occurrences;
  absl::flat_hash_set<uint32_t> buckets;
  for (uint64_t hash : all.attributes) {
    // Exact features: a key without a bucket (not in the table) has no row.
    const int64_t bucket = extractor.FindBucket(hash);
    if (bucket >= 0) buckets.insert(static_cast<uint32_t>(bucket));
  }
  stats.distinct_attributes = static_cast<int64_t>(all.attributes.size());
  stats.distinct_buckets = static_cast<int64_t>(buckets.size());
  if (stats.distinct_attributes > 0) {
    stats.collision_rate =
        1.0 - static_cast<double>(stats.distinct_buckets) /
                  static_cast<double>(stats.distinct_attributes);
  }
  return stats;
}

}  // namespace

absl::StatusOr<FeatureStats> ComputeFeatureStats(
    const FeatureExtractor& extractor, const std::vector<Sentence>& sentences,
    int num_threads) {
  absl::StatusOr<PartialStats> all =
      CollectAttributes(extractor, sentences, num_threads);
  if (!all.ok()) return all.status();
  return StatsOf(extractor, *all);
}

absl::StatusOr<FeatureStats> FeatureStatsOfAllRanks(
    const FeatureExtractor& extractor, const std::vector<Sentence>& sentences,
    int num_threads, Communicator* communicator) {
  absl::StatusOr<PartialStats> local =
      CollectAttributes(extractor, sentences, num_threads);
  // A rank that failed still joins the exchange, sending nothing, so that
  // the others do not wait for it: every rank then reports its own error.
  std::string bytes;
  if (local.ok()) {
    bytes.resize(sizeof(int64_t) + local->attributes.size() * sizeof(uint64_t));
    std::memcpy(bytes.data(), &local->occurrences, sizeof(int64_t));
    char* at = bytes.data() + sizeof(int64_t);
    for (uint64_t hash : local->attributes) {
      std::memcpy(at, &hash, sizeof(uint64_t));
      at += sizeof(uint64_t);
    }
  }
  std::string all_bytes;
  std::vector<int64_t> offsets;
  absl::Status gathered = communicator->AllGather(bytes, &all_bytes, &offsets);
  if (!local.ok()) return local.status();
  if (!gathered.ok()) return gathered;
  PartialStats all;
  for (int r = 0; r + 1 < static_cast<int>(offsets.size()); ++r) {
    const int64_t size = offsets[r + 1] - offsets[r];
    if (size < static_cast<int64_t>(sizeof(int64_t)) ||
        (size - sizeof(int64_t)) % sizeof(uint64_t) != 0) {
      return absl::DataLossError(absl::StrCat(
          "rank ", r, " sent no feature statistics (its own error ends it)"));
    }
    const char* at = all_bytes.data() + offsets[r];
    int64_t occurrences = 0;
    std::memcpy(&occurrences, at, sizeof(int64_t));
    all.occurrences += occurrences;
    for (int64_t k = sizeof(int64_t); k < size; k += sizeof(uint64_t)) {
      uint64_t hash = 0;
      std::memcpy(&hash, at + k, sizeof(uint64_t));
      all.attributes.insert(hash);
    }
  }
  return StatsOf(extractor, all);
}

}  // namespace chaintag
