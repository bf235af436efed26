// FeatureKeys: the key table of exact features (FeatureConfig.exact): the
// distinct 64-bit feature keys (feature_extractor.h's hashes, unreduced)
// of the training data, sorted, key k standing for bucket k, with an O(1)
// key → bucket lookup. FeatureKeySet: the set those keys are gathered
// into, which also notices two different features that share a key.
//
// Hashed features reduce a key to one of num_buckets buckets, so distinct
// features can share a weight row; exact features give every key seen in
// training a bucket of its own, and a key not seen in training none (zero
// weight, as a bucket without a row). Sorting makes bucket k a function of
// the set of keys alone, whatever the order (or the threads) they were
// gathered in.
//
// The lookup is open addressing with linear probing over a power-of-two
// table at most 70% full, each slot the key and its bucket (16 bytes), so
// a probe sequence usually stays in one cache line; the slot is found from
// the key's bits by a multiplication (the keys are hashes already). The
// table is on huge pages (base/huge_pages.h).
//
// Example:
//   FeatureKeySet seen;
//   seen.Add(key, check);  // for every training feature (see Add)
//   if (seen.collision().has_value()) ...;  // two features, one key
//   absl::StatusOr<FeatureKeys> keys = FeatureKeys::FromSorted(
//       seen.SortedKeys());
//   int64_t bucket = keys->Find(key);  // -1: not seen in training
//
// Thread-safety: FeatureKeys is immutable after construction and safe from
// any thread; FeatureKeySet is a plain value, one writer at a time.

#ifndef CHAINTAG_FEATURES_FEATURE_KEYS_H_
#define CHAINTAG_FEATURES_FEATURE_KEYS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/huge_pages.h"

namespace chaintag {

class FeatureKeys {
 public:
  // At most this many keys: a bucket id is 32 bits, and one value marks an
  // empty slot.
  static constexpr uint64_t kMaxKeys = 0xFFFFFFFEu;

  FeatureKeys() : FeatureKeys(std::vector<uint64_t>()) {}

  // From strictly ascending keys. Fails, naming the first offending
  // position, on a key not above the one before it, or on more than
  // kMaxKeys keys.
  static absl::StatusOr<FeatureKeys> FromSorted(
      absl::Span<const uint64_t> keys);

  int64_t size() const { return static_cast<int64_t>(keys_.size()); }
  // Bucket b's key, ascending.
  const std::vector<uint64_t>& keys() const { return keys_; }

  // The bucket of `key`, or -1 when the table does not hold it.
  int64_t Find(uint64_t key) const {
    for (uint64_t slot = Home(key);; slot = (slot + 1) & mask_) {
      const Slot& s = slots_[slot];
      if (s.bucket == kEmpty) return -1;
      if (s.key == key) return s.bucket;
    }
  }

  // Hints the cache to fetch the slot Find(key) reads first: looking up a
  // position's keys after prefetching them all overlaps their misses.
  void Prefetch(uint64_t key) const { __builtin_prefetch(&slots_[Home(key)]); }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    uint64_t key = 0;
    uint32_t bucket = kEmpty;
  };

  explicit FeatureKeys(std::vector<uint64_t> keys);

  // Fibonacci hashing: the multiplication's high bits mix every bit of the
  // key, whatever bits the table's size would otherwise read.
  uint64_t Home(uint64_t key) const {
    return (key * 0x9E3779B97F4A7C15ull) >> shift_;
  }

  std::vector<uint64_t> keys_;
  // Read at random, and megabytes for a large model: on huge pages, so that
  // a lookup is not a TLB miss as well.
  HugePageVector<Slot> slots_;
  int shift_ = 63;
  uint64_t mask_ = 1;
};

// The distinct keys of a set of features, each with a check: a second
// 64-bit hash of the bytes the feature's key was computed from, taken
// independently of the key (another seed). Two different features that
// share a key then almost surely differ in their checks, and the set
// notes the key; it misses such a pair only when the checks collide too
// (probability 2^-64 for the pair).
class FeatureKeySet {
 public:
  // Records `key` with `check`. Equal features give equal keys and equal
  // checks; a key seen again with another check is a collision.
  void Add(uint64_t key, uint64_t check) {
    const auto [it, inserted] = checks_.try_emplace(key, check);
    if (!inserted && it->second != check) NoteCollision(key);
  }
  // Adds every key of `other`, as if each had been added here.
  void Merge(const FeatureKeySet& other);

  int64_t size() const { return static_cast<int64_t>(checks_.size()); }
  // The smallest key seen with two different checks, if any (the smallest,
  // so that the answer does not depend on the order of the adds).
  std::optional<uint64_t> collision() const { return collision_; }
  // The keys, ascending (FeatureKeys::FromSorted's input).
  std::vector<uint64_t> SortedKeys() const;

 private:
  void NoteCollision(uint64_t key) {
    if (!collision_.has_value() || key < *collision_) collision_ = key;
  }

  absl::flat_hash_map<uint64_t, uint64_t> checks_;
  std::optional<uint64_t> collision_;
};

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_KEYS_H_
