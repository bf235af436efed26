#include "corpora/label_set.h"

#include <cassert>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace chaintag {

LabelSet::LabelSet(const std::vector<std::string>& names) {
  for (const std::string& name : names) Add(name);
}

int LabelSet::Add(absl::string_view name) {
  const auto [it, inserted] = ids_.try_emplace(name, size());
  if (inserted) names_.emplace_back(name);
  return it->second;
}

int LabelSet::Find(absl::string_view name) const {
  const auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

const std::string& LabelSet::Name(int id) const {
  assert(id >= 0 && id < size());
  return names_[id];
}

}  // namespace chaintag
