#include "models/chain_problem.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "models/smoothing.h"
#include "models/top_k_viterbi.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

// Per-thread scratch, so the oracles allocate nothing once warm.
struct Scratch {
  std::vector<double> unary;
  std::vector<double> scaled_tail;  // transitions and biases times a scale
  std::vector<double> difference;
  ViterbiDecoder decoder;
  TopKViterbi top_k;
  ForwardBackward forward_backward;
  std::vector<int32_t> labelings;
  std::vector<double> labeling_scores;
  std::vector<double> weights;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The chain scores of a sentence under w, its unary table in `unary`.
ChainScores SentenceScores(const ChainLayout& layout, const double* w,
                           const FeatureSequence& features,
                           std::vector<double>* unary) {
  const int T = features.size();
  unary->resize(static_cast<size_t>(T) * layout.num_labels);
  ComputeUnaryScores(layout, w, features, unary->data());
  return MakeChainScores(layout, w, T, unary->data());
}

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

// Σ_{a,b} G[a][b]·⟨d_a, d_b⟩ for the T×L emission part of a state
// difference, G given as its upper triangle row by row.
template <typename Gram>
double EmissionNormSquared(const Gram* gram_row, int T, int L,
                           const double* d) {
  double emission = 0;
  for (int a = 0; a < T; gram_row += T - a, ++a) {
    const double* da = d + static_cast<int64_t>(a) * L;
    double diagonal = 0;
    for (int k = 0; k < L; ++k) diagonal += da[k] * da[k];
    emission += gram_row[0] * diagonal;
    for (int b = a + 1; b < T; ++b) {
      const double g = gram_row[b - a];
      if (g == 0) continue;
      const double* db = d + static_cast<int64_t>(b) * L;
      double dot = 0;
      for (int k = 0; k < L; ++k) dot += da[k] * db[k];
      emission += 2 * g * dot;
    }
  }
  return emission;
}

}  // namespace

absl::Status ChainProblem::Validate(const ChainLayout& layout,
                                    const std::vector<ChainExample>& examples) {
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
    for (uint32_t bucket : example.features.buckets) {
      if (bucket >= layout.num_rows) {
        return absl::InvalidArgumentError(absl::StrCat(
            "example ", i, ": feature bucket ", bucket, " out of range"));
      }
    }
  }
  return absl::OkStatus();
}

ChainProblem::ChainProblem(ChainLayout layout,
                           std::vector<ChainExample> examples,
                           bool normalize_loss)
    : layout_(layout),
      examples_(std::move(examples)),
      normalize_loss_(normalize_loss) {
  // The upper triangle only, row by row: half the memory of the square.
  gram_offset_.resize(examples_.size() + 1);
  gram_offset_[0] = 0;
  for (size_t i = 0; i < examples_.size(); ++i) {
    const int64_t T = examples_[i].features.size();
    gram_offset_[i + 1] = gram_offset_[i] + T * (T + 1) / 2;
  }
  gram_.resize(gram_offset_.back());
  for (size_t i = 0; i < examples_.size(); ++i) {
    const FeatureSequence& f = examples_[i].features;
    const int T = f.size();
    double* gram = gram_.data() + gram_offset_[i];
    for (int a = 0; a < T; ++a) {
      for (int b = a; b < T; ++b) *gram++ = SparseDot(f, a, b);
    }
  }
  // Binary features give small integer counts: stored as 16-bit integers
  // (or floats) when that is exact, the same sums in a quarter (a half) of
  // the memory.
  bool integers = true, floats = true;
  for (double g : gram_) {
    integers &= g >= 0 && g <= 65535 && g == static_cast<uint16_t>(g);
    floats &= static_cast<double>(static_cast<float>(g)) == g;
  }
  if (integers) {
    gram_u16_.assign(gram_.begin(), gram_.end());
  } else if (floats) {
    gram_f32_.assign(gram_.begin(), gram_.end());
  } else {
    return;
  }
  gram_ = std::vector<double>();
}

std::vector<ChainExample> ChainProblem::TakeExamples() {
  std::vector<ChainExample> examples = std::move(examples_);
  examples_.clear();
  gram_offset_.assign(1, 0);
  gram_ = std::vector<double>();
  gram_f32_ = std::vector<float>();
  gram_u16_ = std::vector<uint16_t>();
  return examples;
}

