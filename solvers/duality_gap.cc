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

DualityGap SmoothCertificate(const double* w, int64_t dim, double loss_sum,
                             double term_sum, int n, const double* gradient,
                             double gradient_scale, double lambda, double l1) {
  double absolute_sum = 0, soft_squares = 0;
  const double threshold = l1 / std::fabs(gradient_scale);
  for (int64_t j = 0; j < dim; ++j) {
    absolute_sum += std::fabs(w[j]);
    const double excess = std::fabs(gradient[j]) - threshold;
    if (excess > 0) soft_squares += excess * excess;
  }
  DualityGap result;
  result.primal =
      loss_sum / n + 0.5 * lambda * SquaredNorm(w, dim) + l1 * absolute_sum;
  result.dual = term_sum / n -
                gradient_scale * gradient_scale * soft_squares / (2 * lambda);
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
               const double* states, const int64_t* state_offset, int first,
               int last, int num_threads, std::vector<double>* hinge,
               std::vector<double>* block_gaps,
               std::vector<double>* state_dots) {
  const int n = problem.NumExamples();
  hinge->resize(n);
  block_gaps->resize(n);
  if (state_dots != nullptr) state_dots->resize(n);
  ParallelFor(last - first, num_threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = first + begin; i < first + end; ++i) {
      problem.MaxOracleWithStateDot(i, w, states + state_offset[i], &result);
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
                            const double* ell_block, const double* states,
                            const int64_t* state_offset, double lambda,
                            int num_threads, std::vector<double>* block_gaps,
                            std::vector<double>* state_dots) {
  std::vector<double> hinge;
  BlockGaps(problem, w, ell_block, states, state_offset, 0,
            problem.NumExamples(), num_threads, &hinge, block_gaps, state_dots);
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
    const double* ell_block, const double* states, const int64_t* state_offset,
    double lambda, int num_threads, const BlockDistribution& distribution,
    std::vector<double>* block_gaps, std::vector<double>* state_dots) {
  std::vector<double> hinge;
  BlockGaps(problem, w, ell_block, states, state_offset,
            distribution.shard.begin, distribution.shard.end, num_threads,
            &hinge, block_gaps, state_dots);
  for (std::vector<double>* values : {&hinge, block_gaps, state_dots}) {
    if (values == nullptr) continue;
    absl::Status status = GatherBlockValues(distribution, values);
    if (!status.ok()) return status;
  }
  return AssembleGap(problem, w, ell, lambda, Average(hinge));
}

}  // namespace chaintag
