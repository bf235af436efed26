#include "models/chain_problem.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/step_helpers.h"
#include "models/chain_problem_internal.h"
#include "models/second_order_forward_backward.h"
#include "models/second_order_top_k.h"
#include "models/second_order_viterbi.h"
#include "models/smoothing.h"
#include "models/top_k_viterbi.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

using chain_problem_internal::ForEachNonzeroLabel;
using chain_problem_internal::kSparseUnaryShare;
using chain_problem_internal::kSplitUnaryLabels;
using chain_problem_internal::kSplitUnaryPositions;
using chain_problem_internal::Scratch;
using chain_problem_internal::ThreadScratch;

// out[labels[j]] = position t's unary score of labels[j], j < count ≤ 4.
// Four sums kept in registers over the position's rows: accumulating in
// `out` chained every row's addition to the last one's store.
void GatherUnaryScores(const FeatureSequence& f, int t, const double* w, int L,
                       const int32_t* labels, int count, double* out) {
  // Missing labels repeat the last one: computed twice, stored twice.
  const int32_t l0 = labels[0];
  const int32_t l1 = labels[std::min(1, count - 1)];
  const int32_t l2 = labels[std::min(2, count - 1)];
  const int32_t l3 = labels[std::min(3, count - 1)];
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const uint32_t* rows = f.buckets.data();
  for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
    const double value = f.value(k);
    const double* weights = w + static_cast<int64_t>(rows[k]) * L;
    s0 += value * weights[l0];
    s1 += value * weights[l1];
    s2 += value * weights[l2];
    s3 += value * weights[l3];
  }
  out[l3] = s3;
  out[l2] = s2;
  out[l1] = s1;
  out[l0] = s0;
}

std::vector<const FeatureSequence*> Sequences(
    const std::vector<ChainExample>& examples, bool pair_features) {
  std::vector<const FeatureSequence*> sequences;
  sequences.reserve(examples.size());
  for (const ChainExample& example : examples) {
    sequences.push_back(pair_features ? &example.pair_features
                                      : &example.features);
  }
  return sequences;
}

absl::Status CheckRows(int i, const FeatureSequence& features, int64_t rows,
                       const char* what) {
  for (uint32_t bucket : features.buckets) {
    if (bucket >= rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "example ", i, ": ", what, " bucket ", bucket, " out of range"));
    }
  }
  return absl::OkStatus();
}

// The pair features of an example of a layout with pair rows: one row per
// position, the first one empty.
absl::Status CheckPairFeatures(int i, const ChainExample& example,
                               const ChainLayout& layout) {
  const int T = example.features.size();
  if (example.pair_features.size() != T ||
      example.pair_features.num_features(0) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("example ", i, ": pair features need ", T,
                     " positions, the first one empty"));
  }
  return CheckRows(i, example.pair_features, layout.num_pair_rows,
                   "pair feature");
}

absl::Status CheckSecondOrder(int i, const ChainExample& example,
                              const ChainLayout& layout,
                              const SecondOrderStructure& structure) {
  const int T = example.features.size();
  if (layout.num_pair_rows > 0) {
    if (example.pair_features.size() != T ||
        example.pair_features.num_features(0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("example ", i, ": pair features need ", T,
                       " positions, the first one empty"));
    }
    absl::Status rows = CheckRows(i, example.pair_features,
                                  layout.num_pair_rows, "pair feature");
    if (!rows.ok()) return rows;
  }
  if (!structure.IsAllowed(example.labels.data(), T)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "example ", i,
        ": its gold labeling is not allowed by the tag scheme's constraints"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ChainProblem::Validate(const ChainLayout& layout,
                                    const std::vector<ChainExample>& examples,
                                    const SecondOrderStructure* structure) {
  if ((layout.order == 2) != (structure != nullptr)) {
    return absl::InvalidArgumentError(
        "a second-order problem needs its structure, a first-order one none");
  }
  if (layout.order == 1 && layout.num_pair_rows > 0 &&
      layout.num_pairs != layout.num_labels * layout.num_labels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a first-order layout's pair rows need one weight per label pair (",
        layout.num_labels * layout.num_labels, "), not ", layout.num_pairs));
  }
  for (size_t i = 0; i < examples.size(); ++i) {
    const ChainExample& example = examples[i];
    if (static_cast<int>(example.labels.size()) != example.features.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("example ", i, ": ", example.labels.size(),
                       " labels for ", example.features.size(), " positions"));
    }
    if (example.labels.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("example ", i, " is empty"));
    }
    for (int32_t label : example.labels) {
      if (label < 0 || label >= layout.num_labels) {
        return absl::InvalidArgumentError(
            absl::StrCat("example ", i, ": label id ", label, " out of range"));
      }
    }
    absl::Status rows = CheckRows(static_cast<int>(i), example.features,
                                  layout.num_rows, "feature");
    if (!rows.ok()) return rows;
    if (structure == nullptr && layout.num_pair_rows > 0) {
      absl::Status pairs =
          CheckPairFeatures(static_cast<int>(i), example, layout);
      if (!pairs.ok()) return pairs;
    }
    if (structure != nullptr) {
      absl::Status second =
          CheckSecondOrder(static_cast<int>(i), example, layout, *structure);
      if (!second.ok()) return second;
    }
  }
  return absl::OkStatus();
}

