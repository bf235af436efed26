#include "models/gram_matrices.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/parallel.h"

namespace chaintag {
namespace {

// The upper triangle of one sequence's Gram matrix, row by row, into `gram`
// (zeroed). Each entry is the sum over the two positions' common features,
// in ascending feature order, of their values' products: the features are
// grouped by id (sorted as id·2^32 + index, so positions ascend within a
// group) and every pair in a group adds to its entry. Where a merge of the
// two positions' lists costs O(T²·features), this costs a sort plus one
// addition per pair that shares a feature, and adds in the same order.
void FillTriangle(const FeatureSequence& f, std::vector<uint64_t>* keys,
                  std::vector<int32_t>* positions, double* gram) {
  const int T = f.size();
  const int32_t total = f.offsets[T];
  keys->resize(total);
  positions->resize(total);
  for (int t = 0; t < T; ++t) {
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      (*keys)[k] =
          static_cast<uint64_t>(f.buckets[k]) << 32 | static_cast<uint32_t>(k);
      (*positions)[k] = t;
    }
  }
  std::sort(keys->begin(), keys->end());
  // Row a of the triangle starts at a·T − a(a−1)/2.
  auto entry = [T](int64_t a, int64_t b) {
    return a * T - a * (a - 1) / 2 + (b - a);
  };
  for (int32_t begin = 0; begin < total;) {
    int32_t end = begin + 1;
    while (end < total && (*keys)[end] >> 32 == (*keys)[begin] >> 32) ++end;
    for (int32_t x = begin; x < end; ++x) {
      const int32_t kx = static_cast<int32_t>((*keys)[x] & 0xffffffffu);
      const double vx = f.value(kx);
      const int64_t a = (*positions)[kx];
      for (int32_t y = x; y < end; ++y) {
        const int32_t ky = static_cast<int32_t>((*keys)[y] & 0xffffffffu);
        gram[entry(a, (*positions)[ky])] += vx * f.value(ky);
      }
    }
    begin = end;
  }
}

// Σ_{a,b} G[a][b]·dot(a, b) for a symmetric dot, G given as its upper
// triangle row by row: the diagonal once, the rest twice, zeros skipped.
template <typename Gram, typename Dot>
double TriangleSum(const Gram* gram_row, int T, const Dot& dot) {
  double norm = 0;
  for (int a = 0; a < T; gram_row += T - a, ++a) {
    norm += gram_row[0] * dot(a, a);
    for (int b = a + 1; b < T; ++b) {
      const double g = gram_row[b - a];
      if (g == 0) continue;
      norm += 2 * g * dot(a, b);
    }
  }
  return norm;
}

// Σ_{a,b} G[a][b]·⟨d_a, d_b⟩, G given as its upper triangle row by row.
template <typename Gram>
double TriangleNormSquared(const Gram* gram_row, int T, int width,
                           const double* d) {
  // Position a's nonzero entries, ascending, at nonzero[begin[a],
  // begin[a + 1]). A zero entry's products are ±0, which leave a sum that
  // starts at +0 as it was, to the bit (it never becomes −0: x − x is +0),
  // so summing over a's nonzero entries alone gives the full loops' bits
  // at a fraction of their cost where the states hold a few labels of
  // many (hundreds of labels).
  thread_local std::vector<int32_t> nonzero;
  thread_local std::vector<int32_t> begin;
  nonzero.clear();
  begin.assign(1, 0);
  const int64_t most = static_cast<int64_t>(T) * width / 4;
  bool sparse = true;
  for (int a = 0; a < T && sparse; ++a) {
    const double* da = d + static_cast<int64_t>(a) * width;
    for (int k = 0; k < width; ++k) {
      if (da[k] != 0) nonzero.push_back(k);
    }
    begin.push_back(static_cast<int32_t>(nonzero.size()));
    sparse = static_cast<int64_t>(nonzero.size()) <= most;
  }
  if (sparse) {
    return TriangleSum(gram_row, T, [&](int a, int b) {
      const double* da = d + static_cast<int64_t>(a) * width;
      const double* db = d + static_cast<int64_t>(b) * width;
      double dot = 0;
      for (int32_t e = begin[a]; e < begin[a + 1]; ++e) {
        dot += da[nonzero[e]] * db[nonzero[e]];
      }
      return dot;
    });
  }
  return TriangleSum(gram_row, T, [&](int a, int b) {
    const double* da = d + static_cast<int64_t>(a) * width;
    const double* db = d + static_cast<int64_t>(b) * width;
    double dot = 0;
    for (int k = 0; k < width; ++k) dot += da[k] * db[k];
    return dot;
  });
}

template <typename Gram>
double TriangleLabelingDistanceSquared(const Gram* triangle, int T,
                                       const int32_t* a, const int32_t* b) {
  // Row r of the triangle starts at r·T − r(r − 1)/2 and holds G[r][r..T).
  auto gram = [&](int r, int c) {
    return static_cast<double>(triangle[static_cast<int64_t>(r) * T -
                                        int64_t{r} * (r - 1) / 2 + (c - r)]);
  };
  auto same = [](int32_t x, int32_t y) { return x >= 0 && x == y; };
  double norm = 0;
  for (int r = 0; r < T; ++r) {
    if (a[r] == b[r]) continue;
    norm += gram(r, r) * ((a[r] >= 0) + (b[r] >= 0));
    for (int c = r + 1; c < T; ++c) {
      if (a[c] == b[c]) continue;
      const int dot = same(a[r], a[c]) - same(a[r], b[c]) - same(b[r], a[c]) +
                      same(b[r], b[c]);
      if (dot != 0) norm += 2 * gram(r, c) * dot;
    }
  }
  return norm;
}

}  // namespace

GramMatrices::GramMatrices(const std::vector<const FeatureSequence*>& sequences,
                           int num_threads) {
  offsets_.resize(sequences.size() + 1);
  lengths_.resize(sequences.size());
  offsets_[0] = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const int64_t T = sequences[i]->size();
    lengths_[i] = static_cast<int>(T);
    offsets_[i + 1] = offsets_[i] + T * (T + 1) / 2;
  }
  f64_.assign(offsets_.back(), 0.0);
  ParallelFor(static_cast<int>(sequences.size()), num_threads,
              [&](int begin, int end) {
                std::vector<uint64_t> keys;
                std::vector<int32_t> positions;
                for (int i = begin; i < end; ++i) {
                  FillTriangle(*sequences[i], &keys, &positions,
                               f64_.data() + offsets_[i]);
                }
              });
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

double GramMatrices::LabelingDistanceSquared(int i, const int32_t* a,
                                             const int32_t* b) const {
  const int64_t offset = offsets_[i];
  const int T = lengths_[i];
  if (!u16_.empty()) {
    return TriangleLabelingDistanceSquared(u16_.data() + offset, T, a, b);
  }
  if (!f32_.empty()) {
    return TriangleLabelingDistanceSquared(f32_.data() + offset, T, a, b);
  }
  return TriangleLabelingDistanceSquared(f64_.data() + offset, T, a, b);
}

int64_t GramMatrices::bytes() const {
  return static_cast<int64_t>(f64_.size() * sizeof(double) +
                              f32_.size() * sizeof(float) +
                              u16_.size() * sizeof(uint16_t));
}

}  // namespace chaintag
