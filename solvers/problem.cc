#include "solvers/problem.h"

#include <algorithm>
#include <numeric>

namespace chaintag {

void AddBlockUpdate(const BlockUpdate& update, double* w) {
  for (size_t j = 0; j < update.targets.size(); ++j) {
    update.AddTo(j, w + update.targets[j]);
  }
}

int64_t RangeGranularity(const Problem& problem) {
  int64_t g = problem.Dim();
  std::vector<CoordinateRange> ranges;
  for (int i = 0; i < problem.NumExamples() && g > 1; ++i) {
    ranges.clear();
    problem.TouchedRanges(i, &ranges);
    for (const CoordinateRange& range : ranges) {
      if (range.begin % g != 0 || range.length % g != 0) {
        g = std::gcd(g, std::gcd(range.begin, range.length));
      }
    }
  }
  return std::max<int64_t>(g, 1);
}

}  // namespace chaintag
