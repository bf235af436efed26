// LabelSet: a bijection between label strings (tags, letters) and dense ids
// 0..size()-1, assigned in insertion order so that ids are reproducible from
// the order labels are first seen.
//
// Thread-safety: const methods are safe to call concurrently; Add is not.

#ifndef CHAINTAG_CORPORA_LABEL_SET_H_
#define CHAINTAG_CORPORA_LABEL_SET_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace chaintag {

class LabelSet {
 public:
  LabelSet() = default;
  // Adds `names` in order (duplicates keep their first id).
  explicit LabelSet(const std::vector<std::string>& names);

  // The id of `name`, adding it with id size() if it is new.
  int Add(absl::string_view name);
  // The id of `name`, or -1 when absent (e.g. a test tag unseen in training).
  int Find(absl::string_view name) const;
  // Requires 0 <= id < size().
  const std::string& Name(int id) const;
  int size() const { return static_cast<int>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, int> ids_;
};

}  // namespace chaintag

#endif  // CHAINTAG_CORPORA_LABEL_SET_H_
