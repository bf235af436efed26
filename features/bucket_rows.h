// BucketRows: a sorted set of hash buckets numbered 0, 1, ... in bucket
// order (their rows), with an O(1) bucket → row lookup.
//
// Weights are stored only for buckets that can be non-zero: the ones that
// occur in training (w = Σ_i ψ_i / (λn) is zero everywhere else), or the
// ones a model file keeps. A feature whose bucket has no row has zero
// weight, so rewriting a FeatureSequence from buckets to rows and dropping
// such features changes no score.
//
// The lookup is a rank dictionary: one 64-bit occupancy word per 64 buckets
// beside the number of rows before it, 16 bytes per 64 buckets (256 KiB for
// 2^20 buckets): small enough for L2, where a row table is not.
//
// Thread-safety: immutable after construction; safe from any thread.

#ifndef CHAINTAG_FEATURES_BUCKET_ROWS_H_
#define CHAINTAG_FEATURES_BUCKET_ROWS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "features/feature_sequence.h"

namespace chaintag {

class BucketRows {
 public:
  BucketRows() = default;

  // From strictly ascending buckets, each < num_buckets (≤ 2^32).
  static absl::StatusOr<BucketRows> FromSorted(
      absl::Span<const uint32_t> buckets, uint64_t num_buckets);
  // The buckets that occur in any of `sequences` (bucket ids < num_buckets).
  static BucketRows FromFeatures(
      absl::Span<const FeatureSequence* const> sequences, uint64_t num_buckets);
  // Every bucket is its own row (for dense feature spaces such as OCR
  // pixels, where remapping would save nothing).
  static BucketRows Identity(uint64_t num_buckets);

  int64_t size() const { return static_cast<int64_t>(buckets_.size()); }
  uint64_t num_buckets() const { return num_buckets_; }
  // Row r's bucket, ascending.
  const std::vector<uint32_t>& buckets() const { return buckets_; }

  // The row of `bucket`, or -1 when it has none (or is ≥ num_buckets).
  int64_t Find(uint64_t bucket) const {
    if (bucket >= num_buckets_) return -1;
    const uint64_t* entry = index_.data() + 2 * (bucket >> 6);
    const uint64_t bit = uint64_t{1} << (bucket & 63);
    if ((entry[0] & bit) == 0) return -1;
    return static_cast<int64_t>(entry[1]) + PopCount(entry[0] & (bit - 1));
  }

  // Hints the cache to fetch what Find(bucket) reads: looking up a batch
  // after prefetching it overlaps the misses instead of taking them in turn.
  void Prefetch(uint64_t bucket) const {
    if (bucket < num_buckets_)
      __builtin_prefetch(index_.data() + 2 * (bucket >> 6));
  }

  // Rewrites bucket ids to row ids in place and drops the features whose
  // bucket has no row. Rows ascend with buckets, so each position's ids stay
  // ascending and distinct.
  void Remap(FeatureSequence* features) const;

 private:
  // Without -mpopcnt, __builtin_popcountll is a library call; this inlines.
  static int PopCount(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<int>((x * 0x0101010101010101ull) >> 56);
  }
  // The index from buckets_: occupancy bits, then CountRanks.
  void BuildIndex();
  // The rows-before counts of the index from its occupancy bits.
  void CountRanks();

  uint64_t num_buckets_ = 0;
  std::vector<uint32_t> buckets_;
  // Per 64 buckets: [occupancy bits, rows before this word].
  std::vector<uint64_t> index_;
};

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_BUCKET_ROWS_H_
