// FeatureSequence: the sparse features of one sentence in CSR form, one row
// per token position: bucket ids (ascending, distinct within a row) and their
// values.
//
// Thread-safety: a plain value type; const access is safe from any thread.

#ifndef CHAINTAG_FEATURES_FEATURE_SEQUENCE_H_
#define CHAINTAG_FEATURES_FEATURE_SEQUENCE_H_

#include <cstdint>
#include <vector>

namespace chaintag {

struct FeatureSequence {
  // Size T+1; position t's features are [offsets[t], offsets[t+1]).
  std::vector<int32_t> offsets = {0};
  std::vector<uint32_t> buckets;
  std::vector<float> values;

  int size() const { return static_cast<int>(offsets.size()) - 1; }
  int num_features(int t) const { return offsets[t + 1] - offsets[t]; }

  // Back to zero positions; keeps capacity so a reused sequence does not
  // allocate.
  void Clear() {
    offsets.resize(1);
    offsets[0] = 0;
    buckets.clear();
    values.clear();
  }
};

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_SEQUENCE_H_
