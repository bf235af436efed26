// ChainProblem's block states (chain_problem.h's layout of marginals and
// tail counts) and the updates of w they drive: a state's size (and the
// allowed transitions that shape its tail), its scaling and mixing,
// distances from the Gram matrices, w += c*(psi - v) on all of w or a
// slice, and both as BlockUpdates for mini-batch rounds.
// The oracles and scores are in chain_problem.cc.
//
// Thread-safety: as ChainProblem's (const; scratch is per thread).

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "models/chain_problem.h"
#include "models/chain_problem_internal.h"

namespace chaintag {

using chain_problem_internal::FewChangedLabels;
using chain_problem_internal::ForEachNonzeroLabel;
using chain_problem_internal::kSparseUnaryShare;
using chain_problem_internal::RowChange;
using chain_problem_internal::Scratch;
using chain_problem_internal::ThreadScratch;

void ChainProblem::AddStateTailFeatures(const int32_t* y, int T, double c,
                                        double* tail) const {
  ForEachTailIndex(y, T, [&](int64_t k) { tail[StateTailIndex(k)] += c; });
}

absl::Status ChainProblem::SetAllowedTransitions(std::vector<uint8_t> allowed) {
  const int L = layout_.num_labels;
  if (structure_ != nullptr) {
    return absl::InvalidArgumentError(
        "allowed transitions are for first-order problems");
  }
  if (static_cast<int64_t>(allowed.size()) != int64_t{L} * L) {
    return absl::InvalidArgumentError(
        absl::StrCat("allowed transitions need ", int64_t{L} * L,
                     " entries, not ", allowed.size()));
  }
  for (size_t i = 0; i < examples_.size(); ++i) {
    const std::vector<int32_t>& y = examples_[i].labels;
    for (size_t t = 1; t < y.size(); ++t) {
      if (!allowed[int64_t{y[t - 1]} * L + y[t]]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "example ", i, ": its gold labeling has a forbidden transition"));
      }
    }
  }
  allowed_ = std::move(allowed);
  lists_ = TransitionLists::FromMask(allowed_.data(), L);
  tail_slot_.assign(layout_.tail_size(), -1);
  tail_full_.clear();
  for (int64_t k = 0; k < layout_.tail_size(); ++k) {
    if (k < int64_t{L} * L && !allowed_[k]) continue;
    tail_slot_[k] = static_cast<int32_t>(tail_full_.size());
    tail_full_.push_back(k);
  }
  return absl::OkStatus();
}

int64_t ChainProblem::BlockStateSize(int i) const {
  return TailStateOffset(i) + StateTailSize();
}

void ChainProblem::InitBlockState(int i, double* state) const {
  std::fill(state, state + BlockStateSize(i), 0.0);
  MixCorner(i, examples_[i].labels, 1.0, state);
}

void ChainProblem::ScaleBlockState(int i, double factor, double* state) const {
  const int64_t tail_offset = TailStateOffset(i);
  const int64_t size = BlockStateSize(i);
  std::vector<int64_t>& support = ThreadScratch().tail_indices;
  // A factor of 0 also clears the rounding a support leaves out.
  if (factor == 0 || !TailSupport(i, state, &support)) {
    for (int64_t k = 0; k < size; ++k) state[k] *= factor;
    return;
  }
  double* tail = state + tail_offset;
  for (int64_t k : support) tail[k] *= factor;
  for (int64_t k = 0; k < tail_offset; ++k) state[k] *= factor;
}

void ChainProblem::AddCornerToState(int i, const Corner& y, double c,
                                    double* state) const {
  AddLabelingToState(i, y.data(), c, state);
}

void ChainProblem::AddLabelingToState(int i, const int32_t* y, double c,
                                      double* state) const {
  AddLabelingToStateHead(i, y, c, state);
  AddStateTailFeatures(y, Length(i), c, state + TailStateOffset(i));
}

void ChainProblem::AddLabelingToStateHead(int i, const int32_t* y, double c,
                                          double* state) const {
  const int T = Length(i);
  const int L = layout_.num_labels;
  for (int t = 0; t < T; ++t) state[static_cast<int64_t>(t) * L + y[t]] += c;
  const int64_t pair_offset = PairStateOffset(i);
  const int64_t tail_offset = TailStateOffset(i);
  if (tail_offset > pair_offset) {
    double* pairs = state + pair_offset;
    const int64_t P = layout_.num_pairs;
    for (int t = 1; t < T; ++t) {
      const int32_t p = PairColumn(y[t - 1], y[t]);
      if (p >= 0) pairs[t * P + p] += c;
    }
  }
}