ChainProblem::ChainProblem(
    ChainLayout layout, std::vector<ChainExample> examples, bool normalize_loss,
    std::shared_ptr<const SecondOrderStructure> structure, int num_threads)
    : layout_(layout),
      examples_(std::move(examples)),
      normalize_loss_(normalize_loss),
      structure_(std::move(structure)),
      gram_threads_(num_threads) {}

const GramMatrices& ChainProblem::Gram() const {
  std::call_once(gram_built_, [this] {
    // The free space's distances are summed at the free coordinates; only
    // its pair rows read Gram matrices.
    if (!free_space_) {
      gram_ = GramMatrices(Sequences(examples_, false), gram_threads_);
    }
    if (layout_.num_pair_rows > 0) {
      pair_gram_ = GramMatrices(Sequences(examples_, true), gram_threads_);
    }
  });
  return gram_;
}

const GramMatrices& ChainProblem::PairGram() const {
  Gram();
  return pair_gram_;
}

std::vector<ChainExample> ChainProblem::TakeExamples() {
  std::vector<ChainExample> examples = std::move(examples_);
  examples_.clear();
  gram_ = GramMatrices();
  pair_gram_ = GramMatrices();
  return examples;
}

double ChainProblem::LossUnit(int i) const {
  const double unit = normalize_loss_ ? 1.0 / examples_[i].labels.size() : 1.0;
  return loss_scale_ == 1 ? unit : loss_scale_ * unit;
}

void ChainProblem::AddLossToUnary(int i, double sign, double* unary) const {
  AddLossToPositions(i, sign, 0, Length(i), unary);
}

void ChainProblem::AddLossToPositions(int i, double sign, int first, int last,
                                      double* unary) const {
  const std::vector<int32_t>& gold = examples_[i].labels;
  const int L = layout_.num_labels;
  const double unit = sign * LossUnit(i);
  if (unit == 0) return;  // no loss: the CRF's scores as they are
  for (int t = first; t < last; ++t) {
    double* row = unary + static_cast<int64_t>(t) * L;
    for (int y = 0; y < L; ++y) row[y] += unit;
    row[gold[t]] -= unit;
  }
}

void ChainProblem::ComputeScores(int i, const double* v, double scale,
                                 Scores* scores) const {
  if (free_space_) {
    // A row's few free labels: too little to split over the helpers.
    ComputeScoresAtFree(i, v, scale, scores);
    return;
  }
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  const int L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  scratch.unary.resize(static_cast<size_t>(T) * L);
  double* unary = scratch.unary.data();
  StepHelpers* helpers = StepHelpers::Current();
  if (helpers != nullptr && L >= kSplitUnaryLabels) {
    // At least kSplitUnaryPositions positions a part, so that a short
    // sentence stays whole rather than handing out a position or two.
    const int parts =
        std::max(1, std::min(helpers->threads(), T / kSplitUnaryPositions));
    helpers->Run(parts, [&](int part) {
      ComputeUnaryScoresOf(
          L, v, example.features, static_cast<int>(int64_t{T} * part / parts),
          static_cast<int>(int64_t{T} * (part + 1) / parts), unary);
    });
  } else {
    ComputeUnaryScores(L, v, example.features, unary);
  }
  FinishScores(i, v + layout_.pair_emission_offset(), scale, scores);
}

