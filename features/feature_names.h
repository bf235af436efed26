// FeatureNames: which attribute a weight row stands for, bucket → name, for
// looking inside a model (tagging/model_dump.h). Hashing maps several
// attributes to one bucket now and then: a bucket keeps the first name it
// is given, and counts the other names that arrive.
//
// Thread-safety: a plain value type; const access is safe from any thread.

#ifndef CHAINTAG_FEATURES_FEATURE_NAMES_H_
#define CHAINTAG_FEATURES_FEATURE_NAMES_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace chaintag {

class FeatureNames {
 public:
  // Records `name` for `bucket`: the first name of a bucket is kept, later
  // different ones are only counted (a run of the same one once).
  void Add(uint32_t bucket, absl::string_view name);
  // Adds `others`'s names after this one's, as if added in that order.
  void Merge(const FeatureNames& others);

  // The bucket's name, or null.
  const std::string* Find(uint32_t bucket) const;
  // How many other names were seen in the bucket (a lower bound: the same
  // colliding name seen apart is counted each time it returns after
  // another).
  int Others(uint32_t bucket) const;
  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  bool empty() const { return names_.empty(); }

 private:
  struct Entry {
    std::string name;
    int others = 0;
    uint64_t last_other_hash = 0;
  };
  absl::flat_hash_map<uint32_t, Entry> names_;
};

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_NAMES_H_
