// CornerStore: the corners one block keeps between visits, each with its
// loss and dual weight α — the active set of pairwise/away/fully-corrective
// steps and the gap-based cache (Osokin et al. 2016, §3.3). Corners are
// labelings, never ψ vectors, so a block's store costs O(|store|·T).
//
// Entries keep their insertion order (ties among cached corners go to the
// oldest, as in the reference code's first-slot rule). Optionally each entry
// keeps its inner products ⟨ψ_a, ψ_b⟩ with the others, for solvers that solve
// the block's subproblem over its active set.
//
// Thread-safety: not thread-safe; one owner.

#ifndef CHAINTAG_SOLVERS_CORNER_STORE_H_
#define CHAINTAG_SOLVERS_CORNER_STORE_H_

#include <algorithm>
#include <vector>

#include "solvers/problem.h"

namespace chaintag {

struct StoredCorner {
  Corner corner;
  double loss = 0;   // L_i(corner), as the problem reports it
  double alpha = 0;  // dual weight; the α of a block sum to one
  // dots[k] = ⟨ψ_i(corner), ψ_i(entry k's corner)⟩, when kept.
  std::vector<double> dots;
};

class CornerStore {
 public:
  int size() const { return static_cast<int>(entries_.size()); }
  const StoredCorner& entry(int k) const { return entries_[k]; }
  StoredCorner& entry(int k) { return entries_[k]; }
  const std::vector<StoredCorner>& entries() const { return entries_; }

  // Index of `corner`, or -1.
  int Find(const Corner& corner) const;
  // Appends a corner not yet stored; returns its index. With `dots`
  // (its inner products with every stored corner, then with itself), the
  // entries' dots rows are extended.
  int Add(const Corner& corner, double loss, double alpha,
          const std::vector<double>* dots = nullptr);
  // Removes entry k, keeping the others' order (and their dots rows).
  void Remove(int k);
  // Removes every entry with α == 0.
  void RemoveInactive();
  int NumActive() const;
  double AlphaSum() const;

 private:
  std::vector<StoredCorner> entries_;
};

// For stores of entries with `corner`, `alpha` and `dots` (StoredCorner,
// and MP-BCFW's planes), where v_i = Σ_k α_k ψ_i(y_k) and the mass
// 1 − Σ_k α_k rests on the gold labeling (ψ_i = 0):

// ⟨ψ_i(corner), ψ_i(y_k)⟩ for every entry k, then ‖ψ_i(corner)‖², from
// distances: ⟨a, b⟩ = (‖a‖² + ‖b‖² − ‖a − b‖²)/2 with ψ_i(gold) = 0.
template <typename Entry>
std::vector<double> CornerDots(const Problem& problem, int i,
                               const std::vector<Entry>& entries,
                               const Corner& corner) {
  const double norm =
      problem.CornerDistanceSquared(i, corner, problem.GoldCorner(i));
  std::vector<double> dots;
  dots.reserve(entries.size() + 1);
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& entry = entries[k];
    const double distance =
        problem.CornerDistanceSquared(i, corner, entry.corner);
    dots.push_back(0.5 * (norm + entry.dots[k] - distance));
  }
  dots.push_back(norm);
  return dots;
}

// ‖v_i − ψ_i(y_f)‖² = Σ_jk α_j α_k ⟨ψ_j − ψ_f, ψ_k − ψ_f⟩ over the entries
// and the gold labeling's rest: the terms of j = f or k = f vanish
// exactly, so a state near ψ_f loses nothing to cancellation. O(active²).
template <typename Entry>
double AlphaDistanceSquared(const std::vector<Entry>& entries, int f) {
  const std::vector<double>& f_dots = entries[f].dots;
  const double f_norm = f_dots[f];
  double rest = 1;
  double sum = 0;
  for (size_t j = 0; j < entries.size(); ++j) {
    const Entry& a = entries[j];
    if (a.alpha == 0) continue;
    rest -= a.alpha;
    if (static_cast<int>(j) == f) continue;
    double row = 0;
    for (size_t k = 0; k < entries.size(); ++k) {
      const double alpha = entries[k].alpha;
      if (alpha == 0 || static_cast<int>(k) == f) continue;
      row += alpha * (a.dots[k] - a.dots[f] - f_dots[k] + f_norm);
    }
    sum += a.alpha * row;
  }
  // The rest r on ψ_g = 0: ⟨ψ_j − ψ_f, ψ_g − ψ_f⟩ = ‖ψ_f‖² − ⟨ψ_j, ψ_f⟩,
  // twice for the cross terms, and r²‖ψ_f‖².
  if (rest > 0) {
    double cross = 0;
    for (size_t j = 0; j < entries.size(); ++j) {
      const Entry& a = entries[j];
      if (a.alpha == 0 || static_cast<int>(j) == f) continue;
      cross += a.alpha * (f_norm - a.dots[f]);
    }
    sum += 2 * rest * cross + rest * rest * f_norm;
  }
  return std::max(sum, 0.0);
}

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_CORNER_STORE_H_
