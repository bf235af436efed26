// BoxConstraints: BCFW with box constraints on coordinates of w (Osokin et
// al. 2016, App. H; solver.bcfw.box). The boxed coordinates of w hold the
// truncation of v = A*alpha to [lower, upper], whose own values are kept
// here; the dual gains the term lambda * sum_boxed (v_j - w_j) * w_j.
//
//   BoxConstraints boxes;
//   RETURN_IF_ERROR(boxes.Initialize(config, dim, w.data()));
//   boxes.Untruncate(w.data());  // before a step: w holds v again
//   ...the step adds to w...
//   boxes.Truncate(w.data());    // after it: v kept, w clamped
//   double dual = ell - boxes.Term(lambda, /*averaged=*/false) - ...;
//
// Thread-safety: one thread at a time.

#ifndef CHAINTAG_SOLVERS_BOX_CONSTRAINTS_H_
#define CHAINTAG_SOLVERS_BOX_CONSTRAINTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

class BoxConstraints {
 public:
  // Reads config.bcfw().box (refusing boxes that are empty, outside
  // [0, dim), overlap or have lower > upper) and sets each boxed w_j to
  // the truncation of v_j = 0.
  absl::Status Initialize(const SolverConfig& config, int64_t dim, double* w);

  bool empty() const { return index_.empty(); }
  // The boxed coordinates and their untruncated values v (checkpoints).
  const std::vector<int64_t>& index() const { return index_; }
  std::vector<double>* mutable_v() { return &v_; }
  const std::vector<double>& v() const { return v_; }

  // w_j <- v_j on the boxed coordinates (a step moves v).
  void Untruncate(double* w) const;
  // v_j <- w_j, w_j <- clamp(v_j) on the boxed coordinates.
  void Truncate(double* w);
  // The average's v to zero (the average of no step is w itself), then
  // Truncate for the weighted average, whose v is kept apart.
  void ClearAverage();
  void TruncateAverage(double* average);
  // lambda * sum_boxed (v_j - w_j) * w_j with w_j = clamp(v_j), at the
  // iterate or at the average (after TruncateAverage); 0 without boxes.
  double Term(double lambda, bool averaged) const;

 private:
  std::vector<int64_t> index_;
  std::vector<double> lower_, upper_, v_;
  std::vector<double> v_average_;  // valid after TruncateAverage
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BOX_CONSTRAINTS_H_
