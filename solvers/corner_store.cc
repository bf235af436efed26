#include "solvers/corner_store.h"

namespace chaintag {

int CornerStore::Find(const Corner& corner) const {
  for (int k = 0; k < size(); ++k) {
    if (entries_[k].corner == corner) return k;
  }
  return -1;
}

int CornerStore::Add(const Corner& corner, double loss, double alpha,
                     const std::vector<double>* dots) {
  StoredCorner entry;
  entry.corner = corner;
  entry.loss = loss;
  entry.alpha = alpha;
  if (dots != nullptr) {
    for (int k = 0; k < size(); ++k) entries_[k].dots.push_back((*dots)[k]);
    entry.dots = *dots;
  }
  entries_.push_back(std::move(entry));
  return size() - 1;
}

void CornerStore::Remove(int k) {
  entries_.erase(entries_.begin() + k);
  for (StoredCorner& entry : entries_) {
    if (!entry.dots.empty()) entry.dots.erase(entry.dots.begin() + k);
  }
}

void CornerStore::RemoveInactive() {
  for (int k = size() - 1; k >= 0; --k) {
    if (entries_[k].alpha == 0) Remove(k);
  }
}

int CornerStore::NumActive() const {
  int active = 0;
  for (const StoredCorner& entry : entries_) active += entry.alpha > 0;
  return active;
}

double CornerStore::AlphaSum() const {
  double sum = 0;
  for (const StoredCorner& entry : entries_) sum += entry.alpha;
  return sum;
}

}  // namespace chaintag
