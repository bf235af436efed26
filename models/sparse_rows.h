// Emission rows that keep only their non-zero labels, as a model file may
// store them (ModelFile.emission_row_sizes, emission_labels): row r holds
// size_r weights; size_r = L means every label in id order, anything less
// the labels listed for the row, ascending. A trained model's rows are
// mostly sparse (a rare attribute only ever met a few labels in the
// solver's labelings), so a model of L labels costs its non-zero weights,
// not rows × L.
//
// SparseRows is the index over such rows (where each row's weights and
// labels begin); the label ids and weights stay in the model file's arrays
// and are passed in. Scoring skips only weights that are exactly zero, and
// adds the others in the order the dense rows would: the same unary scores,
// bit for bit (up to the sign of a zero sum).
//
// Thread-safety: immutable after Create; const methods from any thread.
//
//   absl::StatusOr<SparseRows> rows =
//       SparseRows::Create(L, file.emission_row_sizes(),
//                          file.emission_labels(), num_weights);
//   rows->ComputeUnaryScores(file.emission_labels().data(),
//                            file.emission_weights_f32().data(), features,
//                            unary);

#ifndef CHAINTAG_MODELS_SPARSE_ROWS_H_
#define CHAINTAG_MODELS_SPARSE_ROWS_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "features/feature_sequence.h"

namespace chaintag {

class SparseRows {
 public:
  // The index of rows of the given sizes over `labels` (the listed rows'
  // label ids, concatenated). Fails, naming the row, on a size of 0 or
  // above num_labels, labels that are not ascending or not below
  // num_labels, or sizes and labels that do not add up to num_weights and
  // labels.size().
  static absl::StatusOr<SparseRows> Create(int num_labels,
                                           absl::Span<const uint32_t> sizes,
                                           absl::Span<const uint32_t> labels,
                                           int64_t num_weights);

  // The index over a solver's free emission coordinates
  // (ChainProblem::RestrictEmissionsToObservedLabels): row r's weights are
  // the coordinates [row_begin[r], row_begin[r + 1]), whose labels are
  // `labels` there, ascending. Unlike a file's rows, a row may hold none.
  // `listed` gets the labels the index lists (those of the rows that are
  // not full) and must outlive its use.
  static absl::StatusOr<SparseRows> FromFreeCoordinates(
      int num_labels, absl::Span<const int64_t> row_begin,
      absl::Span<const int32_t> labels, std::vector<uint32_t>* listed);

  // The sizes and listed labels that keep the non-zero weights of `dense`
  // (num_rows × num_labels, row-major): a row with more than half of its
  // labels non-zero keeps them all (size num_labels, nothing listed). Rows
  // that are all zero get size 0 (the caller drops them).
  static void Choose(const double* dense, int64_t num_rows, int num_labels,
                     std::vector<uint32_t>* sizes,
                     std::vector<uint32_t>* labels);
  // The same over rows given one at a time: row_of(r) is row r's num_labels
  // weights, read before the next call.
  static void Choose(absl::FunctionRef<const double*(int64_t)> row_of,
                     int64_t num_rows, int num_labels,
                     std::vector<uint32_t>* sizes,
                     std::vector<uint32_t>* labels);

  int num_labels() const { return num_labels_; }
  int64_t num_rows() const { return static_cast<int64_t>(starts_.size()) - 1; }
  // Row r's weights are [WeightBegin(r), WeightBegin(r + 1)).
  int64_t WeightBegin(int64_t r) const { return starts_[r].weight; }
  // Row r lists its labels at LabelBegin(r) when it is not full.
  int64_t LabelBegin(int64_t r) const { return starts_[r].label; }
  bool Full(int64_t r) const {
    return starts_[r + 1].weight - starts_[r].weight ==
           static_cast<uint32_t>(num_labels_);
  }
  // Hints the cache to fetch row r's start.
  void PrefetchStart(int64_t r) const { __builtin_prefetch(&starts_[r]); }
  // Where row r's weight for label y is, or −1 when the row has none.
  int64_t Find(const uint32_t* labels, int64_t r, int y) const;

  // unary[t·L + y] = Σ_{f at t} value_f · weight(row_f, y), the features
  // holding row ids.
  void ComputeUnaryScores(const uint32_t* labels, const float* weights,
                          const FeatureSequence& features, double* unary) const;
  void ComputeUnaryScores(const uint32_t* labels, const double* weights,
                          const FeatureSequence& features, double* unary) const;

 private:
  // Where a row's weights and listed labels begin: side by side, so that
  // scoring a feature reads one entry (and the next row's) per row.
  struct Start {
    uint32_t weight;
    uint32_t label;
  };

  static absl::StatusOr<SparseRows> Build(int num_labels,
                                          absl::Span<const uint32_t> sizes,
                                          absl::Span<const uint32_t> labels,
                                          int64_t num_weights,
                                          bool allow_empty);

  int num_labels_ = 0;
  std::vector<Start> starts_;  // num_rows + 1
};

// A restricted solver's emission weights (model.states OBSERVED_STATES,
// ChainProblem::free_emissions): its w holds, instead of rows × L entries,
// the free coordinates of each row as `rows` index them (a row may hold
// none), then the layout's coordinates from pair_emission_offset() on.
struct FreeEmissions {
  const SparseRows* rows = nullptr;
  const uint32_t* labels = nullptr;  // the rows' listed labels
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SPARSE_ROWS_H_
