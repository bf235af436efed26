#include "solvers/duality_gap.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "base/parallel.h"

namespace chaintag {

double SquaredNorm(const double* w, int64_t dim) {
  double sum = 0;
  for (int64_t j = 0; j < dim; ++j) sum += w[j] * w[j];
  return sum;
}

namespace {

// max over s in [0, 1] of s·a − Σ_j max(s·m_j − ℓ1, 0)²/(2λ), for the
// magnitudes m_j > ℓ1 (the others add nothing for s ≤ 1). The function is
// concave; its slope a − Σ_j m_j·max(s·m_j − ℓ1, 0)/λ is found to change
// sign by bisection. A magnitude's term is active (s·m_j > ℓ1) from
// s = ℓ1/m_j on: once that point leaves the bracket the term is active or
// not throughout it, and only the magnitudes still undecided are scanned
// again, so the bisection costs a few scans of them rather than one a step.
double BestScaledDual(double a, std::vector<double>* magnitudes, double lambda,
                      double l1) {
  if (a <= 0) return 0;  // D(0) = 0: the losses are non-negative
  std::vector<double>& m = *magnitudes;
  // Σ m_j and Σ m_j² of the terms active over the whole bracket; those of
  // [begin, end) are undecided, those after end inactive.
  double active_sum = 0, active_squares = 0;
  size_t begin = 0, end = m.size();
  auto slope = [&](double s) {
    double sum = active_sum, squares = active_squares;
    for (size_t j = begin; j < end; ++j) {
      if (s * m[j] - l1 > 0) {
        sum += m[j];
        squares += m[j] * m[j];
      }
    }
    return a - (s * squares - l1 * sum) / lambda;
  };
  double s = 1;
  if (slope(1) < 0) {
    double low = 0, high = 1;
    for (int step = 0; step < 40 && begin < end; ++step) {
      const double middle = 0.5 * (low + high);
      if (slope(middle) < 0) {
        high = middle;
        end = std::partition(m.begin() + begin, m.begin() + end,
                             [&](double x) { return high * x - l1 > 0; }) -
              m.begin();
      } else {
        low = middle;
        const size_t first = begin;
        begin = std::partition(m.begin() + begin, m.begin() + end,
                               [&](double x) { return low * x - l1 > 0; }) -
                m.begin();
        for (size_t j = first; j < begin; ++j) {
          active_sum += m[j];
          active_squares += m[j] * m[j];
        }
      }
    }
    s = low;
    // Every term decided: the slope is linear over the bracket, and its
    // root there is the maximiser.
    if (begin == end && active_squares > 0) {
      s = std::clamp((a * lambda + l1 * active_sum) / active_squares, low,
                     high);
    }
  }
  double conjugate = 0;
  for (double x : m) {
    const double excess = s * x - l1;
    if (excess > 0) conjugate += excess * excess;
  }
  return s * a - conjugate / (2 * lambda);
}

}  // namespace

DualityGap SmoothCertificate(const double* w, int64_t dim, double loss_sum,
                             double term_sum, int n, const double* gradient,
                             double gradient_scale, double lambda, double l1) {
  double absolute_sum = 0, squares = 0;
  const double scale = std::fabs(gradient_scale);
  // |ḡ_j| > ℓ1, with ℓ1 > 0: counted first, so that the vector is
  // allocated once at its size, not grown by doubling to up to twice dim
  // (three dim-sized buffers at once while it grows).
  std::vector<double> magnitudes;
  if (l1 > 0) {
    int64_t count = 0;
    for (int64_t j = 0; j < dim; ++j) {
      count += scale * std::fabs(gradient[j]) > l1;
    }
    magnitudes.reserve(count);
  }
  for (int64_t j = 0; j < dim; ++j) {
    absolute_sum += std::fabs(w[j]);
    const double magnitude = scale * std::fabs(gradient[j]);
    if (l1 == 0) {
      squares += magnitude * magnitude;
    } else if (magnitude > l1) {
      magnitudes.push_back(magnitude);
    }
  }
  DualityGap result;
  result.primal =
      loss_sum / n + 0.5 * lambda * SquaredNorm(w, dim) + l1 * absolute_sum;
  const double a = term_sum / n;
  if (l1 == 0) {
    // s·a − s²·‖ḡ‖²/(2λ), at its best s in [0, 1].
    const double s =
        a <= 0 ? 0 : (squares == 0 ? 1 : std::min(1.0, a * lambda / squares));
    result.dual = s * a - s * s * squares / (2 * lambda);
  } else {
    result.dual = BestScaledDual(a, &magnitudes, lambda, l1);
  }
  result.gap = result.primal - result.dual;
  return result;
}

namespace {

// Each block's hinge loss H_i(w) for blocks [first, last).
void BlockHingeLosses(const Problem& problem, const double* w, int first,
                      int last, int num_threads, std::vector<double>* hinge) {
  hinge->resize(problem.NumExamples());
  ParallelFor(last - first, num_threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = first + begin; i < first + end; ++i) {
      problem.MaxOracle(i, w, &result);
      (*hinge)[i] = result.loss - result.score;
    }
  });
}

