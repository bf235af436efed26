// FeatureNames: which attribute a weight row stands for, bucket → name, for
// looking inside a model (tagging/model_dump.h). Hashing maps several
// attributes to one bucket now and then: a bucket keeps the first name it
// is given, and counts the other names that arrive.
//
// Thread-safety: a plain value type; const access is safe from any thread.

#ifndef CHAINTAG_FEATURES_FEATURE_NAMES_H_
#define CHAINTAG_FEATURES_FEATURE_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "corpora/sentence.h"
#include "features/feature_extractor.h"

namespace chaintag {

class CompactFeatureNames;

class FeatureNames {
 public:
  // Records `name` for `bucket`: the first name of a bucket is kept, later
  // different ones are only counted, each distinct one once.
  void Add(uint32_t bucket, absl::string_view name);
  // Adds `others`'s names after this one's, as if added in that order.
  void Merge(const FeatureNames& others);

  // The bucket's name, if it has one (valid until the next Add or Merge).
  std::optional<absl::string_view> Find(uint32_t bucket) const;
  // How many distinct other names were seen in the bucket (told apart by
  // a 64-bit hash).
  int Others(uint32_t bucket) const;
  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  bool empty() const { return names_.empty(); }

  // The names in a sorted table of a few bytes each beyond their text, for
  // keeping them while a solver runs.
  CompactFeatureNames Compact() const;

 private:
  // A bucket's first name, text_[begin, begin + length), and where its
  // other names' hashes are in others_ (-1: none, as for most buckets).
  // 16 bytes a bucket, where a string and a vector took 56: a corpus's
  // attributes have tens of thousands of buckets, on every thread.
  struct Entry {
    uint64_t begin = 0;
    uint32_t length = 0;
    int32_t others = -1;
  };
  absl::string_view NameOf(const Entry& entry) const {
    return absl::string_view(text_.data() + entry.begin, entry.length);
  }
  // Adds `hash` to the entry's other names unless it is there.
  void AddOther(uint64_t hash, Entry* entry);

  absl::flat_hash_map<uint32_t, Entry> names_;
  std::string text_;
  // Hashes of other names, by Entry::others; few, since collisions are.
  std::vector<std::vector<uint64_t>> others_;
};

// FeatureNames' names by bucket, read-only, in one buffer.
class CompactFeatureNames {
 public:
  // The bucket's name, or null when it has none.
  const char* Find(uint32_t bucket, size_t* length) const;
  int64_t size() const { return static_cast<int64_t>(buckets_.size()); }
  bool empty() const { return buckets_.empty(); }

 private:
  friend class FeatureNames;
  std::vector<uint32_t> buckets_;  // ascending
  std::vector<uint32_t> ends_;     // name k is text_[ends_[k-1], ends_[k])
  std::string text_;
};

// Adds the names of `sentence`'s features under `extractor` to `emission`,
// and those of its pair features (extractor.pair_extractor(), when there
// is one) to `pair`; pair features have no label pair at the first
// position, so its names are left out. `named` is scratch, reused.
absl::Status AddSentenceNames(const FeatureExtractor& extractor,
                              const Sentence& sentence,
                              std::vector<std::vector<NamedFeature>>* named,
                              FeatureNames* emission, FeatureNames* pair);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_NAMES_H_
