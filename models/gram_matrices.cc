#include "models/gram_matrices.h"

#include <cstddef>

namespace chaintag {
namespace {

// ⟨x_a, x_b⟩ of two positions' sorted, duplicate-free sparse features.
double SparseDot(const FeatureSequence& f, int a, int b) {
  int32_t p = f.offsets[a], p_end = f.offsets[a + 1];
  int32_t q = f.offsets[b], q_end = f.offsets[b + 1];
  double sum = 0;
  while (p < p_end && q < q_end) {
    if (f.buckets[p] < f.buckets[q]) {
      ++p;
    } else if (f.buckets[q] < f.buckets[p]) {
      ++q;
    } else {
      sum += static_cast<double>(f.value(p)) * f.value(q);
      ++p;
      ++q;
    }
  }
  return sum;
}

// Σ_{a,b} G[a][b]·⟨d_a, d_b⟩, G given as its upper triangle row by row.
template <typename Gram>
double TriangleNormSquared(const Gram* gram_row, int T, int width,
                           const double* d) {
  double norm = 0;
  for (int a = 0; a < T; gram_row += T - a, ++a) {
    const double* da = d + static_cast<int64_t>(a) * width;
    double diagonal = 0;
    for (int k = 0; k < width; ++k) diagonal += da[k] * da[k];
    norm += gram_row[0] * diagonal;
    for (int b = a + 1; b < T; ++b) {
      const double g = gram_row[b - a];
      if (g == 0) continue;
      const double* db = d + static_cast<int64_t>(b) * width;
      double dot = 0;
      for (int k = 0; k < width; ++k) dot += da[k] * db[k];
      norm += 2 * g * dot;
    }
  }
  return norm;
}

}  // namespace

GramMatrices::GramMatrices(
    const std::vector<const FeatureSequence*>& sequences) {
  offsets_.resize(sequences.size() + 1);
  lengths_.resize(sequences.size());
  offsets_[0] = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const int64_t T = sequences[i]->size();
    lengths_[i] = static_cast<int>(T);
    offsets_[i + 1] = offsets_[i] + T * (T + 1) / 2;
  }
  f64_.resize(offsets_.back());
  for (size_t i = 0; i < sequences.size(); ++i) {
    const FeatureSequence& f = *sequences[i];
    double* gram = f64_.data() + offsets_[i];
    for (int a = 0; a < f.size(); ++a) {
      for (int b = a; b < f.size(); ++b) *gram++ = SparseDot(f, a, b);
    }
  }
  // A quarter (a half) of the memory when every entry fits exactly.
  bool integers = true, floats = true;
  for (double g : f64_) {
    integers &= g >= 0 && g <= 65535 && g == static_cast<uint16_t>(g);
    floats &= static_cast<double>(static_cast<float>(g)) == g;
  }
  if (integers) {
    u16_.assign(f64_.begin(), f64_.end());
  } else if (floats) {
    f32_.assign(f64_.begin(), f64_.end());
  } else {
    return;
  }
  f64_ = std::vector<double>();
}

double GramMatrices::NormSquared(int i, int width, const double* d) const {
  const int64_t offset = offsets_[i];
  const int T = lengths_[i];
  if (!u16_.empty())
    return TriangleNormSquared(u16_.data() + offset, T, width, d);
  if (!f32_.empty())
    return TriangleNormSquared(f32_.data() + offset, T, width, d);
  return TriangleNormSquared(f64_.data() + offset, T, width, d);
}

int64_t GramMatrices::bytes() const {
  return static_cast<int64_t>(f64_.size() * sizeof(double) +
                              f32_.size() * sizeof(float) +
                              u16_.size() * sizeof(uint16_t));
}

}  // namespace chaintag
