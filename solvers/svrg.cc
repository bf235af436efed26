#include "solvers/svrg.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "solvers/parallel.h"

namespace chaintag {

SvrgEpoch::SvrgEpoch(const Problem& problem)
    : problem_(problem),
      n_(problem.NumExamples()),
      dim_(problem.Dim()),
      state_offset_(BlockStateOffsets(problem)) {}

void SvrgEpoch::FullGradient(const SvrgEpochSettings& settings,
                             const double* snapshot) {
  snapshot_states_.resize(state_offset_[n_]);
  ParallelFor(n_, std::max(1, settings.num_threads), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      problem_.SmoothedOracle(i, snapshot, settings.smoothing,
                              snapshot_states_.data() + state_offset_[i]);
    }
  });
  // Summed in index order, so the result does not depend on the threads.
  fixed_point_.assign(dim_, 0.0);
  for (int i = 0; i < n_; ++i) {
    problem_.AddCornerMinusState(i, problem_.GoldCorner(i),
                                 snapshot_states_.data() + state_offset_[i],
                                 1.0 / n_, fixed_point_.data());
  }
}

void SvrgEpoch::CatchUp(int64_t begin, int64_t length, int32_t step) {
  const int32_t from = last_step_[begin];
  const int32_t skipped = step - from;
  // w_{from} itself (unless it is w_0), then w_{from+1} … w_{step−1};
  // w_{step} stays current.
  const double own = from >= 1 ? 1.0 : 0.0;
  const double repeats = skipped - 1;
  const double partial = partial_sums_[skipped - 1];
  const double power = powers_[skipped];
  double* w = w_.data() + begin;
  double* sum = sum_.data() + begin;
  const double* fixed_point = fixed_point_.data() + begin;
  int32_t* last = last_step_.data() + begin;
  for (int64_t k = 0; k < length; ++k) {
    const double deviation = w[k] - fixed_point[k];
    sum[k] += own * w[k] + repeats * fixed_point[k] + deviation * partial;
    w[k] = fixed_point[k] + power * deviation;
    last[k] = step;
  }
}

int64_t SvrgEpoch::Run(const SvrgEpochSettings& settings,
                       const std::vector<double>& start, const double* center,
                       SolverRandom* random, std::vector<double>* average,
                       std::vector<double>* last) {
  const double eta = settings.learning_rate;
  const double strength = settings.lambda + settings.kappa;
  const double decay = 1.0 - eta * strength;  // a
  // a^m and Σ_{k=1}^{m} a^k for every gap m an epoch can skip, by the same
  // repeated multiplication the dense steps perform.
  powers_.resize(n_ + 1);
  partial_sums_.resize(n_ + 1);
  powers_[0] = 1;
  partial_sums_[0] = 0;
  for (int m = 1; m <= n_; ++m) {
    powers_[m] = powers_[m - 1] * decay;
    partial_sums_[m] = partial_sums_[m - 1] + powers_[m];
  }

  const absl::Time begin = absl::Now();
  FullGradient(settings, start.data());
  // ḡ becomes c_j = (κ z_j − ḡ_j)/(λ + κ) in place.
  const bool proximal = settings.kappa > 0 && center != nullptr;
  for (int64_t j = 0; j < dim_; ++j) {
    fixed_point_[j] =
        ((proximal ? settings.kappa * center[j] : 0.0) - fixed_point_[j]) /
        strength;
  }
  const absl::Time steps_begin = absl::Now();
  full_gradient_seconds_ = absl::ToDoubleSeconds(steps_begin - begin);
  w_ = start;
  sum_.assign(dim_, 0.0);
  if (settings.lazy_updates) last_step_.assign(dim_, 0);
  const double step_constant = 1.0 - decay;  // (1 − a), times c_j

  for (int32_t t = 0; t < n_; ++t) {
    const int i = static_cast<int>(random->Uniform(n_));
    if (settings.lazy_updates) {
      ranges_.clear();
      problem_.TouchedRanges(i, &ranges_);
      for (const CoordinateRange& range : ranges_) {
        if (last_step_[range.begin] < t) CatchUp(range.begin, range.length, t);
      }
    }
    step_state_.resize(state_offset_[i + 1] - state_offset_[i]);
    problem_.SmoothedOracle(i, w_.data(), settings.smoothing,
                            step_state_.data());
    // The dense part of the step at w_t, on the coordinates it must reach
    // now (lazy: a catch-up by one step) or on all of them.
    if (settings.lazy_updates) {
      for (const CoordinateRange& range : ranges_) {
        // A repeated range has already moved on.
        if (last_step_[range.begin] == t) {
          CatchUp(range.begin, range.length, t + 1);
        }
      }
    } else {
      for (int64_t j = 0; j < dim_; ++j) {
        if (t >= 1) sum_[j] += w_[j];
        w_[j] = decay * w_[j] + step_constant * fixed_point_[j];
      }
    }
    // −η(∇f_i(w_t) − ∇f_i(w̃)) = η(v(s_w) − v(s_w̃)) = η·v(s_w − s_w̃ + s_gold)
    // (the state map is affine), one sparse update.
    const double* snapshot_state = snapshot_states_.data() + state_offset_[i];
    for (size_t k = 0; k < step_state_.size(); ++k) {
      step_state_[k] -= snapshot_state[k];
    }
    const Corner& gold = problem_.GoldCorner(i);
    problem_.AddCornerToState(i, gold, 1.0, step_state_.data());
    problem_.AddCornerMinusState(i, gold, step_state_.data(), -eta, w_.data());
  }

  steps_seconds_ = absl::ToDoubleSeconds(absl::Now() - steps_begin);
  // Every coordinate up to w_n, which joins the sum.
  for (int64_t j = 0; j < dim_; ++j) {
    if (settings.lazy_updates && last_step_[j] < n_) CatchUp(j, 1, n_);
    sum_[j] += w_[j];
  }
  if (average != nullptr) {
    average->resize(dim_);
    const double inverse = 1.0 / n_;
    for (int64_t j = 0; j < dim_; ++j) (*average)[j] = sum_[j] * inverse;
  }
  if (last != nullptr) *last = w_;
  return 2 * static_cast<int64_t>(n_);
}

}  // namespace chaintag