double ChainProblem::LossUnit(int i) const {
  return normalize_loss_ ? 1.0 / examples_[i].labels.size() : 1.0;
}

void ChainProblem::AddLossToUnary(int i, double sign, double* unary) const {
  const std::vector<int32_t>& gold = examples_[i].labels;
  const int L = layout_.num_labels;
  const double unit = sign * LossUnit(i);
  for (size_t t = 0; t < gold.size(); ++t) {
    double* row = unary + static_cast<int64_t>(t) * L;
    for (int y = 0; y < L; ++y) row[y] += unit;
    row[gold[t]] -= unit;
  }
}

void ChainProblem::MaxOracle(int i, const double* w, const double* state,
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
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  const int L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  ChainScores scores =
      SentenceScores(layout_, w, example.features, &scratch.unary);
  double* unary = scratch.unary.data();
  if (scale != 1.0) {
    // Scale the (small) unary table and a copy of the transition and bias
    // weights; the emission rows are never touched.
    for (int64_t k = 0; k < static_cast<int64_t>(T) * L; ++k) {
      unary[k] *= scale;
    }
    const int64_t tail = static_cast<int64_t>(L) * L + 2 * L;
    scratch.scaled_tail.resize(tail);
    const double* source = w + layout_.transition_offset();
    for (int64_t k = 0; k < tail; ++k) {
      scratch.scaled_tail[k] = scale * source[k];
    }
    scores.transition = scratch.scaled_tail.data();
    scores.start = scores.transition + static_cast<int64_t>(L) * L;
    scores.end = scores.start + L;
  }
  const double gold_score = ScoreLabeling(scores, example.labels.data());
  for (int k = 0; k < count; ++k) {
    corner_scores[k] = gold_score - ScoreLabeling(scores, corners[k]->data());
  }

  result->state_dot =
      state != nullptr ? StateDot(i, w, unary, gold_score, state) : 0;

  // Loss augmentation, then plain Viterbi; the scores of the winner are
  // recomputed without it.
  AddLossToUnary(i, 1.0, unary);
  result->corner.resize(T);
  scratch.decoder.Decode(scores, result->corner.data());
  AddLossToUnary(i, -1.0, unary);
  int wrong = 0;
  for (int t = 0; t < T; ++t) wrong += result->corner[t] != example.labels[t];
  result->loss = wrong * LossUnit(i);
  result->score = gold_score - ScoreLabeling(scores, result->corner.data());
}

double ChainProblem::SmoothedOracle(int i, const double* w,
                                    const Smoothing& smoothing,
                                    double* state) const {
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  Scratch& scratch = ThreadScratch();
  const ChainScores scores =
      SentenceScores(layout_, w, example.features, &scratch.unary);
  const double gold_score = ScoreLabeling(scores, example.labels.data());
  // h(y) = L(y) + ⟨w, φ(y)⟩ − ⟨w, φ(y_i)⟩: augmented scores minus gold's.
  AddLossToUnary(i, 1.0, scratch.unary.data());
  const int64_t size = BlockStateSize(i);
  switch (smoothing.kind) {
    case Smoothing::Kind::kEntropy:
      return scratch.forward_backward.Compute(scores, smoothing.mu, state) -
             gold_score;
    case Smoothing::Kind::kTopKL2: {
      const int count =
          scratch.top_k.Decode(scores, smoothing.top_k, &scratch.labelings,
                               &scratch.labeling_scores);
      scratch.weights.resize(count);
      const double value =
          ProjectScoresOntoSimplex(scratch.labeling_scores.data(), count,
                                   smoothing.mu, scratch.weights.data());
      std::fill(state, state + size, 0.0);
      for (int k = 0; k < count; ++k) {
        if (scratch.weights[k] > 0) {
          AddLabelingToState(i, scratch.labelings.data() + k * T,
                             scratch.weights[k], state);
        }
      }
      return value - gold_score;
    }
    case Smoothing::Kind::kNone:
    default: {
      scratch.labelings.resize(T);
      const double best =
          scratch.decoder.Decode(scores, scratch.labelings.data());
      std::fill(state, state + size, 0.0);
      AddLabelingToState(i, scratch.labelings.data(), 1.0, state);
      return best - gold_score;
    }
  }
}

