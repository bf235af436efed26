// ChainProblem's free coordinates (chain_problem.h): the restriction of
// each emission row to the labels the training labelings put at its
// positions, and the free space, where those coordinates are the whole of
// w and ψ_i(y) is projected on them (its distances here; its reads and
// writes beside the dense ones in chain_problem.cc and
// chain_problem_state.cc).
//
// Thread-safety: as ChainProblem's (const; scratch is per thread).

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "models/chain_problem.h"
#include "models/chain_problem_internal.h"

namespace chaintag {

using chain_problem_internal::ForEachNonzeroLabel;
using chain_problem_internal::Scratch;
using chain_problem_internal::ThreadScratch;

absl::Status ChainProblem::RestrictEmissionsToObservedLabels() {
  free_space_ = false;
  const int64_t L = layout_.num_labels;
  std::vector<bool> observed(layout_.emission_size(), false);
  for (const ChainExample& example : examples_) {
    const FeatureSequence& f = example.features;
    for (int t = 0; t < f.size(); ++t) {
      for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
        observed[f.buckets[k] * L + example.labels[t]] = true;
      }
    }
  }
  free_coordinates_.clear();
  free_labels_.clear();
  free_row_begin_.assign(layout_.num_rows + 1, 0);
  for (int64_t j = 0; j < layout_.emission_size(); ++j) {
    if (observed[j]) {
      free_coordinates_.push_back(j);
      free_labels_.push_back(static_cast<int32_t>(j % L));
    }
    if ((j + 1) % L == 0) {
      free_row_begin_[(j + 1) / L] =
          static_cast<int64_t>(free_coordinates_.size());
    }
  }
  for (int64_t j = layout_.pair_emission_offset(); j < layout_.dim(); ++j) {
    free_coordinates_.push_back(j);
  }
  absl::StatusOr<SparseRows> rows = SparseRows::FromFreeCoordinates(
      static_cast<int>(L), free_row_begin_, free_labels_, &free_listed_labels_);
  if (!rows.ok()) {
    free_coordinates_.clear();
    return rows.status();
  }
  free_rows_ = *std::move(rows);
  return absl::OkStatus();
}

bool ChainProblem::FreeCoordinates(std::vector<int64_t>* coordinates) const {
  if (free_coordinates_.empty() || free_space_) return false;
  if (coordinates != nullptr) *coordinates = free_coordinates_;
  return true;
}

absl::StatusOr<std::vector<double>> ChainProblem::WeightsInLayout(
    absl::Span<const double> w) const {
  const int64_t size = num_free_coordinates();
  if (static_cast<int64_t>(w.size()) != size) {
    return absl::InvalidArgumentError(absl::StrCat("weights of ", w.size(),
                                                   " entries for a problem of ",
                                                   size, " weights"));
  }
  if (free_coordinates_.empty()) return std::vector<double>(w.begin(), w.end());
  std::vector<double> all(layout_.dim(), 0.0);
  for (int64_t k = 0; k < size; ++k) all[free_coordinates_[k]] = w[k];
  return all;
}

absl::StatusOr<std::vector<double>> ChainProblem::WeightsInSpace(
    absl::Span<const double> layout_w) const {
  if (static_cast<int64_t>(layout_w.size()) != layout_.dim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weights of ", layout_w.size(), " entries for a layout of ",
        layout_.dim(), " coordinates"));
  }
  if (!free_space_)
    return std::vector<double>(layout_w.begin(), layout_w.end());
  std::vector<double> in_space(free_coordinates_.size());
  for (size_t k = 0; k < in_space.size(); ++k) {
    in_space[k] = layout_w[free_coordinates_[k]];
  }
  return in_space;
}

absl::Status ChainProblem::MakeFreeCoordinatesTheSpace() {
  if (free_coordinates_.empty()) {
    return absl::FailedPreconditionError(
        "only a problem restricted to the labels each row is seen with "
        "(RestrictEmissionsToObservedLabels) has free coordinates to make "
        "its space");
  }
  free_space_ = true;
  return absl::OkStatus();
}

double ChainProblem::FreeEmissionNormSquared(int i, const double* d) const {
  const FeatureSequence& f = examples_[i].features;
  const int T = f.size();
  const int L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  // Sums at the free coordinates hit, in a scratch that is all 0 between
  // calls; a coordinate listed twice (its sum back at 0 once) reads 0 the
  // second time.
  std::vector<double>& sums = scratch.free_sums;
  std::vector<int64_t>& touched = scratch.free_touched;
  if (sums.size() < free_labels_.size()) sums.resize(free_labels_.size(), 0.0);
  touched.clear();
  const uint32_t* listed = free_listed_labels_.data();
  for (int t = 0; t < T; ++t) {
    const double* d_t = d + static_cast<int64_t>(t) * L;
    ForEachNonzeroLabel(d_t, L, [&](int y) {
      for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
        const int64_t q = free_rows_.Find(listed, f.buckets[k], y);
        if (q < 0) continue;
        if (sums[q] == 0) touched.push_back(q);
        sums[q] += f.value(k) * d_t[y];
      }
    });
  }
  double norm = 0;
  for (int64_t q : touched) {
    norm += sums[q] * sums[q];
    sums[q] = 0;
  }
  return norm;
}

}  // namespace chaintag
