// What the BCFW family's files (bcfw.cc, the bcfw_*.cc beside it and
// bcfw_shared.h) share; nothing outside them should include this header.
//
// Thread-safety: constants and pure functions.

#ifndef CHAINTAG_SOLVERS_BCFW_INTERNAL_H_
#define CHAINTAG_SOLVERS_BCFW_INTERNAL_H_

#include <algorithm>
#include <limits>

namespace chaintag {
namespace bcfw_internal {

// An unvisited block's gap estimate.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The γ ∈ [0, gamma_max] that maximises the dual improvement along a
// direction with linear coefficient `slope` and curvature `curvature` per
// unit γ² (see Improvement in bcfw_moves.cc): slope/curvature, clipped.
inline double LineSearch(double slope, double curvature, double gamma_max) {
  if (!(curvature > 0)) return slope > 0 ? gamma_max : 0;
  return std::clamp(slope / curvature, 0.0, gamma_max);
}

}  // namespace bcfw_internal
}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_BCFW_INTERNAL_H_
