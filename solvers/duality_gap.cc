#include "solvers/duality_gap.h"

#include <vector>

#include "base/parallel.h"

namespace chaintag {

double SquaredNorm(const double* w, int64_t dim) {
  double sum = 0;
  for (int64_t j = 0; j < dim; ++j) sum += w[j] * w[j];
  return sum;
}

double AverageHingeLoss(const Problem& problem, const double* w,
                        int num_threads) {
  const int n = problem.NumExamples();
  std::vector<double> hinge(n);
  ParallelFor(n, num_threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = begin; i < end; ++i) {
      problem.MaxOracle(i, w, nullptr, &result);
      hinge[i] = result.loss - result.score;
    }
  });
  double sum = 0;
  for (double h : hinge) sum += h;
  return n == 0 ? 0 : sum / n;
}

namespace {

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
  const int n = problem.NumExamples();
  std::vector<double> hinge(n);
  block_gaps->resize(n);
  if (state_dots != nullptr) state_dots->resize(n);
  ParallelFor(n, num_threads, [&](int begin, int end) {
    OracleResult result;
    for (int i = begin; i < end; ++i) {
      problem.MaxOracle(i, w, states + state_offset[i], &result);
      hinge[i] = result.loss - result.score;
      (*block_gaps)[i] = (result.state_dot - result.score) / n - ell_block[i] +
                         result.loss / n;
      if (state_dots != nullptr) (*state_dots)[i] = result.state_dot;
    }
  });
  double sum = 0;
  for (double h : hinge) sum += h;
  return AssembleGap(problem, w, ell, lambda, n == 0 ? 0 : sum / n);
}

}  // namespace chaintag
