// FeatureSequence: the sparse features of one sentence in CSR form, one row
// per token position: bucket (or weight-row) ids and their values. Extract
// and the training problems keep each position's ids ascending and
// distinct (the Gram matrices need it); ExtractRows, for scoring only, keeps
// template order and repeats. Training sets keep no values when all of them
// are 1 (binary templates, the usual case): read them through value(k).
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
  // Empty when every value is 1 (DropUnitValues).
  std::vector<float> values;

  int size() const { return static_cast<int>(offsets.size()) - 1; }
  int num_features(int t) const { return offsets[t + 1] - offsets[t]; }
  float value(int32_t k) const { return values.empty() ? 1.0f : values[k]; }

  // Frees `values` when every one is 1: they would be a third of the
  // features' memory.
  void DropUnitValues() {
    for (float v : values) {
      if (v != 1.0f) return;
    }
    values = std::vector<float>();
  }

  // For a sequence kept long (a training set's): gives back the slack that
  // growing by doubling left, and drops unit values.
  void Compact() {
    offsets.shrink_to_fit();
    buckets.shrink_to_fit();
    values.shrink_to_fit();
    DropUnitValues();
  }

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