void ChainProblem::TouchedRanges(int i,
                                 std::vector<CoordinateRange>* ranges) const {
  const FeatureSequence& f = examples_[i].features;
  const int64_t L = layout_.num_labels;
  // Sized once and filled field by field: push_back of each range cost a
  // store-forwarding stall per feature (the svrg step's hot loop).
  const int32_t total = f.offsets[f.size()];
  const size_t first = ranges->size();
  ranges->resize(first + total + 1);
  CoordinateRange* out = ranges->data() + first;
  const uint32_t* buckets = f.buckets.data();
  for (int32_t k = 0; k < total; ++k) {
    out[k].begin = static_cast<int64_t>(buckets[k]) * L;
    out[k].length = L;
  }
  out[total].begin = layout_.transition_offset();
  out[total].length = layout_.dim() - layout_.transition_offset();
}

void ChainProblem::Decode(int i, const double* w, Corner* corner) const {
  const ChainExample& example = examples_[i];
  const int T = example.features.size();
  Scratch& scratch = ThreadScratch();
  corner->resize(T);
  scratch.decoder.Decode(
      SentenceScores(layout_, w, example.features, &scratch.unary),
      corner->data());
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

double ChainProblem::StateDot(int i, const double* w, const double* unary,
                              double gold_score, const double* state) const {
  const int T = examples_[i].features.size();
  const int L = layout_.num_labels;
  double expected = 0;
  const int64_t TL = static_cast<int64_t>(T) * L;
  for (int64_t k = 0; k < TL; ++k) expected += unary[k] * state[k];
  const double* rest = w + layout_.transition_offset();
  const int64_t rest_size = static_cast<int64_t>(L) * L + 2 * L;
  for (int64_t k = 0; k < rest_size; ++k) expected += rest[k] * state[TL + k];
  return gold_score - expected;
}

void ChainProblem::ScoreCorners(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores, double* state_dot) const {
  const ChainExample& example = examples_[i];
  Scratch& scratch = ThreadScratch();
  const ChainScores chain =
      SentenceScores(layout_, w, example.features, &scratch.unary);
  const double* unary = scratch.unary.data();
  const double gold_score = ScoreLabeling(chain, example.labels.data());
  for (int k = 0; k < count; ++k) {
    scores[k] = gold_score - ScoreLabeling(chain, corners[k]->data());
  }
  if (state != nullptr) {
    *state_dot = StateDot(i, w, unary, gold_score, state);
  }
}

void ChainProblem::AddFeatures(int i, const int32_t* y, double c,
                               double* w) const {
  const FeatureSequence& f = examples_[i].features;
  const int T = f.size();
  const int L = layout_.num_labels;
  for (int t = 0; t < T; ++t) {
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      w[static_cast<int64_t>(f.buckets[k]) * L + y[t]] += c * f.value(k);
    }
    if (t > 0) w[layout_.transition_offset() + y[t - 1] * L + y[t]] += c;
  }
  w[layout_.start_offset() + y[0]] += c;
  w[layout_.end_offset() + y[T - 1]] += c;
}

void ChainProblem::AddScaled(int i, const Corner& y, double c,
                             double* w) const {
  AddFeatures(i, examples_[i].labels.data(), c, w);
  AddFeatures(i, y.data(), -c, w);
}

int64_t ChainProblem::BlockStateSize(int i) const {
  const int64_t L = layout_.num_labels;
  return examples_[i].features.size() * L + L * L + 2 * L;
}

void ChainProblem::InitBlockState(int i, double* state) const {
  std::fill(state, state + BlockStateSize(i), 0.0);
  MixCorner(i, examples_[i].labels, 1.0, state);
}

void ChainProblem::MixCorner(int i, const Corner& y, double gamma,
                             double* state) const {
  const int64_t size = BlockStateSize(i);
  for (int64_t k = 0; k < size; ++k) state[k] *= 1.0 - gamma;
  AddCornerToState(i, y, gamma, state);
}

