#include "models/chain_layout.h"

#include <algorithm>

#include "base/cpu_dispatch.h"

namespace chaintag {

namespace {

// Positions [first, last): each position's sum is its own, so any split of
// a sentence gives the same bits.
template <typename Weight>
inline void UnaryScores(int num_labels, const Weight* emission,
                        const FeatureSequence& features, int first, int last,
                        double* unary) {
  const int L = num_labels;
  std::fill(unary + static_cast<int64_t>(first) * L,
            unary + static_cast<int64_t>(last) * L, 0.0);
  const int32_t total = features.offsets[last];
  const uint32_t* rows = features.buckets.data();
  for (int t = first; t < last; ++t) {
    double* out = unary + static_cast<int64_t>(t) * L;
    for (int32_t k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      // Rows are scattered over a large array: fetch a few ahead so the
      // misses overlap instead of stalling one at a time.
      if (k + kPrefetchDistance < total) {
        PrefetchRow(
            emission + static_cast<int64_t>(rows[k + kPrefetchDistance]) * L,
            L);
      }
      const double value = features.value(k);
      const Weight* weights = emission + static_cast<int64_t>(rows[k]) * L;
      for (int y = 0; y < L; ++y) out[y] += value * weights[y];
    }
  }
}

}  // namespace

// These are also built for AVX2 and picked at load time where the CPU has it:
// the label loop then converts and multiplies four weights at a time.
CHAINTAG_AVX2_CLONES void ComputeUnaryScores(int num_labels,
                                             const float* emission,
                                             const FeatureSequence& features,
                                             double* unary) {
  UnaryScores(num_labels, emission, features, 0, features.size(), unary);
}

CHAINTAG_AVX2_CLONES void ComputeUnaryScores(int num_labels,
                                             const double* emission,
                                             const FeatureSequence& features,
                                             double* unary) {
  UnaryScores(num_labels, emission, features, 0, features.size(), unary);
}

CHAINTAG_AVX2_CLONES void ComputeUnaryScoresOf(int num_labels,
                                               const double* emission,
                                               const FeatureSequence& features,
                                               int first, int last,
                                               double* unary) {
  UnaryScores(num_labels, emission, features, first, last, unary);
}

}  // namespace chaintag
