// The Gram matrices G_i[t][t'] = ⟨x_t, x_t'⟩ of a training set's sentences,
// from which ‖Σ_t x_t ⊗ d_t‖² = Σ_{t,t'} G[t][t']·⟨d_t, d_t'⟩ is computed for
// any per-position vectors d_t without touching the weight space: how a
// chain problem measures block-state distances in O(T²·width), never
// O(dim). Each sentence keeps its upper triangle, row by row, in the
// narrowest of uint16, float and double in which every entry of the set is
// exact (binary features give small integer counts).
//
// Thread-safety: immutable once constructed; const methods are safe from any
// thread.

#ifndef CHAINTAG_MODELS_GRAM_MATRICES_H_
#define CHAINTAG_MODELS_GRAM_MATRICES_H_

#include <cstdint>
#include <vector>

#include "features/feature_sequence.h"

namespace chaintag {

class GramMatrices {
 public:
  GramMatrices() = default;
  // One matrix per sequence; each position's ids must be sorted and
  // distinct. The sequences are shared among `num_threads` threads; the
  // result does not depend on their number.
  explicit GramMatrices(const std::vector<const FeatureSequence*>& sequences,
                        int num_threads = 1);

  // Σ_{a,b} G_i[a][b]·⟨d_a, d_b⟩ for the T×width vector d (row a is d_a).
  double NormSquared(int i, int width, const double* d) const;
  // The same for d_t = e_{a[t]} − e_{b[t]} (e_{−1} = 0): the distance of
  // two labelings' indicator vectors, in O(D²) for the D positions where
  // they differ.
  double LabelingDistanceSquared(int i, const int32_t* a,
                                 const int32_t* b) const;

  // Bytes held, for memory reports.
  int64_t bytes() const;

 private:
  std::vector<int> lengths_;
  std::vector<int64_t> offsets_;
  std::vector<double> f64_;
  std::vector<float> f32_;
  std::vector<uint16_t> u16_;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_GRAM_MATRICES_H_
