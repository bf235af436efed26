#include "models/sparse_rows.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/cpu_dispatch.h"
#include "models/chain_layout.h"

namespace chaintag {

absl::StatusOr<SparseRows> SparseRows::Create(int num_labels,
                                              absl::Span<const uint32_t> sizes,
                                              absl::Span<const uint32_t> labels,
                                              int64_t num_weights) {
  return Build(num_labels, sizes, labels, num_weights, /*allow_empty=*/false);
}

absl::StatusOr<SparseRows> SparseRows::FromFreeCoordinates(
    int num_labels, absl::Span<const int64_t> row_begin,
    absl::Span<const int32_t> labels, std::vector<uint32_t>* listed) {
  listed->clear();
  if (row_begin.empty() || row_begin.front() != 0 ||
      row_begin.back() != static_cast<int64_t>(labels.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("free coordinates: row begins do not cover the ",
                     labels.size(), " labels"));
  }
  std::vector<uint32_t> sizes(row_begin.size() - 1);
  for (size_t r = 0; r + 1 < row_begin.size(); ++r) {
    if (row_begin[r + 1] < row_begin[r]) {
      return absl::InvalidArgumentError(
          absl::StrCat("free coordinates: row ", r, " ends before it begins"));
    }
    sizes[r] = static_cast<uint32_t>(row_begin[r + 1] - row_begin[r]);
    // A full row lists nothing: its weights are in label order.
    if (sizes[r] == static_cast<uint32_t>(num_labels)) continue;
    for (int64_t k = row_begin[r]; k < row_begin[r + 1]; ++k) {
      listed->push_back(static_cast<uint32_t>(labels[k]));
    }
  }
  return Build(num_labels, sizes, *listed, static_cast<int64_t>(labels.size()),
               /*allow_empty=*/true);
}

absl::StatusOr<SparseRows> SparseRows::Build(int num_labels,
                                             absl::Span<const uint32_t> sizes,
                                             absl::Span<const uint32_t> labels,
                                             int64_t num_weights,
                                             bool allow_empty) {
  SparseRows rows;
  rows.num_labels_ = num_labels;
  rows.starts_.resize(sizes.size() + 1);
  const uint64_t L = static_cast<uint64_t>(num_labels);
  uint64_t weights = 0;
  uint64_t listed = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    rows.starts_[r] = {static_cast<uint32_t>(weights),
                       static_cast<uint32_t>(listed)};
    const uint64_t size = sizes[r];
    if ((size == 0 && !allow_empty) || size > L) {
      return absl::DataLossError(absl::StrCat("emission row ", r, " holds ",
                                              size, " weights (1 to ", L, ")"));
    }
    weights += size;
    // Checked before a full row's early end too: the starts are 32-bit.
    if (weights > std::numeric_limits<uint32_t>::max()) {
      return absl::DataLossError("too many emission weights");
    }
    if (size == L) continue;
    if (listed + size > labels.size()) {
      return absl::DataLossError(
          absl::StrCat("emission row ", r, " lists labels past the ",
                       labels.size(), " the file holds"));
    }
    for (uint64_t k = listed; k < listed + size; ++k) {
      if (labels[k] >= L || (k > listed && labels[k] <= labels[k - 1])) {
        return absl::DataLossError(
            absl::StrCat("emission row ", r,
                         "'s labels are not ascending label ids below ", L));
      }
    }
    listed += size;
  }
  if (weights != static_cast<uint64_t>(num_weights) ||
      listed != labels.size()) {
    return absl::DataLossError(absl::StrCat(
        "emission rows hold ", weights, " weights and list ", listed,
        " labels; the file has ", num_weights, " and ", labels.size()));
  }
  rows.starts_.back() = {static_cast<uint32_t>(weights),
                         static_cast<uint32_t>(listed)};
  return rows;
}

void SparseRows::Choose(const double* dense, int64_t num_rows, int num_labels,
                        std::vector<uint32_t>* sizes,
                        std::vector<uint32_t>* labels) {
  Choose([&](int64_t r) { return dense + r * num_labels; }, num_rows,
         num_labels, sizes, labels);
}

