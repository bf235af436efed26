#include "solvers/sum_tree.h"

namespace chaintag {

SumTree::SumTree(int n) : n_(n), leaves_(1) {
  while (leaves_ < n) leaves_ *= 2;
  nodes_.assign(2 * leaves_, 0.0);
}

void SumTree::Set(int i, double weight) {
  // `!(weight > 0)` also catches NaN.
  int node = leaves_ + i;
  nodes_[node] = !(weight > 0) ? 0.0 : weight;
  for (node /= 2; node >= 1; node /= 2) {
    nodes_[node] = nodes_[2 * node] + nodes_[2 * node + 1];
  }
}

int SumTree::Sample(double u) const {
  double target = u * nodes_[1];
  int node = 1;
  while (node < leaves_) {
    const double left = nodes_[2 * node];
    // Go right when the target lies past the left sum, or when the left
    // subtree is empty (rounding can put the target exactly on a boundary).
    if (target >= left && nodes_[2 * node + 1] > 0) {
      target -= left;
      node = 2 * node + 1;
    } else if (left > 0) {
      node = 2 * node;
    } else {
      node = 2 * node + 1;
    }
  }
  return node - leaves_;
}

}  // namespace chaintag