bool ChainProblem::ComputeCornerUnary(int i, const double* w,
                                      const double* state,
                                      const Corner* const* corners,
                                      int count) const {
  // In the free space a label's weight in a row takes a search: scoring
  // every free label of the rows costs less (measured on 319 labels).
  if (free_space_) return false;
  const ChainExample& example = examples_[i];
  const FeatureSequence& f = example.features;
  const int T = f.size();
  const int L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  // Position t's labels: needed[needed_begin[t], needed_begin[t + 1]).
  std::vector<int32_t>& needed = scratch.needed_labels;
  std::vector<int32_t>& needed_begin = scratch.needed_begin;
  std::vector<uint8_t>& marked = scratch.marked_labels;
  needed.clear();
  needed_begin.assign(1, 0);
  marked.assign(L, 0);
  const int64_t most = static_cast<int64_t>(T) * L / kSparseUnaryShare;
  for (int t = 0; t < T; ++t) {
    auto need = [&](int32_t y) {
      if (!marked[y]) {
        marked[y] = 1;
        needed.push_back(y);
      }
    };
    need(example.labels[t]);
    for (int k = 0; k < count; ++k) need((*corners[k])[t]);
    if (state != nullptr) {
      ForEachNonzeroLabel(state + static_cast<int64_t>(t) * L, L, need);
    }
    for (int32_t k = needed_begin.back();
         k < static_cast<int32_t>(needed.size()); ++k) {
      marked[needed[k]] = 0;
    }
    needed_begin.push_back(static_cast<int32_t>(needed.size()));
    if (static_cast<int64_t>(needed.size()) > most) return false;
  }
  scratch.unary.assign(static_cast<size_t>(T) * L, 0.0);
  double* unary = scratch.unary.data();
  for (int t = 0; t < T; ++t) {
    const int32_t* labels = needed.data() + needed_begin[t];
    const int32_t labels_count = needed_begin[t + 1] - needed_begin[t];
    for (int32_t j = 0; j < labels_count; j += 4) {
      GatherUnaryScores(f, t, w, L, labels + j,
                        std::min<int32_t>(4, labels_count - j),
                        unary + static_cast<int64_t>(t) * L);
    }
  }
  return true;
}

void ChainProblem::FinishScores(int i, const double* after_emission,
                                double scale, Scores* scores) const {
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  const int L = layout_.num_labels;
  const int P = layout_.num_pairs;
  Scratch& scratch = ThreadScratch();
  double* unary = scratch.unary.data();
  const double* tail = after_emission + (layout_.transition_offset() -
                                         layout_.pair_emission_offset());
  double* pair_unary = nullptr;
  if (layout_.num_pair_rows > 0) {
    scratch.pair_unary.resize(static_cast<size_t>(T) * P);
    pair_unary = scratch.pair_unary.data();
    ComputeUnaryScores(P, after_emission, example.pair_features, pair_unary);
  }
  if (scale != 1.0) {
    // Scale the (small) unary tables and a copy of the tail; the emission
    // rows are never touched.
    for (int64_t k = 0; k < static_cast<int64_t>(T) * L; ++k) unary[k] *= scale;
    for (int64_t k = 0; pair_unary != nullptr && k < int64_t{T} * P; ++k) {
      pair_unary[k] *= scale;
    }
    scratch.scaled_tail.resize(layout_.tail_size());
    for (int64_t k = 0; k < layout_.tail_size(); ++k) {
      scratch.scaled_tail[k] = scale * tail[k];
    }
    tail = scratch.scaled_tail.data();
  }
  scores->unary = unary;
  scores->pair_unary = pair_unary;
  scores->first = ChainScoresFromTail(L, tail, T, unary);
  if (structure_ == nullptr) scores->first.pair = pair_unary;
  if (structure_ != nullptr) {
    SecondOrderScores& second = scores->second;
    second.length = T;
    second.unary = unary;
    second.transition = scores->first.transition;
    second.start = scores->first.start;
    second.end = scores->first.end;
    second.trigram =
        tail + (layout_.trigram_offset() - layout_.transition_offset());
    second.pair_unary = pair_unary;
  }
}

double ChainProblem::ScoreOf(const Scores& scores, const int32_t* y) const {
  return structure_ == nullptr ? ScoreLabeling(scores.first, y)
                               : ScoreLabeling(*structure_, scores.second, y);
}