void SparseRows::Choose(absl::FunctionRef<const double*(int64_t)> row_of,
                        int64_t num_rows, int num_labels,
                        std::vector<uint32_t>* sizes,
                        std::vector<uint32_t>* labels) {
  sizes->assign(num_rows, 0);
  labels->clear();
  for (int64_t r = 0; r < num_rows; ++r) {
    const double* row = row_of(r);
    int nonzero = 0;
    for (int y = 0; y < num_labels; ++y) nonzero += row[y] != 0;
    if (nonzero == 0) continue;
    if (2 * nonzero > num_labels) {
      (*sizes)[r] = num_labels;
      continue;
    }
    (*sizes)[r] = nonzero;
    for (int y = 0; y < num_labels; ++y) {
      if (row[y] != 0) labels->push_back(y);
    }
  }
}

int64_t SparseRows::Find(const uint32_t* labels, int64_t r, int y) const {
  if (Full(r)) return WeightBegin(r) + y;
  const uint32_t* begin = labels + LabelBegin(r);
  const uint32_t* end = begin + (WeightBegin(r + 1) - WeightBegin(r));
  const uint32_t* at = std::lower_bound(begin, end, static_cast<uint32_t>(y));
  if (at == end || *at != static_cast<uint32_t>(y)) return -1;
  return WeightBegin(r) + (at - begin);
}

namespace {

template <typename Weight>
inline void SparseUnaryScores(const SparseRows& rows, const uint32_t* labels,
                              const Weight* weights,
                              const FeatureSequence& features, double* unary) {
  const int L = rows.num_labels();
  std::fill(unary, unary + static_cast<int64_t>(features.size()) * L, 0.0);
  const uint32_t* ids = features.buckets.data();
  const int32_t total = features.offsets[features.size()];
  for (int t = 0; t < features.size(); ++t) {
    double* out = unary + static_cast<int64_t>(t) * L;
    for (int32_t k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      // Two stages, as a row's weights are found through its start: the
      // start twice the distance ahead, then its weights and labels.
      if (k + 2 * kPrefetchDistance < total) {
        rows.PrefetchStart(ids[k + 2 * kPrefetchDistance]);
      }
      if (k + kPrefetchDistance < total) {
        const int64_t ahead = ids[k + kPrefetchDistance];
        __builtin_prefetch(weights + rows.WeightBegin(ahead));
        __builtin_prefetch(labels + rows.LabelBegin(ahead));
      }
      const double value = features.value(k);
      const int64_t row = ids[k];
      const int64_t begin = rows.WeightBegin(row);
      const int size = static_cast<int>(rows.WeightBegin(row + 1) - begin);
      const Weight* w = weights + begin;
      if (size == L) {
        for (int y = 0; y < L; ++y) out[y] += value * w[y];
        continue;
      }
      const uint32_t* row_labels = labels + rows.LabelBegin(row);
      for (int j = 0; j < size; ++j) out[row_labels[j]] += value * w[j];
    }
  }
}

}  // namespace

// Free functions, so that GCC can clone them for AVX2 (as chain_layout.cc's
// dense kernels): the full rows' label loop then vectorises.
namespace sparse_rows_internal {

CHAINTAG_AVX2_CLONES void UnaryScoresF32(const SparseRows& rows,
                                         const uint32_t* labels,
                                         const float* weights,
                                         const FeatureSequence& features,
                                         double* unary) {
  SparseUnaryScores(rows, labels, weights, features, unary);
}

CHAINTAG_AVX2_CLONES void UnaryScoresF64(const SparseRows& rows,
                                         const uint32_t* labels,
                                         const double* weights,
                                         const FeatureSequence& features,
                                         double* unary) {
  SparseUnaryScores(rows, labels, weights, features, unary);
}

}  // namespace sparse_rows_internal

void SparseRows::ComputeUnaryScores(const uint32_t* labels,
                                    const float* weights,
                                    const FeatureSequence& features,
                                    double* unary) const {
  sparse_rows_internal::UnaryScoresF32(*this, labels, weights, features, unary);
}

void SparseRows::ComputeUnaryScores(const uint32_t* labels,
                                    const double* weights,
                                    const FeatureSequence& features,
                                    double* unary) const {
  sparse_rows_internal::UnaryScoresF64(*this, labels, weights, features, unary);
}

}  // namespace chaintag
