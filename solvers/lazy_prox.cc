#include "solvers/lazy_prox.h"

#include <algorithm>
#include <cmath>

namespace chaintag {
namespace {

// Up to this many skipped steps are applied one by one.
constexpr int kStepsOneByOne = 8;

// How many ranges ahead a catch-up prefetches.
constexpr size_t kPrefetchAhead = 12;

}  // namespace

void LazyProx::Reset(double rate, double threshold, int max_steps) {
  decay_ = 1.0 - rate;
  threshold_ = threshold;
  powers_.resize(max_steps + 1);
  one_minus_powers_.resize(max_steps + 1);
  powers_[0] = 1;
  one_minus_powers_[0] = 0;
  // 1 − a^m summed as Σ_{k<m} a^k (1 − a): accurate when a is close to 1.
  for (int m = 1; m <= max_steps; ++m) {
    powers_[m] = powers_[m - 1] * decay_;
    one_minus_powers_[m] = one_minus_powers_[m - 1] + powers_[m - 1] * rate;
  }
}

void LazyProx::CatchUp(const CoordinateRange* ranges, size_t count,
                       int32_t step, int64_t granularity,
                       const double* fixed_point, double* w,
                       int32_t* last_step) const {
  for (size_t r = 0; r < count; ++r) {
    if (r + kPrefetchAhead < count) {
      const CoordinateRange& ahead = ranges[r + kPrefetchAhead];
      __builtin_prefetch(w + ahead.begin, 1);
      __builtin_prefetch(w + ahead.begin + ahead.length - 1, 1);
      __builtin_prefetch(fixed_point + ahead.begin);
      __builtin_prefetch(fixed_point + ahead.begin + ahead.length - 1);
      __builtin_prefetch(last_step + ahead.begin / granularity, 1);
    }
    const CoordinateRange& range = ranges[r];
    int32_t* slot = last_step + range.begin / granularity;
    const int32_t skipped = step - *slot;
    if (skipped == 0) continue;
    const int64_t end = range.begin + range.length;
    if (threshold_ == 0) {
      const double power = powers_[skipped];
      const double rest = one_minus_powers_[skipped];
      for (int64_t j = range.begin; j < end; ++j) {
        w[j] = power * w[j] + rest * fixed_point[j];
      }
    } else {
      for (int64_t j = range.begin; j < end; ++j) {
        w[j] = Apply(w[j], fixed_point[j], skipped);
      }
    }
    std::fill(slot, slot + range.length / granularity, step);
  }
}

void LazyProx::CatchUpSlots(int64_t first_slot, int64_t end_slot, int32_t step,
                            int64_t granularity, const double* fixed_point,
                            double* w, const int32_t* last_step) const {
  for (int64_t k = first_slot; k < end_slot; ++k) {
    const int32_t skipped = step - last_step[k];
    if (skipped == 0) continue;
    const int64_t end = (k + 1) * granularity;
    for (int64_t j = k * granularity; j < end; ++j) {
      w[j] = Apply(w[j], fixed_point[j], skipped);
    }
  }
}

double LazyProx::Step(double x, double c) const {
  const double y = decay_ * x + (1 - decay_) * c;
  if (y > threshold_) return y - threshold_;
  if (y < -threshold_) return y + threshold_;
  return 0;
}

int LazyProx::StepsBeforeZero(double x, double p, int k) const {
  const double distance = std::fabs(x - p);
  const double limit = std::fabs(p);
  // a^m·distance > limit ⟺ m < log(limit/distance)/log(a).
  const double bound = std::log(limit / distance) / std::log(decay_);
  int m = bound >= k ? k : std::max(1, static_cast<int>(std::ceil(bound)) - 1);
  while (m < k && powers_[m + 1] * distance > limit) ++m;
  while (m > 1 && powers_[m] * distance <= limit) --m;
  return m;
}

double LazyProx::ApplyThresholded(double x, double c, int k) const {
  // A few steps cost less one by one than the closed form's logarithm.
  if (k <= kStepsOneByOne) {
    for (int m = 0; m < k; ++m) x = Step(x, c);
    return x;
  }
  const double b = (1 - decay_) * c;
  const double shift = threshold_ / (1 - decay_);
  while (k > 0) {
    const double y = decay_ * x + b;
    if (y > threshold_ || y < -threshold_) {
      // On the positive (negative) piece the map is affine with fixed point
      // p = c ∓ θ/(1 − a), valid while the iterate keeps its sign.
      const bool positive = y > threshold_;
      const double p = positive ? c - shift : c + shift;
      if (positive ? p >= 0 : p <= 0) return p + powers_[k] * (x - p);
      const int m = StepsBeforeZero(x, p, k);
      x = p + powers_[m] * (x - p);
      k -= m;
      continue;
    }
    x = 0;
    --k;
    // At zero the next argument is b: within the threshold it stays there.
    if (b <= threshold_ && b >= -threshold_) return 0;
  }
  return x;
}

}  // namespace chaintag