double ChainProblem::DecodeBest(const Scores& scores, int32_t* y) const {
  Scratch& scratch = ThreadScratch();
  return structure_ == nullptr ? scratch.decoder.Decode(scores.first, y)
                               : scratch.second_order_decoder.Decode(
                                     *structure_, scores.second, y);
}

double ChainProblem::StateDot(int i, const double* state,
                              const double* w) const {
  double state_dot = 0;
  ScoreCorners(i, w, state, nullptr, 0, nullptr, &state_dot);
  return state_dot;
}

void ChainProblem::MaxOracleWithStateDot(int i, const double* w,
                                         const double* state,
                                         OracleResult* result) const {
  Oracle(i, w, 1.0, state, nullptr, 0, nullptr, result);
}

void ChainProblem::ScoreCornersAndMaxOracle(int i, const double* w,
                                            const double* state,
                                            const Corner* const* corners,
                                            int count, double* scores,
                                            OracleResult* result) const {
  Oracle(i, w, 1.0, state, corners, count, scores, result);
}

void ChainProblem::MaxOracleScaled(int i, const double* v, double scale,
                                   OracleResult* result) const {
  Oracle(i, v, scale, nullptr, nullptr, 0, nullptr, result);
}

void ChainProblem::Oracle(int i, const double* w, double scale,
                          const double* state, const Corner* const* corners,
                          int count, double* corner_scores,
                          OracleResult* result) const {
  if (CanPipelineOracle(i, scale)) {
    PipelinedOracle(i, w, state, corners, count, corner_scores, result);
    return;
  }
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  Scores scores;
  ComputeScores(i, w, scale, &scores);
  const double gold_score = ScoreOf(scores, example.labels.data());
  for (int k = 0; k < count; ++k) {
    corner_scores[k] = gold_score - ScoreOf(scores, corners[k]->data());
  }
  result->state_dot = state != nullptr ? StateDot(i, w + EmissionEnd(), scores,
                                                  gold_score, state)
                                       : 0;

  // Loss augmentation, then plain decoding; the scores of the winner are
  // recomputed without it.
  AddLossToUnary(i, 1.0, scores.unary);
  result->corner.resize(T);
  ForbidTransitions(&scores, /*viterbi_only=*/true);
  DecodeBest(scores, result->corner.data());
  AddLossToUnary(i, -1.0, scores.unary);
  int wrong = 0;
  for (int t = 0; t < T; ++t) wrong += result->corner[t] != example.labels[t];
  result->loss = wrong * LossUnit(i);
  result->score = gold_score - ScoreOf(scores, result->corner.data());
}

void ChainProblem::TouchedRanges(int i,
                                 std::vector<CoordinateRange>* ranges) const {
  if (free_space_) {
    RangesAtFreeCoordinates(i, ranges);
  } else {
    RangesInAllCoordinates(i, ranges);
  }
}

void ChainProblem::TouchedRangesAtFree(
    int i, std::vector<CoordinateRange>* ranges) const {
  if (free_coordinates_.empty()) {
    RangesInAllCoordinates(i, ranges);
  } else {
    RangesAtFreeCoordinates(i, ranges);
  }
}

void ChainProblem::RangesInAllCoordinates(
    int i, std::vector<CoordinateRange>* ranges) const {
  const ChainExample& example = examples_[i];
  // Sized once and filled field by field: push_back of each range cost a
  // store-forwarding stall per feature (the svrg step's hot loop).
  const FeatureSequence& f = example.features;
  const FeatureSequence& z = example.pair_features;
  const int32_t total = f.offsets[f.size()];
  const int32_t pair_total = z.offsets[z.size()];
  const size_t first = ranges->size();
  ranges->resize(first + total + pair_total + 1);
  CoordinateRange* out = ranges->data() + first;
  const int64_t L = layout_.num_labels;
  const uint32_t* buckets = f.buckets.data();
  for (int32_t k = 0; k < total; ++k) {
    out[k].begin = static_cast<int64_t>(buckets[k]) * L;
    out[k].length = L;
  }
  out += total;
  const int64_t P = layout_.num_pairs;
  for (int32_t k = 0; k < pair_total; ++k) {
    out[k].begin =
        layout_.pair_emission_offset() + static_cast<int64_t>(z.buckets[k]) * P;
    out[k].length = P;
  }
  out[pair_total].begin = layout_.transition_offset();
  out[pair_total].length = layout_.tail_size();
}

