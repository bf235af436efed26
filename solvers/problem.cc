#include "solvers/problem.h"

#include <algorithm>
#include <numeric>

namespace chaintag {

void AddBlockUpdate(const BlockUpdate& update, double* w) {
  for (size_t j = 0; j < update.targets.size(); ++j) {
    const int32_t v = update.vectors[j];
    const double* vector = update.values.data() + update.VectorBegin(v);
    const int64_t length = update.VectorLength(v);
    const double scale = update.scales[j];
    double* target = w + update.targets[j];
    for (int64_t x = 0; x < length; ++x) target[x] += scale * vector[x];
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