void ChainProblem::AddCornerToState(int i, const Corner& y, double c,
                                    double* state) const {
  AddLabelingToState(i, y.data(), c, state);
}

void ChainProblem::AddLabelingToState(int i, const int32_t* y, double c,
                                      double* state) const {
  const int T = examples_[i].features.size();
  const int L = layout_.num_labels;
  const int64_t TL = static_cast<int64_t>(T) * L;
  for (int t = 0; t < T; ++t) {
    state[static_cast<int64_t>(t) * L + y[t]] += c;
    if (t > 0) state[TL + y[t - 1] * L + y[t]] += c;
  }
  state[TL + L * L + y[0]] += c;
  state[TL + L * L + L + y[T - 1]] += c;
}

double ChainProblem::StateDistanceSquared(int i, const double* state,
                                          const Corner& y) const {
  // ‖φ(y) − E_β φ‖²: φ(y_i) cancels between v_i and ψ_i(y).
  const int64_t size = BlockStateSize(i);
  Scratch& scratch = ThreadScratch();
  scratch.difference.resize(size);
  double* d = scratch.difference.data();
  for (int64_t k = 0; k < size; ++k) d[k] = -state[k];
  AddCornerToState(i, y, 1.0, d);
  return StateDifferenceNormSquared(i, d);
}

double ChainProblem::CornerDistanceSquared(int i, const Corner& a,
                                           const Corner& b) const {
  // ψ_i(a) − ψ_i(b) = φ(b) − φ(a): the difference of two indicator states.
  const int64_t size = BlockStateSize(i);
  Scratch& scratch = ThreadScratch();
  scratch.difference.assign(size, 0.0);
  double* d = scratch.difference.data();
  AddCornerToState(i, a, 1.0, d);
  AddCornerToState(i, b, -1.0, d);
  return StateDifferenceNormSquared(i, d);
}

double ChainProblem::StateDifferenceNormSquared(int i, const double* d) const {
  const int T = examples_[i].features.size();
  const int L = layout_.num_labels;
  const int64_t TL = static_cast<int64_t>(T) * L;
  const int64_t offset = gram_offset_[i];
  const double emission =
      !gram_u16_.empty()
          ? EmissionNormSquared(gram_u16_.data() + offset, T, L, d)
      : !gram_f32_.empty()
          ? EmissionNormSquared(gram_f32_.data() + offset, T, L, d)
          : EmissionNormSquared(gram_.data() + offset, T, L, d);
  double rest = 0;
  for (int64_t k = TL; k < BlockStateSize(i); ++k) rest += d[k] * d[k];
  return emission + rest;
}

void ChainProblem::AddCornerMinusState(int i, const Corner& y,
                                       const double* state, double c,
                                       double* w) const {
  // ψ_i(y) − v_i = E_β φ − φ(y).
  const FeatureSequence& f = examples_[i].features;
  const int T = f.size();
  const int L = layout_.num_labels;
  Scratch& scratch = ThreadScratch();
  scratch.difference.resize(L);
  double* d = scratch.difference.data();
  const int32_t total = f.offsets[T];
  for (int t = 0; t < T; ++t) {
    const double* marginal = state + static_cast<int64_t>(t) * L;
    for (int k = 0; k < L; ++k) d[k] = c * marginal[k];
    d[y[t]] -= c;
    for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      if (k + kPrefetchDistance < total) {
        PrefetchRow(
            w + static_cast<int64_t>(f.buckets[k + kPrefetchDistance]) * L, L);
      }
      const double value = f.value(k);
      double* row = w + static_cast<int64_t>(f.buckets[k]) * L;
      for (int l = 0; l < L; ++l) row[l] += value * d[l];
    }
  }
  const int64_t TL = static_cast<int64_t>(T) * L;
  double* rest = w + layout_.transition_offset();
  const int64_t rest_size = static_cast<int64_t>(L) * L + 2 * L;
  for (int64_t k = 0; k < rest_size; ++k) rest[k] += c * state[TL + k];
  for (int t = 1; t < T; ++t) rest[y[t - 1] * L + y[t]] -= c;
  rest[L * L + y[0]] -= c;
  rest[L * L + L + y[T - 1]] -= c;
}

}  // namespace chaintag
