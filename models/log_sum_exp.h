// log Σ_i exp(x_i) without overflow, for the forward–backward passes
// (models/smoothing.h, models/second_order.h).
//
// Thread-safety: a pure function.

#ifndef CHAINTAG_MODELS_LOG_SUM_EXP_H_
#define CHAINTAG_MODELS_LOG_SUM_EXP_H_

#include <algorithm>
#include <cmath>
#include <limits>

namespace chaintag {

// −∞ when every x_i is −∞ (or n is 0).
inline double LogSumExp(const double* x, int n) {
  double top = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) top = std::max(top, x[i]);
  // All −∞ would give −∞ − (−∞) = NaN below.
  if (top == -std::numeric_limits<double>::infinity()) return top;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(x[i] - top);
  return top + std::log(sum);
}

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_LOG_SUM_EXP_H_
