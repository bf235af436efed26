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

  // Index of `corner`, or −1.
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

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_CORNER_STORE_H_
