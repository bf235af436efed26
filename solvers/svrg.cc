#include "solvers/svrg.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/parallel.h"

namespace chaintag {

SvrgEpoch::SvrgEpoch(const Problem& problem)
    : problem_(problem),
      n_(problem.NumExamples()),
      dim_(problem.Dim()),
      state_offset_(BlockStateOffsets(problem)),
      granularity_(RangeGranularity(problem)) {}

void SvrgEpoch::FullGradient(const SvrgEpochSettings& settings,
                             const double* snapshot, bool certify) {
  snapshot_states_.resize(state_offset_[n_]);
  if (certify) {
    snapshot_losses_.resize(n_);
    snapshot_dots_.resize(n_);
  }
  ParallelFor(n_, std::max(1, settings.num_threads), [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      double* state = snapshot_states_.data() + state_offset_[i];
      if (certify) {
        snapshot_losses_[i] = problem_.SmoothedOracleWithStateDot(
            i, snapshot, settings.smoothing, state, &snapshot_dots_[i]);
      } else {
        problem_.SmoothedOracle(i, snapshot, settings.smoothing, state);
      }
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

DualityGap SvrgEpoch::Certify(const SvrgEpochSettings& settings,
                              const std::vector<double>& point) {
  FullGradient(settings, point.data(), /*certify=*/true);
  certified_point_.assign(point.begin(), point.end());
  certified_ = true;
  // fixed_point_ = -1/n sum_i v_i = -lambda w(q): D(q) needs ||w(q)||^2.
  double loss_sum = 0, dot_sum = 0;
  for (int i = 0; i < n_; ++i) {
    loss_sum += snapshot_losses_[i];
    dot_sum += snapshot_dots_[i];
  }
  return SmoothCertificate(point.data(), dim_, loss_sum, loss_sum + dot_sum, n_,
                           fixed_point_.data(), 1.0, settings.lambda,
                           /*l1=*/0);
}

int64_t SvrgEpoch::Run(const SvrgEpochSettings& settings,
                       const std::vector<double>& start, const double* center,
                       SolverRandom* random, std::vector<double>* average,
                       std::vector<double>* last) {
  const double eta = settings.learning_rate;
  const double strength = settings.lambda + settings.kappa;
  const double decay = 1.0 - eta * strength;  // a
  const bool lazy = settings.lazy_updates && decay != 0;
  if (lazy) {
    // a^m and 1 − a^m for every gap m an epoch can skip, by the same
    // repeated multiplication the dense steps perform.
    prox_.Reset(eta * strength, /*threshold=*/0, n_);
  }

  const absl::Time begin = absl::Now();
  if (!certified_ || start.size() != certified_point_.size() ||
      !std::equal(start.begin(), start.end(), certified_point_.begin())) {
    FullGradient(settings, start.data(), /*certify=*/false);
  }
  certified_ = false;  // the steps below change fixed_point_
  // ḡ becomes c_j = (κ z_j − ḡ_j)/(λ + κ) in place.
  const bool proximal = settings.kappa > 0 && center != nullptr;
  for (int64_t j = 0; j < dim_; ++j) {
    fixed_point_[j] =
        ((proximal ? settings.kappa * center[j] : 0.0) - fixed_point_[j]) /
        strength;
  }
  const absl::Time steps_begin = absl::Now();
  full_gradient_seconds_ = absl::ToDoubleSeconds(steps_begin - begin);
  w_.assign(start.begin(), start.end());
  if (lazy) {
    LazySteps(settings, random);
  } else {
    DenseSteps(settings, random);
  }
  const absl::Time finish_begin = absl::Now();
  steps_seconds_ = absl::ToDoubleSeconds(finish_begin - steps_begin);
  if (lazy) {
    LazyFinish(settings, start.data(), average, last != nullptr);
  } else if (average != nullptr) {
    average->resize(dim_);
    const double inverse = 1.0 / n_;
    for (int64_t j = 0; j < dim_; ++j) (*average)[j] = sum_[j] * inverse;
  }
  if (last != nullptr) last->assign(w_.begin(), w_.end());
  finish_seconds_ = absl::ToDoubleSeconds(absl::Now() - finish_begin);
  return 2 * static_cast<int64_t>(n_);
}

void SvrgEpoch::DenseSteps(const SvrgEpochSettings& settings,
                           SolverRandom* random) {
  const double eta = settings.learning_rate;
  const double decay = 1.0 - eta * (settings.lambda + settings.kappa);
  const double step_constant = 1.0 - decay;  // (1 − a), times c_j
  sum_.assign(dim_, 0.0);
  for (int32_t t = 0; t < n_; ++t) {
    const int i = static_cast<int>(random->Uniform(n_));
    step_state_.resize(state_offset_[i + 1] - state_offset_[i]);
    problem_.SmoothedOracle(i, w_.data(), settings.smoothing,
                            step_state_.data());
    for (int64_t j = 0; j < dim_; ++j) {
      if (t >= 1) sum_[j] += w_[j];
      w_[j] = decay * w_[j] + step_constant * fixed_point_[j];
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
  for (int64_t j = 0; j < dim_; ++j) sum_[j] += w_[j];
}

void SvrgEpoch::LazySteps(const SvrgEpochSettings& settings,
                          SolverRandom* random) {
  const double eta = settings.learning_rate;
  const double decay = 1.0 - eta * (settings.lambda + settings.kappa);
  const double folded_rate = -eta / decay;  // the sparse part of u
  last_step_.assign(dim_ / granularity_, 0);
  weighted_states_.resize(state_offset_[n_]);
  sampled_.assign(n_, 0);
  double* w = w_.data();
  const double* fixed_point = fixed_point_.data();
  int32_t* last_step = last_step_.data();
  // ω_t = Σ_{k=0}^{n−1−t} a^k, from t = n − 1 down.
  step_weights_.resize(n_);
  double weight = 0;
  for (int32_t t = n_ - 1; t >= 0; --t) {
    weight += prox_.Power(n_ - 1 - t);
    step_weights_[t] = weight;
  }

  for (int32_t t = 0; t < n_; ++t) {
    const int i = static_cast<int>(random->Uniform(n_));
    ranges_.clear();
    problem_.TouchedRanges(i, &ranges_);
    // Bring the ranges to w_t; a repeated range is already there.
    prox_.CatchUp(ranges_.data(), ranges_.size(), t, granularity_, fixed_point,
                  w, last_step);
    const int64_t size = state_offset_[i + 1] - state_offset_[i];
    step_state_.resize(size);
    problem_.SmoothedOracle(i, w, settings.smoothing, step_state_.data());
    // s_t − s̃_i, into the block's weighted sum, then the sparse part of the
    // step η·v(s_t − s̃_i + s_gold) (the state map is affine) folded into u.
    const double* snapshot_state = snapshot_states_.data() + state_offset_[i];
    double* block_sum = weighted_states_.data() + state_offset_[i];
    const double omega = step_weights_[t];
    if (sampled_[i]) {
      for (int64_t k = 0; k < size; ++k) {
        step_state_[k] -= snapshot_state[k];
        block_sum[k] += omega * step_state_[k];
      }
    } else {
      sampled_[i] = 1;
      for (int64_t k = 0; k < size; ++k) {
        step_state_[k] -= snapshot_state[k];
        block_sum[k] = omega * step_state_[k];
      }
    }
    const Corner& gold = problem_.GoldCorner(i);
    problem_.AddCornerToState(i, gold, 1.0, step_state_.data());
    problem_.AddCornerMinusState(i, gold, step_state_.data(), folded_rate, w);
  }
}

void SvrgEpoch::LazyFinish(const SvrgEpochSettings& settings,
                           const double* start, std::vector<double>* average,
                           bool finish_w) {
  double* w = w_.data();
  double* fixed_point = fixed_point_.data();
  const int32_t* last_step = last_step_.data();
  if (finish_w) {
    prox_.CatchUpSlots(0, dim_ / granularity_, n_, granularity_, fixed_point, w,
                       last_step);
  }
  if (average == nullptr) return;
  // n·w̄ = P·w_0 + (n − P)·(c − η/(n − P)·v(Σ_i sums_i)), P = Σ_{k=1}^{n} a^k:
  // the blocks' sums go into c in place (this epoch's last use of it; its
  // pages are huge, and the rows are hit at random), then one pass writes
  // the average.
  double p = 0, n_minus_p = 0;
  for (int k = 1; k <= n_; ++k) {
    p += prox_.Power(k);
    n_minus_p += prox_.OneMinusPower(k);
  }
  const double rate = -settings.learning_rate / n_minus_p;
  for (int i = 0; i < n_; ++i) {
    if (!sampled_[i]) continue;
    double* block_sum = weighted_states_.data() + state_offset_[i];
    const Corner& gold = problem_.GoldCorner(i);
    problem_.AddCornerToState(i, gold, 1.0, block_sum);
    problem_.AddCornerMinusState(i, gold, block_sum, rate, fixed_point);
  }
  const double inverse = 1.0 / n_;
  const double start_weight = p * inverse;
  const double fixed_point_weight = n_minus_p * inverse;
  average->resize(dim_);
  double* out = average->data();
  for (int64_t j = 0; j < dim_; ++j) {
    out[j] = start_weight * start[j] + fixed_point_weight * fixed_point[j];
  }
}

}  // namespace chaintag