double ChainProblem::StateDistanceSquared(int i, const double* state,
                                          const Corner& y) const {
  // ‖φ(y) − E_β φ‖²: φ(y_i) cancels between v_i and ψ_i(y).
  const int64_t tail_offset = TailStateOffset(i);
  std::vector<int64_t>& support = ThreadScratch().tail_indices;
  if (!TailSupport(i, state, &support)) {
    const int64_t size = BlockStateSize(i);
    std::vector<double>& d = ThreadScratch().difference;
    d.resize(size);
    for (int64_t k = 0; k < size; ++k) d[k] = -state[k];
    AddCornerToState(i, y, 1.0, d.data());
    return StateDifferenceNormSquared(i, d.data());
  }
  // The tail holds only what the state's labels can form: its part of the
  // norm sums over those entries and y's, not over the whole tail.
  const int T = Length(i);
  const double* tail_state = state + tail_offset;
  std::vector<double>& counts = ThreadScratch().tail_counts;
  counts.resize(layout_.tail_size(), 0.0);
  for (int64_t k : support) counts[k] = -tail_state[k];
  // State tail indices throughout (y's transitions are allowed ones).
  ForEachTailIndex(y.data(), T,
                   [&](int64_t k) { counts[StateTailIndex(k)] += 1; });
  // Each index read once and reset (a repeat then reads 0).
  double tail = 0;
  auto take = [&](int64_t k) {
    tail += counts[k] * counts[k];
    counts[k] = 0;
  };
  for (int64_t k : support) take(k);
  ForEachTailIndex(y.data(), T, [&](int64_t k) { take(StateTailIndex(k)); });
  std::vector<double>& d = ThreadScratch().difference;
  d.resize(tail_offset);
  for (int64_t k = 0; k < tail_offset; ++k) d[k] = -state[k];
  AddLabelingToStateHead(i, y.data(), 1.0, d.data());
  return StateHeadNormSquared(i, d.data()) + tail;
}

double ChainProblem::CornerDistanceSquared(int i, const Corner& a,
                                           const Corner& b) const {
  // ψ_i(a) − ψ_i(b) = φ(b) − φ(a): at each position where the labels
  // differ, the difference of two label indicators.
  const int T = Length(i);
  double norm;
  if (free_space_) {
    const int L = layout_.num_labels;
    std::vector<double>& d = ThreadScratch().difference;
    d.assign(static_cast<size_t>(T) * L, 0.0);
    for (int t = 0; t < T; ++t) {
      if (a[t] == b[t]) continue;
      d[int64_t{t} * L + a[t]] = 1;
      d[int64_t{t} * L + b[t]] = -1;
    }
    norm = FreeEmissionNormSquared(i, d.data());
  } else {
    norm = Gram().LabelingDistanceSquared(i, a.data(), b.data());
  }
  if (layout_.num_pair_rows > 0) {
    std::vector<int32_t>& columns = ThreadScratch().pair_columns;
    columns.resize(2 * static_cast<size_t>(T));
    PairColumns(a.data(), T, columns.data());
    PairColumns(b.data(), T, columns.data() + T);
    norm += PairGram().LabelingDistanceSquared(i, columns.data(),
                                               columns.data() + T);
  }
  return norm + TailDistanceSquared(a.data(), b.data(), T);
}

double ChainProblem::StateDifferenceNormSquared(int i, const double* d) const {
  double tail = 0;
  for (int64_t k = TailStateOffset(i); k < BlockStateSize(i); ++k) {
    tail += d[k] * d[k];
  }
  return StateHeadNormSquared(i, d) + tail;
}

double ChainProblem::StateHeadNormSquared(int i, const double* d) const {
  const int64_t pair_offset = PairStateOffset(i);
  double norm = free_space_ ? FreeEmissionNormSquared(i, d)
                            : Gram().NormSquared(i, layout_.num_labels, d);
  if (TailStateOffset(i) > pair_offset) {
    norm += PairGram().NormSquared(i, layout_.num_pairs, d + pair_offset);
  }
  return norm;
}

template <typename Slice>
void ChainProblem::AddPairRowsMinusState(int i, const int32_t* y,
                                         const double* pair_state, double c,
                                         const Slice& slice,
                                         double* pair_rows) const {
  const FeatureSequence& z = examples_[i].pair_features;
  const int P = layout_.num_pairs;
  Scratch& scratch = ThreadScratch();
  scratch.difference.resize(P);
  double* d = scratch.difference.data();
  const int64_t offset = layout_.pair_emission_offset();
  for (int t = 1; t < z.size(); ++t) {
    if (z.num_features(t) == 0) continue;
    const double* marginal = pair_state + static_cast<int64_t>(t) * P;
    RowChange(marginal, P, PairColumn(y[t - 1], y[t]), c, d);
    for (int32_t k = z.offsets[t]; k < z.offsets[t + 1]; ++k) {
      const int64_t row_offset = static_cast<int64_t>(z.buckets[k]) * P;
      int64_t from, to;
      if (!slice.Clip(offset + row_offset, P, &from, &to)) continue;
      const double value = z.value(k);
      double* row = pair_rows + row_offset;
      for (int64_t l = from; l < to; ++l) row[l] += value * d[l];
    }
  }
}