double Average(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Block gaps (and ⟨v_i, w⟩) of blocks [first, last), and their hinge losses.
void BlockGaps(const Problem& problem, const double* w, const double* ell_block,
               StateReader state, int first, int last, int num_threads,
               std::vector<double>* hinge, std::vector<double>* block_gaps,
               std::vector<double>* state_dots) {
  const int n = problem.NumExamples();
  hinge->resize(n);
  block_gaps->resize(n);
  if (state_dots != nullptr) state_dots->resize(n);
  ParallelFor(last - first, num_threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = first + begin; i < first + end; ++i) {
      problem.MaxOracleWithStateDot(i, w, state(i), &result);
      (*hinge)[i] = result.loss - result.score;
      (*block_gaps)[i] = (result.state_dot - result.score) / n - ell_block[i] +
                         result.loss / n;
      if (state_dots != nullptr) (*state_dots)[i] = result.state_dot;
    }
  });
}

// The gap from the average hinge loss at w and the dual's ℓ.
DualityGap AssembleGap(const Problem& problem, const double* w, double ell,
                       double lambda, double average_hinge) {
  const double half_norm = 0.5 * lambda * SquaredNorm(w, problem.Dim());
  DualityGap result;
  result.primal = half_norm + average_hinge;
  result.dual = ell - half_norm;
  result.gap = result.primal - result.dual;
  return result;
}

}  // namespace

double AverageHingeLoss(const Problem& problem, const double* w,
                        int num_threads) {
  std::vector<double> hinge;
  BlockHingeLosses(problem, w, 0, problem.NumExamples(), num_threads, &hinge);
  return Average(hinge);
}

DualityGap ComputeDualityGap(const Problem& problem, const double* w,
                             double ell, double lambda, int num_threads) {
  return AssembleGap(problem, w, ell, lambda,
                     AverageHingeLoss(problem, w, num_threads));
}

DualityGap ComputeBlockGaps(const Problem& problem, const double* w, double ell,
                            const double* ell_block, StateReader state,
                            double lambda, int num_threads,
                            std::vector<double>* block_gaps,
                            std::vector<double>* state_dots) {
  std::vector<double> hinge;
  BlockGaps(problem, w, ell_block, state, 0, problem.NumExamples(), num_threads,
            &hinge, block_gaps, state_dots);
  return AssembleGap(problem, w, ell, lambda, Average(hinge));
}

absl::Status GatherBlockValues(const BlockDistribution& distribution,
                               std::vector<double>* values) {
  const BlockShard& shard = distribution.shard;
  std::vector<double> all;
  absl::Status status = distribution.communicator->AllGatherDoubles(
      absl::MakeConstSpan(values->data() + shard.begin,
                          shard.end - shard.begin),
      &all);
  if (!status.ok()) return status;
  if (all.size() != values->size()) {
    return absl::InternalError("the ranks' shards do not cover the blocks");
  }
  *values = std::move(all);
  return absl::OkStatus();
}

absl::StatusOr<DualityGap> ComputeDualityGap(
    const Problem& problem, const double* w, double ell, double lambda,
    int num_threads, const BlockDistribution& distribution) {
  std::vector<double> hinge;
  BlockHingeLosses(problem, w, distribution.shard.begin, distribution.shard.end,
                   num_threads, &hinge);
  absl::Status status = GatherBlockValues(distribution, &hinge);
  if (!status.ok()) return status;
  return AssembleGap(problem, w, ell, lambda, Average(hinge));
}

absl::StatusOr<DualityGap> ComputeBlockGaps(
    const Problem& problem, const double* w, double ell,
    const double* ell_block, StateReader state, double lambda, int num_threads,
    const BlockDistribution& distribution, std::vector<double>* block_gaps,
    std::vector<double>* state_dots) {
  std::vector<double> hinge;
  BlockGaps(problem, w, ell_block, state, distribution.shard.begin,
            distribution.shard.end, num_threads, &hinge, block_gaps,
            state_dots);
  for (std::vector<double>* values : {&hinge, block_gaps, state_dots}) {
    if (values == nullptr) continue;
    absl::Status status = GatherBlockValues(distribution, values);
    if (!status.ok()) return status;
  }
  return AssembleGap(problem, w, ell, lambda, Average(hinge));
}

}  // namespace chaintag
