// SumTree: sampling a block with probability proportional to a non-negative
// weight, O(log n) per draw and per weight change (gap sampling, Osokin et
// al. 2016). The reference code draws with an O(n) cumulative sum; this is
// the same distribution.
//
// A change recomputes the ancestors' sums from their children instead of
// adding deltas, so no rounding drift accumulates over millions of updates.
//
// Thread-safety: not thread-safe; one owner.

#ifndef CHAINTAG_SOLVERS_SUM_TREE_H_
#define CHAINTAG_SOLVERS_SUM_TREE_H_

#include <vector>

namespace chaintag {

class SumTree {
 public:
  // n leaves, all of weight 0.
  explicit SumTree(int n);

  int size() const { return n_; }
  // Negative weights (and NaN) are stored as 0.
  void Set(int i, double weight);
  double Get(int i) const { return nodes_[leaves_ + i]; }
  double Total() const { return nodes_[1]; }
  // The leaf i with Σ_{j<i} w_j ≤ u·Total() < Σ_{j≤i} w_j, for u in [0, 1);
  // never a zero-weight leaf. Requires Total() > 0.
  int Sample(double u) const;

 private:
  int n_;
  int leaves_;  // a power of two ≥ n; leaf i is node leaves_ + i
  std::vector<double> nodes_;  // 1-based heap layout; nodes_[1] is the root
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SUM_TREE_H_