void ChainProblem::RangesAtFreeCoordinates(
    int i, std::vector<CoordinateRange>* ranges) const {
  // The rows after the emission rows are free whole, shifted down by the
  // emission coordinates that are not.
  const size_t first = ranges->size();
  RangesInAllCoordinates(i, ranges);
  const int64_t L = layout_.num_labels;
  const int64_t emissions = free_row_begin_.back();
  const int64_t shift = layout_.pair_emission_offset() - emissions;
  size_t kept = first;
  for (size_t k = first; k < ranges->size(); ++k) {
    CoordinateRange range = (*ranges)[k];
    if (range.begin < layout_.pair_emission_offset()) {
      const int64_t row = range.begin / L;
      range.begin = free_row_begin_[row];
      range.length = free_row_begin_[row + 1] - range.begin;
      if (range.length == 0) continue;
    } else {
      range.begin -= shift;
    }
    (*ranges)[kept++] = range;
  }
  ranges->resize(kept);
}

void ChainProblem::Decode(int i, const double* w, Corner* corner) const {
  corner->resize(Length(i));
  Scores scores;
  ComputeScores(i, w, 1.0, &scores);
  ForbidTransitions(&scores, /*viterbi_only=*/true);
  DecodeBest(scores, corner->data());
}

bool ChainProblem::IsCorner(int i, const Corner& y) const {
  if (y.size() != examples_[i].labels.size()) return false;
  for (int32_t label : y) {
    if (label < 0 || label >= layout_.num_labels) return false;
  }
  for (size_t t = 1; !allowed_.empty() && t < y.size(); ++t) {
    if (!allowed_[int64_t{y[t - 1]} * layout_.num_labels + y[t]]) return false;
  }
  return structure_ == nullptr ||
         structure_->IsAllowed(y.data(), static_cast<int>(y.size()));
}

double ChainProblem::Loss(int i, const Corner& y) const {
  const std::vector<int32_t>& gold = examples_[i].labels;
  int wrong = 0;
  for (size_t t = 0; t < gold.size(); ++t) wrong += y[t] != gold[t];
  return wrong * LossUnit(i);
}

double ChainProblem::Score(int i, const double* w, const Corner& y) const {
  const Corner* corner = &y;
  double score = 0;
  ScoreCorners(i, w, nullptr, &corner, 1, &score, nullptr);
  return score;
}

int64_t ChainProblem::PairStateOffset(int i) const {
  return static_cast<int64_t>(Length(i)) * layout_.num_labels;
}

int64_t ChainProblem::TailStateOffset(int i) const {
  return PairStateOffset(i) +
         (layout_.num_pair_rows > 0
              ? static_cast<int64_t>(Length(i)) * layout_.num_pairs
              : 0);
}

bool ChainProblem::TailSupport(int i, const double* state,
                               std::vector<int64_t>* indices) const {
  const int T = Length(i);
  const int L = layout_.num_labels;
  const int64_t most = StateTailSize() / kSparseUnaryShare;
  Scratch& scratch = ThreadScratch();
  std::vector<int32_t>& labels = scratch.support_labels;
  std::vector<int32_t>& begin = scratch.support_begin;
  labels.clear();
  begin.assign(1, 0);
  int64_t candidates = 0;
  for (int t = 0; t < T; ++t) {
    ForEachNonzeroLabel(state + static_cast<int64_t>(t) * L, L,
                        [&](int y) { labels.push_back(y); });
    begin.push_back(static_cast<int32_t>(labels.size()));
    const int64_t here = begin[t + 1] - begin[t];
    const int64_t before = t >= 1 ? begin[t] - begin[t - 1] : 1;
    const int64_t before2 = t >= 2 ? begin[t - 1] - begin[t - 2] : 0;
    candidates += here * before * (1 + before2);
    if (candidates > most) return false;
  }
  std::vector<uint8_t>& marked = scratch.marked_tail;
  marked.resize(layout_.tail_size(), 0);
  indices->clear();
  // State tail indices; a forbidden transition has none (no mass).
  auto add = [&](int64_t full) {
    const int64_t k = StateTailIndex(full);
    if (k >= 0 && !marked[k]) {
      marked[k] = 1;
      indices->push_back(k);
    }
  };
  auto at = [&](int t) {
    return absl::MakeConstSpan(labels.data() + begin[t],
                               labels.data() + begin[t + 1]);
  };
  const int64_t bias = int64_t{L} * L;
  for (int32_t y : at(0)) add(bias + y);
  for (int32_t y : at(T - 1)) add(bias + L + y);
  for (int t = 1; t < T; ++t) {
    for (int32_t a : at(t - 1)) {
      for (int32_t b : at(t)) add(int64_t{a} * L + b);
    }
  }
  const int64_t trigrams = bias + 2 * L;
  for (int t = 2; structure_ != nullptr && t < T; ++t) {
    for (int32_t a : at(t - 2)) {
      for (int32_t b : at(t - 1)) {
        for (int32_t c : at(t)) {
          const int32_t k = structure_->trigram_index(a, b, c);
          if (k >= 0) add(trigrams + k);
        }
      }
    }
  }
  for (int64_t k : *indices) marked[k] = 0;
  return true;
}