void ChainProblem::AddCornerMinusState(int i, const Corner& y,
                                       const double* state, double c,
                                       double* w) const {
  if (free_space_) {
    AddFreeCornerMinusState(i, y, state, c, 0, Dim(), w, nullptr);
    return;
  }
  AddCornerMinusStateIn(i, y, state, c, AllCoordinates(), w);
}

void ChainProblem::AddCornerMinusStateInSlice(int i, const Corner& y,
                                              const double* state, double c,
                                              int64_t begin, int64_t end,
                                              double* w) const {
  if (free_space_) {
    AddFreeCornerMinusState(i, y, state, c, begin, end, w, nullptr);
    return;
  }
  AddCornerMinusStateIn(i, y, state, c, CoordinateSlice{begin, end}, w);
}

void ChainProblem::AddCornerMinusStateAtFree(int i, const Corner& y,
                                             const double* state, double c,
                                             int64_t begin, int64_t end,
                                             double* free_w) const {
  if (free_coordinates_.empty()) {
    AddCornerMinusStateInSlice(i, y, state, c, begin, end, free_w);
    return;
  }
  AddFreeCornerMinusState(i, y, state, c, begin, end, free_w, nullptr);
}

void ChainProblem::AddFreeCornerMinusState(int i, const Corner& y,
                                           const double* state, double c,
                                           int64_t begin, int64_t end,
                                           double* free_w,
                                           const Mixture* mixture) const {
  // The emission rows' free coordinates, row r's at [free_row_begin_[r],
  // free_row_begin_[r + 1]): the additions AddCornerMinusState makes
  // there, in the same order (a position's few changed labels found in
  // the row by a search, as a labeling's state has).
  const FeatureSequence& f = examples_[i].features;
  const int T = f.size();
  const int64_t L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  scratch.difference.resize(L);
  double* d = scratch.difference.data();
  std::vector<int32_t>& labels = scratch.needed_labels;
  const uint32_t* listed = free_listed_labels_.data();
  const int32_t total = f.offsets[T];
  for (int t = 0; t < T; ++t) {
    const double* marginal = state + t * L;
    RowChange(marginal, L, y[t], c, d);
    const bool few = FewChangedLabels(marginal, L, y[t], &labels);
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      const int64_t row = f.buckets[k];
      const double value = f.value(k);
      if (few) {
        for (int32_t l : labels) {
          const int64_t q = free_rows_.Find(listed, row, l);
          if (q >= begin && q < end) free_w[q] += value * d[l];
        }
        continue;
      }
      PrefetchFreeRows(f, k, total, free_w);
      const int64_t first = std::max(free_row_begin_[row], begin);
      const int64_t last = std::min(free_row_begin_[row + 1], end);
      for (int64_t q = first; q < last; ++q) {
        free_w[q] += value * d[free_labels_[q]];
      }
    }
  }
  // The pair rows and the tail are free whole, in w's order after the
  // emission rows': the same writes on a shifted slice.
  const int64_t emissions = free_row_begin_.back();
  const int64_t shift = layout_.pair_emission_offset() - emissions;
  AddPairRowsAndTailMinusState(i, y, state, c,
                               CoordinateSlice{begin + shift, end + shift},
                               free_w + emissions, mixture);
}

void ChainProblem::AddCornerMinusMixture(int i, const Corner& y,
                                         const double* state,
                                         const Corner* const* corners,
                                         const double* weights, int count,
                                         double c, double* w) const {
  const Mixture mixture{corners, weights, count};
  if (free_space_) {
    AddFreeCornerMinusState(i, y, state, c, 0, Dim(), w, &mixture);
    return;
  }
  AddCornerMinusStateIn(i, y, state, c, AllCoordinates(), w, &mixture);
}

