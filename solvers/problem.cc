#include "solvers/problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "base/parallel.h"

namespace chaintag {

double MaxWeightError(const Problem& problem, const double* v,
                      const double* states, const int64_t* offsets,
                      double lambda) {
  const int n = problem.NumExamples();
  // Σ_i v_i/(λn): w += −c·(ψ(gold) − v_i) with ψ(gold) = 0.
  std::vector<double> sum(problem.Dim(), 0.0);
  for (int i = 0; i < n; ++i) {
    problem.AddCornerMinusState(i, problem.GoldCorner(i), states + offsets[i],
                                -1.0 / (lambda * n), sum.data());
  }
  double error = 0;
  for (int64_t j = 0; j < problem.Dim(); ++j) {
    error = std::max(error, std::abs(v[j] - sum[j]));
  }
  return error;
}

void AddBlockUpdate(const BlockUpdate& update, double* w) {
  for (size_t j = 0; j < update.targets.size(); ++j) {
    update.AddTo(j, w + update.targets[j]);
  }
}

int64_t RangeGranularity(const Problem& problem, int num_threads) {
  const int n = problem.NumExamples();
  const int parts = std::max(1, std::min(num_threads, n));
  // gcd is exact: the parts' results combine to the same g in any order.
  std::vector<int64_t> part_g(parts, problem.Dim());
  ParallelFor(parts, parts, [&](int part, int) {
    int64_t g = part_g[part];
    std::vector<CoordinateRange> ranges;
    const int end = static_cast<int>(SplitPoint(n, part + 1, parts));
    for (int i = static_cast<int>(SplitPoint(n, part, parts)); i < end && g > 1;
         ++i) {
      ranges.clear();
      problem.TouchedRanges(i, &ranges);
      for (const CoordinateRange& range : ranges) {
        if (range.begin % g != 0 || range.length % g != 0) {
          g = std::gcd(g, std::gcd(range.begin, range.length));
        }
      }
    }
    part_g[part] = g;
  });
  int64_t g = problem.Dim();
  for (int64_t part : part_g) g = std::gcd(g, part);
  return std::max<int64_t>(g, 1);
}

}  // namespace chaintag