double ChainProblem::StateDot(int i, const double* after_emission,
                              const Scores& scores, double gold_score,
                              const double* state) const {
  double expected = 0;
  const int64_t TL = PairStateOffset(i);
  for (int64_t k = 0; k < TL; ++k) expected += scores.unary[k] * state[k];
  const int64_t tail_offset = TailStateOffset(i);
  if (tail_offset > TL) {
    const double* pair_unary = scores.pair_unary;
    const int64_t P = layout_.num_pairs;
    // Row 0 of both is zero: no pair before the first label.
    for (int64_t k = P; k < tail_offset - TL; ++k) {
      expected += pair_unary[k] * state[TL + k];
    }
  }
  const double* tail = after_emission + (layout_.transition_offset() -
                                         layout_.pair_emission_offset());
  const double* tail_state = state + tail_offset;
  std::vector<int64_t>& support = ThreadScratch().tail_indices;
  const bool all = tail_full_.empty();  // the branch out of the loops
  if (TailSupport(i, state, &support)) {
    if (all) {
      for (int64_t k : support) expected += tail[k] * tail_state[k];
    } else {
      for (int64_t k : support) {
        expected += tail[tail_full_[k]] * tail_state[k];
      }
    }
  } else if (all) {
    for (int64_t k = 0; k < layout_.tail_size(); ++k) {
      expected += tail[k] * tail_state[k];
    }
  } else {
    for (int64_t k = 0; k < StateTailSize(); ++k) {
      expected += tail[tail_full_[k]] * tail_state[k];
    }
  }
  return gold_score - expected;
}

void ChainProblem::ScoreCorners(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores, double* state_dot) const {
  const ChainExample& example = examples_[i];
  Scores chain;
  // A cache's corners and a block state mixed from a few labelings need
  // the scores of a few labels a position, not all L.
  if (!ComputeCornerUnary(i, w, state, corners, count)) {
    std::vector<double>& unary = ThreadScratch().unary;
    unary.resize(static_cast<size_t>(Length(i)) * layout_.num_labels);
    if (free_space_) {
      free_rows_.ComputeUnaryScores(free_listed_labels_.data(), w,
                                    example.features, unary.data());
    } else {
      ComputeUnaryScores(layout_.num_labels, w, example.features, unary.data());
    }
  }
  FinishScores(i, w + EmissionEnd(), 1.0, &chain);
  const double gold_score = ScoreOf(chain, example.labels.data());
  for (int k = 0; k < count; ++k) {
    scores[k] = gold_score - ScoreOf(chain, corners[k]->data());
  }
  if (state != nullptr) {
    *state_dot = StateDot(i, w + EmissionEnd(), chain, gold_score, state);
  }
}

void ChainProblem::AddTailFeatures(const int32_t* y, int T, double c,
                                   double* tail) const {
  ForEachTailIndex(y, T, [&](int64_t k) { tail[k] += c; });
}

void ChainProblem::ForbidTransitions(Scores* scores, bool viterbi_only) const {
  if (allowed_.empty()) return;
  if (scores->first.pair == nullptr) scores->first.lists = &lists_;
  if (viterbi_only && scores->first.pair == nullptr) return;
  std::vector<double>& masked = ThreadScratch().masked_transition;
  const int64_t squared = static_cast<int64_t>(allowed_.size());
  masked.resize(squared);
  const double* transition = scores->first.transition;
  for (int64_t k = 0; k < squared; ++k) {
    masked[k] =
        allowed_[k] ? transition[k] : -std::numeric_limits<double>::infinity();
  }
  scores->first.transition = masked.data();
}

