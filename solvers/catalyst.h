// Catalyst's outer loop (Lin, Mairal & Harchaoui 2018) at a constant κ: the
// extrapolation weights that casimir_svrg and sag share.
//
// Epoch k minimises F(w) + κ/2‖w − z_{k−1}‖² from a warm start, giving w_k;
// then z_k = w_k + β_k(w_k − w_{k−1}) with
//
//   α_k² = (1 − α_k)α_{k−1}² + qα_k,  q = λ/(λ + κ),  α_0 = √q,
//   β_k = α_{k−1}(1 − α_{k−1})/(α_{k−1}² + α_k).
//
// From α_0 = √q the α stay at √q, so β_k = (1 − √q)/(1 + √q) throughout.
//
// Thread-safety: pure functions.
//
//   const double beta = CatalystMomentum(lambda / (lambda + kappa));

#ifndef CHAINTAG_SOLVERS_CATALYST_H_
#define CHAINTAG_SOLVERS_CATALYST_H_

#include <cmath>

namespace chaintag {

// The next α: the root in (0, 1] of α² = (1 − α)α_prev² + qα.
inline double NextCatalystAlpha(double alpha_prev, double q) {
  const double a2 = alpha_prev * alpha_prev;
  const double b = a2 - q;
  return 0.5 * (-b + std::sqrt(b * b + 4 * a2));
}

// β_k from α_{k−1} and α_k.
inline double CatalystBeta(double alpha_prev, double alpha) {
  return alpha_prev * (1 - alpha_prev) / (alpha_prev * alpha_prev + alpha);
}

// β at the fixed point α = √q.
inline double CatalystMomentum(double q) {
  const double alpha = std::sqrt(q);
  return CatalystBeta(alpha, alpha);
}

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_CATALYST_H_
