#include "features/bucket_rows.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace chaintag {

absl::StatusOr<BucketRows> BucketRows::FromSorted(
    absl::Span<const uint32_t> buckets, uint64_t num_buckets) {
  if (num_buckets > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_buckets ", num_buckets, " exceeds 2^32"));
  }
  for (size_t k = 0; k < buckets.size(); ++k) {
    if (buckets[k] >= num_buckets || (k > 0 && buckets[k] <= buckets[k - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("bucket ", buckets[k], " at row ", k,
                       " is out of range or not above the row before it (",
                       num_buckets, " buckets)"));
    }
  }
  BucketRows rows;
  rows.num_buckets_ = num_buckets;
  rows.buckets_.assign(buckets.begin(), buckets.end());
  rows.BuildIndex();
  return rows;
}

BucketRows BucketRows::FromFeatures(
    absl::Span<const FeatureSequence* const> sequences, uint64_t num_buckets) {
  // Occupancy bits first (one pass, no sorting), then the rows in bucket
  // order straight from the bits, which are already the index's.
  BucketRows rows;
  rows.num_buckets_ = num_buckets;
  rows.index_.assign(2 * ((num_buckets + 63) / 64), 0);
  for (const FeatureSequence* features : sequences) {
    for (uint32_t bucket : features->buckets) {
      rows.index_[2 * (bucket >> 6)] |= uint64_t{1} << (bucket & 63);
    }
  }
  for (uint64_t word = 0; 2 * word < rows.index_.size(); ++word) {
    for (uint64_t bits = rows.index_[2 * word]; bits != 0; bits &= bits - 1) {
      rows.buckets_.push_back(
          static_cast<uint32_t>(64 * word + __builtin_ctzll(bits)));
    }
  }
  rows.CountRanks();
  return rows;
}

BucketRows BucketRows::Identity(uint64_t num_buckets) {
  BucketRows rows;
  rows.num_buckets_ = num_buckets;
  rows.buckets_.resize(num_buckets);
  for (uint64_t b = 0; b < num_buckets; ++b) {
    rows.buckets_[b] = static_cast<uint32_t>(b);
  }
  rows.BuildIndex();
  return rows;
}

void BucketRows::BuildIndex() {
  index_.assign(2 * ((num_buckets_ + 63) / 64), 0);
  for (uint32_t bucket : buckets_) {
    index_[2 * (bucket >> 6)] |= uint64_t{1} << (bucket & 63);
  }
  CountRanks();
}

void BucketRows::CountRanks() {
  uint64_t before = 0;
  for (size_t word = 0; 2 * word < index_.size(); ++word) {
    index_[2 * word + 1] = before;
    before += PopCount(index_[2 * word]);
  }
}

void BucketRows::Remap(FeatureSequence* features) const {
  const int T = features->size();
  int32_t kept = 0;
  int32_t begin = features->offsets[0];
  for (int t = 0; t < T; ++t) {
    const int32_t end = features->offsets[t + 1];
    for (int32_t k = begin; k < end; ++k) {
      const int64_t row = Find(features->buckets[k]);
      if (row < 0) continue;
      features->buckets[kept] = static_cast<uint32_t>(row);
      if (!features->values.empty()) {
        features->values[kept] = features->values[k];
      }
      ++kept;
    }
    begin = end;
    features->offsets[t + 1] = kept;
  }
  features->buckets.resize(kept);
  if (!features->values.empty()) features->values.resize(kept);
}

}  // namespace chaintag