template <typename Slice>
void ChainProblem::AddCornerMinusStateIn(int i, const Corner& y,
                                         const double* state, double c,
                                         const Slice& slice, double* w,
                                         const Mixture* mixture) const {
  // ψ_i(y) − v_i = E_β φ − φ(y).
  const FeatureSequence& f = examples_[i].features;
  const int T = f.size();
  const int L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  scratch.difference.resize(L);
  double* d = scratch.difference.data();
  std::vector<int32_t>& labels = scratch.needed_labels;
  const int32_t total = f.offsets[T];
  for (int t = 0; t < T; ++t) {
    const double* marginal = state + static_cast<int64_t>(t) * L;
    RowChange(marginal, L, y[t], c, d);
    // A state of a few labelings has a few labels a position: the rows
    // change only there (the other labels would add c·0). A smoothed
    // state has mass everywhere: up to 64 labels the count comes from the
    // mask alone, and the list is made only when it is used.
    const bool few = FewChangedLabels(marginal, L, y[t], &labels);
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      const int64_t start = static_cast<int64_t>(f.buckets[k]) * L;
      int64_t from, to;
      if (!slice.Clip(start, L, &from, &to)) continue;
      if (k + kPrefetchDistance < total) {
        // Only rows the slice holds: another thread writes the others.
        const int64_t ahead =
            static_cast<int64_t>(f.buckets[k + kPrefetchDistance]) * L;
        if (slice.Holds(ahead)) PrefetchRow(w + ahead, L);
      }
      const double value = f.value(k);
      double* row = w + start;
      if (from != 0 || to != L) {
        // A row the slice cuts: its labels there, the same additions.
        for (int64_t l = from; l < to; ++l) {
          if (!few ||
              std::find(labels.begin(), labels.end(), l) != labels.end()) {
            row[l] += value * d[l];
          }
        }
      } else if (few) {
        for (int32_t l : labels) row[l] += value * d[l];
      } else {
        for (int l = 0; l < L; ++l) row[l] += value * d[l];
      }
    }
  }
  AddPairRowsAndTailMinusState(i, y, state, c, slice,
                               w + layout_.pair_emission_offset(), mixture);
}

template <typename Slice>
void ChainProblem::AddPairRowsAndTailMinusState(int i, const Corner& y,
                                                const double* state, double c,
                                                const Slice& slice,
                                                double* pair_rows,
                                                const Mixture* mixture) const {
  const int64_t tail_offset = TailStateOffset(i);
  if (tail_offset > PairStateOffset(i)) {
    AddPairRowsMinusState(i, y.data(), state + PairStateOffset(i), c, slice,
                          pair_rows);
  }
  const int64_t size = layout_.tail_size();
  int64_t from, to;
  if (!slice.Clip(layout_.transition_offset(), size, &from, &to)) return;
  double* tail = pair_rows +
                 (layout_.transition_offset() - layout_.pair_emission_offset());
  if (from == 0 && to == size) {
    AddTailMinusState(i, y, state, c, tail, mixture);
    return;
  }
  // A slice that cuts the tail: the same additions on a copy of its part
  // (the rest zeros, read by no one), then that part back, so that every
  // coordinate gets the whole tail's arithmetic from one writer.
  std::vector<double>& part = ThreadScratch().split_tail;
  part.assign(size, 0.0);
  std::copy(tail + from, tail + to, part.begin() + from);
  AddTailMinusState(i, y, state, c, part.data(), mixture);
  std::copy(part.begin() + from, part.begin() + to, tail + from);
}

void ChainProblem::AddTailMinusState(int i, const Corner& y,
                                     const double* state, double c,
                                     double* tail,
                                     const Mixture* mixture) const {
  const int T = examples_[i].features.size();
  const double* tail_state = state + TailStateOffset(i);
  Scratch& scratch = ThreadScratch();
  std::vector<int64_t>& support = scratch.tail_indices;
  if (mixture != nullptr) {
    for (int k = 0; k < mixture->count; ++k) {
      AddTailFeatures(mixture->corners[k]->data(), T, c * mixture->weights[k],
                      tail);
    }
  } else if (TailSupport(i, state, &support)) {
    if (tail_full_.empty()) {
      for (int64_t k : support) tail[k] += c * tail_state[k];
    } else {
      for (int64_t k : support) tail[tail_full_[k]] += c * tail_state[k];
    }
  } else {
    for (int64_t k = 0; k < StateTailSize(); ++k) {
      tail[FullTailIndex(k)] += c * tail_state[k];
    }
  }
  AddTailFeatures(y.data(), T, -c, tail);
}

