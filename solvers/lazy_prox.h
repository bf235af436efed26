// The repeated proximal step of the stochastic solvers, in closed form.
//
// Between two steps that touch coordinate j, a stochastic solver with an
// elastic net λ/2‖w‖² + ℓ1‖w‖₁ applies the same scalar map to w_j at every
// step:
//
//   M(x) = S_θ(a·x + b),   a = 1 − ηλ,  b = (1 − a)·c_j,  θ = η·ℓ1,
//
// with S_θ the soft threshold and c_j the point the smooth part pulls
// towards (a constant until the coordinate is touched again). M^k is
// piecewise affine with at most three pieces (positive, zero, negative), so
// k skipped steps cost O(1) and not O(k): on each piece the iterate follows
// x_m = p + a^m·(x − p), p the piece's fixed point, until it reaches zero.
// With θ = 0 this is the plain affine catch-up a^k·x + (1 − a^k)·c.
//
// Thread-safety: a LazyProx is read-only after Reset; share it freely.
//
//   LazyProx prox;
//   prox.Reset(/*rate=*/eta * lambda, /*threshold=*/eta * l1, n);
//   w[j] = prox.Apply(w[j], fixed_point[j], skipped_steps);

#ifndef CHAINTAG_SOLVERS_LAZY_PROX_H_
#define CHAINTAG_SOLVERS_LAZY_PROX_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "solvers/problem.h"

namespace chaintag {

class LazyProx {
 public:
  // rate 1 − a = ηλ in (0, 1); threshold θ ≥ 0; powers tabulated for
  // k ≤ max_steps.
  void Reset(double rate, double threshold, int max_steps);

  double decay() const { return decay_; }
  double threshold() const { return threshold_; }
  // a^k and 1 − a^k for k ≤ max_steps.
  double Power(int k) const { return powers_[k]; }
  double OneMinusPower(int k) const { return one_minus_powers_[k]; }

  // M^k(x) for the fixed point c (0 ≤ k ≤ max_steps).
  double Apply(double x, double c, int k) const {
    if (threshold_ == 0) return powers_[k] * x + one_minus_powers_[k] * c;
    // Most weights of an ℓ1 model sit at zero with a pull too weak to move
    // them: they stay there, whatever k.
    if (x == 0 && std::fabs((1 - decay_) * c) <= threshold_) return 0;
    return ApplyThresholded(x, c, k);
  }

  // Brings the coordinates of ranges[0, count) to step `step`: the ranges
  // are parts of a partition into slots of `granularity` coordinates, and
  // last_step[k] is the step slot k stands at (a range already there, as a
  // repeated one, is skipped). `fixed_point` holds each coordinate's c.
  // The rows are scattered, so ranges a dozen ahead are prefetched.
  void CatchUp(const CoordinateRange* ranges, size_t count, int32_t step,
               int64_t granularity, const double* fixed_point, double* w,
               int32_t* last_step) const;

  // Brings every coordinate of slots [first_slot, end_slot) to step `step`
  // (an epoch's end): slot k's coordinates stand at last_step[k], which is
  // left as it is.
  void CatchUpSlots(int64_t first_slot, int64_t end_slot, int32_t step,
                    int64_t granularity, const double* fixed_point, double* w,
                    const int32_t* last_step) const;

  // One step, M(x): the reference Apply must match.
  double Step(double x, double c) const;

 private:
  double ApplyThresholded(double x, double c, int k) const;
  // How many steps of x_m = p + a^m (x − p) keep the sign of x − p's
  // target side: the largest m ≤ k with |a^m (x − p)| > |p|, for
  // sign(x) ≠ sign(p) (the iterate shrinks towards p through zero).
  int StepsBeforeZero(double x, double p, int k) const;

  double decay_ = 1;
  double threshold_ = 0;
  std::vector<double> powers_;
  std::vector<double> one_minus_powers_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_LAZY_PROX_H_
