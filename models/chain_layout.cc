#include "models/chain_layout.h"

#include <algorithm>

namespace chaintag {

void ComputeUnaryScores(const ChainLayout& layout, const double* w,
                        const FeatureSequence& features, double* unary) {
  const int T = features.size();
  const int L = layout.num_labels;
  std::fill(unary, unary + static_cast<int64_t>(T) * L, 0.0);
  const int32_t total = features.offsets[T];
  for (int t = 0; t < T; ++t) {
    double* row = unary + static_cast<int64_t>(t) * L;
    for (int32_t k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      // Rows are scattered over a large array: fetch a few ahead so the
      // misses overlap instead of stalling one at a time.
      if (k + kPrefetchDistance < total) {
        PrefetchRow(
            w + static_cast<int64_t>(features.buckets[k + kPrefetchDistance]) *
                    L,
            L);
      }
      const double value = features.values[k];
      const double* weights = w + static_cast<int64_t>(features.buckets[k]) * L;
      for (int y = 0; y < L; ++y) row[y] += value * weights[y];
    }
  }
}

}  // namespace chaintag