template <typename Fill>
void ChainProblem::EncodeRows(const FeatureSequence& features,
                              int first_position, int64_t offset, int labels,
                              Fill fill, BlockUpdate* update) const {
  for (int t = first_position; t < features.size(); ++t) {
    if (features.num_features(t) == 0) continue;
    const int32_t v = update->AddVector(labels);
    if (!fill(t, update->values.data() + update->VectorBegin(v))) {
      update->values.resize(update->VectorBegin(v));
      update->vector_ends.pop_back();
      continue;
    }
    for (int32_t k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      update->AddAddition(
          offset + static_cast<int64_t>(features.buckets[k]) * labels, v,
          features.value(k));
    }
  }
}

template <typename Fill>
void ChainProblem::EncodeEmissionRows(const FeatureSequence& features,
                                      Fill fill, BlockUpdate* update) const {
  const int L = layout_.num_labels;
  if (!free_space_) {
    EncodeRows(features, 0, 0, L, fill, update);
    return;
  }
  // A row's free coordinates are contiguous: each feature adds the
  // position's vector gathered at its row's free labels.
  std::vector<double>& d = ThreadScratch().difference;
  for (int t = 0; t < features.size(); ++t) {
    if (features.num_features(t) == 0) continue;
    d.assign(L, 0.0);
    if (!fill(t, d.data())) continue;
    for (int32_t k = features.offsets[t]; k < features.offsets[t + 1]; ++k) {
      const int64_t row = features.buckets[k];
      const int64_t first = free_row_begin_[row];
      const int64_t length = free_row_begin_[row + 1] - first;
      if (length == 0) continue;
      const int32_t v = update->AddVector(length);
      double* values = update->values.data() + update->VectorBegin(v);
      for (int64_t q = 0; q < length; ++q) {
        values[q] = d[free_labels_[first + q]];
      }
      update->AddAddition(first, v, features.value(k));
    }
  }
}

// The same sums as AddCornerMinusState: per position d_t = c·(μ_t − e_y_t)
// at its rows (and the pair marginals' at the pair rows), and the tail
// c·(tail state − φ_tail(y)) as one vector.
void ChainProblem::EncodeCornerMinusState(int i, const Corner& y,
                                          const double* state, double c,
                                          BlockUpdate* update) const {
  const int L = layout_.num_labels;
  EncodeEmissionRows(
      examples_[i].features,
      [&](int t, double* d) {
        RowChange(state + static_cast<int64_t>(t) * L, L, y[t], c, d);
        return true;
      },
      update);
  const int64_t tail_offset = TailStateOffset(i);
  if (tail_offset > PairStateOffset(i)) {
    const int P = layout_.num_pairs;
    const double* pair_state = state + PairStateOffset(i);
    EncodeRows(
        examples_[i].pair_features, 1, EmissionEnd(), P,
        [&](int t, double* d) {
          RowChange(pair_state + static_cast<int64_t>(t) * P, P,
                    PairColumn(y[t - 1], y[t]), c, d);
          return true;
        },
        update);
  }
  const int32_t tail = update->AddVector(layout_.tail_size());
  double* values = update->values.data() + update->VectorBegin(tail);
  const double* tail_state = state + tail_offset;
  for (int64_t k = 0; k < StateTailSize(); ++k) {
    values[FullTailIndex(k)] = c * tail_state[k];
  }
  AddTailFeatures(y.data(), static_cast<int>(y.size()), -c, values);
  update->AddAddition(TailBegin(), tail, 1.0);
}

// c·ψ_i(y) = c·(φ(y_i) − φ(y)): per position ±c at the two labels (nothing
// where they agree), and the tail's indicator difference.
void ChainProblem::EncodeScaled(int i, const Corner& y, double c,
                                BlockUpdate* update) const {
  const int32_t* gold = examples_[i].labels.data();
  EncodeEmissionRows(
      examples_[i].features,
      [&](int t, double* d) {
        if (gold[t] == y[t]) return false;
        d[gold[t]] = c;
        d[y[t]] = -c;
        return true;
      },
      update);
  if (layout_.num_pair_rows > 0) {
    EncodeRows(
        examples_[i].pair_features, 1, EmissionEnd(),
        static_cast<int>(layout_.num_pairs),
        [&](int t, double* d) {
          const int32_t from = PairColumn(gold[t - 1], gold[t]);
          const int32_t to = PairColumn(y[t - 1], y[t]);
          if (from == to) return false;
          if (from >= 0) d[from] = c;
          if (to >= 0) d[to] = -c;
          return true;
        },
        update);
  }
  const int32_t tail = update->AddVector(layout_.tail_size());
  double* values = update->values.data() + update->VectorBegin(tail);
  const int T = static_cast<int>(y.size());
  AddTailFeatures(gold, T, c, values);
  AddTailFeatures(y.data(), T, -c, values);
  update->AddAddition(TailBegin(), tail, 1.0);
}

}  // namespace chaintag
