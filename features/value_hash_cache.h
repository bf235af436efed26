// ValueHashCache: a bounded memo from an attribute value (a word type) to
// the hashes the feature extractor derives from it (its lowercased,
// affix, shape, n-gram and cluster values). A few thousand types cover
// most tokens of a corpus, so the transforms and their hashing run once per
// type instead of once per token.
//
// Each entry is keyed by (attribute, value) and verified against the stored
// value, so a hit is exact. When the table is half full or its store
// exceeds its budget, it starts over empty: the cost is a burst of misses,
// never a wrong answer, and results never depend on what was cached.
//
// Thread-safety: none; each thread keeps its own (the extractor keeps one
// per thread and extractor config).

#ifndef CHAINTAG_FEATURES_VALUE_HASH_CACHE_H_
#define CHAINTAG_FEATURES_VALUE_HASH_CACHE_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace chaintag {

class ValueHashCache {
 public:
  // Holds up to max_types / 2 entries at once (max_types is rounded up to a
  // power of two) and about `max_words` 64-bit words of hashes and values
  // (1 MiB by default: a thread may hold one per extractor config).
  explicit ValueHashCache(int max_types = 16384, size_t max_words = 1 << 17);

  // The hashes stored for (attribute, value), whose 64-bit hash is `key`;
  // empty (data() == nullptr) when not cached.
  absl::Span<const uint64_t> Find(int attribute, uint64_t key,
                                  absl::string_view value) const;

  // Stores `hashes` for (attribute, value), emptying the cache first when it
  // is full. Not for a pair already cached.
  void Insert(int attribute, uint64_t key, absl::string_view value,
              absl::Span<const uint64_t> hashes);

  void Clear();
  int size() const { return size_; }
  // Times the cache started over since it was made, for measurements.
  int64_t clears() const { return clears_; }

 private:
  struct Slot {
    uint64_t key = 0;
    // Into store_: [attribute << 32 | value bytes, number of hashes, the
    // hashes, the value's bytes packed into words]; 0 = empty slot.
    uint32_t entry = 0;
  };

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  std::vector<uint64_t> store_;  // store_[0] unused, so that 0 means empty
  size_t max_words_;
  int size_ = 0;
  int64_t clears_ = 0;
};

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_VALUE_HASH_CACHE_H_