double ChainProblem::TailDistanceSquared(const int32_t* a, const int32_t* b,
                                         int T) const {
  // Counts at the indices a and b hit, in a scratch tail that is all 0
  // between calls; each index is read once and reset.
  std::vector<double>& counts = ThreadScratch().tail_counts;
  counts.resize(layout_.tail_size(), 0.0);
  ForEachTailIndex(a, T, [&](int64_t k) { counts[k] += 1; });
  ForEachTailIndex(b, T, [&](int64_t k) { counts[k] -= 1; });
  double norm = 0;
  auto take = [&](int64_t k) {
    norm += counts[k] * counts[k];
    counts[k] = 0;
  };
  ForEachTailIndex(a, T, take);
  ForEachTailIndex(b, T, take);
  return norm;
}

void ChainProblem::PairColumns(const int32_t* y, int T,
                               int32_t* columns) const {
  columns[0] = -1;
  for (int t = 1; t < T; ++t) columns[t] = PairColumn(y[t - 1], y[t]);
}

void ChainProblem::AddFeatures(int i, const int32_t* y, double c,
                               double* w) const {
  const ChainExample& example = examples_[i];
  const FeatureSequence& f = example.features;
  const int T = f.size();
  for (int t = 0; t < T; ++t) {
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      const int64_t at = EmissionCoordinate(f.buckets[k], y[t]);
      if (at >= 0) w[at] += c * f.value(k);
    }
  }
  if (layout_.num_pair_rows > 0) {
    const FeatureSequence& z = example.pair_features;
    const int64_t P = layout_.num_pairs;
    const int64_t offset = EmissionEnd();
    for (int t = 1; t < T; ++t) {
      const int32_t p = PairColumn(y[t - 1], y[t]);
      if (p < 0) continue;
      for (int32_t k = z.offsets[t]; k < z.offsets[t + 1]; ++k) {
        const int64_t row = offset + static_cast<int64_t>(z.buckets[k]) * P;
        w[row + p] += c * z.value(k);
      }
    }
  }
  AddTailFeatures(y, T, c, w + TailBegin());
}

void ChainProblem::AddScaled(int i, const Corner& y, double c,
                             double* w) const {
  AddFeatures(i, examples_[i].labels.data(), c, w);
  AddFeatures(i, y.data(), -c, w);
}

void ChainProblem::AddCornerDifference(int i, const Corner& a, const Corner& b,
                                       double c, double* w) const {
  // c·(ψ_i(a) − ψ_i(b)) = c·(φ(b) − φ(a)): the rows of the positions where
  // the labels (or the pair columns) differ, and the tails.
  const ChainExample& example = examples_[i];
  const FeatureSequence& f = example.features;
  const int T = f.size();
  for (int t = 0; t < T; ++t) {
    if (a[t] == b[t]) continue;
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      const double value = c * f.value(k);
      const int64_t at_b = EmissionCoordinate(f.buckets[k], b[t]);
      const int64_t at_a = EmissionCoordinate(f.buckets[k], a[t]);
      if (at_b >= 0) w[at_b] += value;
      if (at_a >= 0) w[at_a] -= value;
    }
  }
  if (layout_.num_pair_rows > 0) {
    std::vector<int32_t>& columns = ThreadScratch().pair_columns;
    columns.resize(2 * static_cast<size_t>(T));
    PairColumns(a.data(), T, columns.data());
    PairColumns(b.data(), T, columns.data() + T);
    const FeatureSequence& z = example.pair_features;
    const int64_t P = layout_.num_pairs;
    const int64_t offset = EmissionEnd();
    for (int t = 1; t < T; ++t) {
      const int32_t pa = columns[t], pb = columns[T + t];
      if (pa == pb) continue;
      for (int32_t k = z.offsets[t]; k < z.offsets[t + 1]; ++k) {
        double* row = w + offset + static_cast<int64_t>(z.buckets[k]) * P;
        const double value = c * z.value(k);
        if (pb >= 0) row[pb] += value;
        if (pa >= 0) row[pa] -= value;
      }
    }
  }
  double* tail = w + TailBegin();
  AddTailFeatures(b.data(), T, c, tail);
  AddTailFeatures(a.data(), T, -c, tail);
}

}  // namespace chaintag
