#include "models/second_order.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/cpu_dispatch.h"
#include "models/log_sum_exp.h"
#include "models/top_k_merge.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// Fills `slots` (one per label tuple, −1 = none) with each tuple's position
// in `tuples`; fails on a label out of range or a repeated tuple.
template <size_t N>
absl::Status IndexTuples(const std::vector<std::array<int32_t, N>>& tuples,
                         int num_labels, const char* what,
                         std::vector<int32_t>* slots) {
  size_t count = 1;
  for (size_t i = 0; i < N; ++i) count *= static_cast<size_t>(num_labels);
  slots->assign(count, -1);
  for (size_t k = 0; k < tuples.size(); ++k) {
    size_t slot = 0;
    for (int32_t label : tuples[k]) {
      if (label < 0 || label >= num_labels) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " ", k, " has label ", label, ", not in [0, ",
                         num_labels, ")"));
      }
      slot = slot * num_labels + label;
    }
    if ((*slots)[slot] != -1) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", k, " repeats ", what, " ", (*slots)[slot]));
    }
    (*slots)[slot] = static_cast<int32_t>(k);
  }
  return absl::OkStatus();
}

// Four doubles: one AVX2 register, two SSE2 ones in the default build.
// Written explicitly because GCC unrolls the fixed-width loops below into
// scalar code instead of vectorising them.
using Vector4 = double __attribute__((vector_size(32)));
// What the last block's kernel may store past the last row: less than a
// vector.
constexpr size_t kVectorSlack = 4;

// One block's max-plus step for 4·kVectors of its targets:
// out[j] = max_i ((previous[sources[i]] + unary) + edge[i·stride + j]). The
// padded rows hold 4·kVectors columns, so the maxima stay in registers and
// the loops have no remainder; whole vectors are stored, past the block's
// last target if it has fewer (see SecondOrderViterbi::Advance). Sources
// outermost, as in ViterbiDecoder; max is exact, so the order of the candidates
// does not change the values.
template <int kVectors>
__attribute__((always_inline)) inline void MaxPlusColumnsOf(
    const double* previous, const int32_t* sources, int num_sources,
    double unary, const double* edge, int stride, double* out) {
  Vector4 best[kVectors];
  const double from_first = previous[sources[0]] + unary;
  for (int v = 0; v < kVectors; ++v) {
    Vector4 weight;
    std::memcpy(&weight, edge + 4 * v, sizeof(weight));
    best[v] = from_first + weight;
  }
  for (int i = 1; i < num_sources; ++i) {
    const double from = previous[sources[i]] + unary;
    const double* row = edge + static_cast<size_t>(i) * stride;
    for (int v = 0; v < kVectors; ++v) {
      Vector4 weight;
      std::memcpy(&weight, row + 4 * v, sizeof(weight));
      const Vector4 candidate = from + weight;
      best[v] = best[v] < candidate ? candidate : best[v];
    }
  }
  std::memcpy(out, best, sizeof(best));
}

// The forward–backward sums a block's products of factors in [0, 1] and
// takes their log; below kMinSum it redoes that one sum as a log-sum-exp.
// Above it, the largest product is at least kMinSum / L, so products that
// underflowed (< 1e−308) change the sum by less than 1e−100 of itself.
constexpr double kMinSum = 1e-200;
// Below this, a product of factors may have lost digits to underflow.
constexpr double kMinProduct = 1e-290;

// Subtracts the row's max from it (unless it is −∞: nothing is allowed) and
// returns it: the messages stay the size of one position's scores, at no
// exp.
double ShiftToMaxZero(double* x, int n) {
  double top = kMinusInfinity;
  for (int i = 0; i < n; ++i) top = std::max(top, x[i]);
  if (top == kMinusInfinity) return top;
  for (int i = 0; i < n; ++i) x[i] -= top;
  return top;
}

// Writes exp(x[i] − max) / Σ_i exp(x[i] − max) over x and returns the
// log-sum-exp of x: one exp per entry. x must have a finite entry.
double NormalisedExp(double* x, int n) {
  double top = kMinusInfinity;
  for (int i = 0; i < n; ++i) top = std::max(top, x[i]);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - top);
    sum += x[i];
  }
  const double inverse = 1 / sum;
  for (int i = 0; i < n; ++i) x[i] *= inverse;
  return top + std::log(sum);
}

}  // namespace

absl::StatusOr<SecondOrderStructure> SecondOrderStructure::Create(
    int num_labels, const TransitionConstraints& constraints,
    std::vector<LabelTrigram> trigrams, std::vector<LabelPair> pairs) {
  if (num_labels < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative number of labels: ", num_labels));
  }
  // A default-constructed TransitionConstraints has no labels and allows
  // everything, whatever the label count.
  if (constraints.num_labels() != 0 && constraints.num_labels() != num_labels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the transition constraints have ", constraints.num_labels(),
        " labels, the model ", num_labels));
  }
  SecondOrderStructure structure;
  structure.num_labels_ = num_labels;
  absl::Status status =
      IndexTuples(trigrams, num_labels, "trigram", &structure.trigram_index_);
  if (!status.ok()) return status;
  status = IndexTuples(pairs, num_labels, "pair", &structure.pair_index_);
  if (!status.ok()) return status;
  structure.trigrams_ = std::move(trigrams);
  structure.pairs_ = std::move(pairs);
  structure.BuildLattice(constraints);
  return structure;
}

void SecondOrderStructure::BuildLattice(
    const TransitionConstraints& constraints) {
  const int L = num_labels_;
  const bool constrained =
      constraints.num_labels() != 0 && !constraints.trivial();
  start_allowed_.assign(L, 1);
  end_allowed_.assign(L, 1);
  state_of_pair_.assign(static_cast<size_t>(L) * L, -1);
  blocks_.assign(L, Block());
  for (int a = 0; a < L; ++a) {
    if (constrained) {
      start_allowed_[a] = constraints.start_allowed(a);
      end_allowed_[a] = constraints.end_allowed(a);
    }
    blocks_[a].first_target = num_states();
    for (int b = 0; b < L; ++b) {
      if (constrained && !constraints.transition_allowed(a, b)) continue;
      const int32_t state = num_states();
      state_of_pair_[static_cast<size_t>(a) * L + b] = state;
      state_labels_.push_back({a, b});
      if (pair_index(a, b) >= 0) {
        weighted_states_.push_back({state, pair_index(a, b)});
      }
    }
    blocks_[a].num_targets = num_states() - blocks_[a].first_target;
  }
  for (int b = 0; b < L; ++b) BuildBlock(b);
}

void SecondOrderStructure::BuildBlock(int b) {
  const int L = num_labels_;
  Block& block = blocks_[b];
  block.first_source = static_cast<int32_t>(source_state_.size());
  block.first_edge = static_cast<int32_t>(edge_trigram_.size());
  block.row_stride = (block.num_targets + 3) / 4 * 4;
  for (int a = 0; a < L; ++a) {
    const int32_t source = state_of_pair_[static_cast<size_t>(a) * L + b];
    if (source < 0) continue;
    source_state_.push_back(source);
    for (int j = 0; j < block.row_stride; ++j) {
      const int32_t edge = static_cast<int32_t>(edge_trigram_.size());
      if (j >= block.num_targets) {
        edge_trigram_.push_back(-1);
        continue;
      }
      const int32_t target = block.first_target + j;
      const int32_t trigram = trigram_index(a, b, state_labels_[target][1]);
      edge_trigram_.push_back(trigram);
      if (trigram >= 0) {
        weighted_edges_.push_back({edge, source, target, trigram});
      }
    }
  }
  block.num_sources =
      static_cast<int32_t>(source_state_.size()) - block.first_source;
  num_edges_ += block.num_sources * block.num_targets;
}

int SecondOrderStructure::num_labels() const { return num_labels_; }
int SecondOrderStructure::num_trigrams() const {
  return static_cast<int>(trigrams_.size());
}
int SecondOrderStructure::num_pairs() const {
  return static_cast<int>(pairs_.size());
}
const std::vector<LabelTrigram>& SecondOrderStructure::trigrams() const {
  return trigrams_;
}
const std::vector<LabelPair>& SecondOrderStructure::pairs() const {
  return pairs_;
}
int32_t SecondOrderStructure::trigram_index(int a, int b, int c) const {
  return trigram_index_[(static_cast<size_t>(a) * num_labels_ + b) *
                            num_labels_ +
                        c];
}
int32_t SecondOrderStructure::pair_index(int a, int b) const {
  return pair_index_[static_cast<size_t>(a) * num_labels_ + b];
}
int SecondOrderStructure::num_states() const {
  return static_cast<int>(state_labels_.size());
}
int SecondOrderStructure::num_edges() const { return num_edges_; }

bool SecondOrderStructure::IsAllowed(const int32_t* labels, int length) const {
  if (length == 0) return true;
  if (!start_allowed_[labels[0]] || !end_allowed_[labels[length - 1]]) {
    return false;
  }
  for (int t = 1; t < length; ++t) {
    const size_t pair = static_cast<size_t>(labels[t - 1]) * num_labels_;
    if (state_of_pair_[pair + labels[t]] < 0) return false;
  }
  return true;
}

void SecondOrderStructure::EdgeScores(const double* trigram,
                                      double* edge_score) const {
  // Scattering the weighted few avoids a mispredicted branch per edge.
  std::fill(edge_score, edge_score + edge_trigram_.size(), 0.0);
  for (const WeightedEdge& edge : weighted_edges_) {
    edge_score[edge.edge] = trigram[edge.trigram];
  }
}

void SecondOrderStructure::TransitionEdgeScores(const SecondOrderScores& scores,
                                                double* edge_score) const {
  const int L = num_labels_;
  for (int b = 0; b < L; ++b) {
    const Block& block = blocks_[b];
    const double* transition = scores.transition + static_cast<size_t>(b) * L;
    double* rows = edge_score + block.first_edge;
    for (int j = 0; j < block.row_stride; ++j) {
      rows[j] = j < block.num_targets
                    ? transition[state_labels_[block.first_target + j][1]]
                    : 0.0;
    }
    for (int i = 1; i < block.num_sources; ++i) {
      std::copy(rows, rows + block.row_stride, rows + i * block.row_stride);
    }
  }
  for (const WeightedEdge& edge : weighted_edges_) {
    edge_score[edge.edge] =
        scores.trigram[edge.trigram] + edge_score[edge.edge];
  }
}

void SecondOrderStructure::AddPairScores(const SecondOrderScores& scores, int t,
                                         double* state_score) const {
  if (weighted_states_.empty()) return;
  const double* pair_unary =
      scores.pair_unary + static_cast<size_t>(t) * pairs_.size();
  for (const WeightedState& weighted : weighted_states_) {
    state_score[weighted.state] += pair_unary[weighted.column];
  }
}

void SecondOrderStructure::StateScores(const SecondOrderScores& scores, int t,
                                       double* state_score) const {
  const int L = num_labels_;
  const double* unary = scores.unary + static_cast<size_t>(t) * L;
  for (size_t s = 0; s < state_labels_.size(); ++s) {
    const auto [a, b] = state_labels_[s];
    state_score[s] =
        scores.transition[static_cast<size_t>(a) * L + b] + unary[b];
  }
  AddPairScores(scores, t, state_score);
}

// Sums in exactly the decoders' order, so that a decoded score equals this
// one to the bit: per position, the edge (the trigram plus the transition,
// which the decoders precompute per sentence), then the pair column, then
// the unary (which the decoders add once per source state, as it is the
// same for all the edges leaving it).
double ScoreLabeling(const SecondOrderStructure& structure,
                     const SecondOrderScores& scores, const int32_t* labels) {
  const int T = scores.length;
  if (T == 0) return 0;
  const int L = structure.num_labels();
  const int P = structure.num_pairs();
  double total = scores.start[labels[0]] + scores.unary[labels[0]];
  for (int t = 1; t < T; ++t) {
    const int32_t a = labels[t - 1], b = labels[t];
    double edge = scores.transition[static_cast<size_t>(a) * L + b];
    if (t >= 2) {
      const int32_t k = structure.trigram_index(labels[t - 2], a, b);
      if (k >= 0) edge = scores.trigram[k] + edge;
    }
    total += edge;
    const int32_t column = structure.pair_index(a, b);
    if (column >= 0) {
      total += scores.pair_unary[static_cast<size_t>(t) * P + column];
    }
    total += scores.unary[static_cast<size_t>(t) * L + b];
  }
  return total + scores.end[labels[T - 1]];
}

// Rows of delta_ leave out their position's unary (see Advance).
double SecondOrderViterbi::Decode(const SecondOrderStructure& structure,
                                  const SecondOrderScores& scores,
                                  int32_t* labels) {
  const int T = scores.length;
  if (T == 0) return 0;
  const int L = structure.num_labels_;
  const int S = structure.num_states();
  delta_.resize(structure.RowOffset(T) + kVectorSlack);
  double* first = delta_.data();
  for (int y = 0; y < L; ++y) {
    first[y] = structure.start_allowed_[y] ? scores.start[y] : kMinusInfinity;
  }
  if (T > 1) {
    double* second = delta_.data() + structure.RowOffset(1);
    for (int s = 0; s < S; ++s) {
      const auto [a, b] = structure.state_labels_[s];
      second[s] = (first[a] + scores.unary[a]) +
                  scores.transition[static_cast<size_t>(a) * L + b];
    }
    structure.AddPairScores(scores, 1, second);
  }
  if (T > 2) {
    edge_score_.resize(structure.num_edge_slots());
    structure.TransitionEdgeScores(scores, edge_score_.data());
  }
  for (int t = 2; t < T; ++t) Advance(structure, scores, t);
  // The best final label (T = 1) or state; ties to the lowest.
  const double* last = delta_.data() + structure.RowOffset(T - 1);
  const double* unary = scores.unary + static_cast<size_t>(T - 1) * L;
  double best = kMinusInfinity;
  int32_t choice = -1;
  for (int cell = 0; cell < (T == 1 ? L : S); ++cell) {
    const int32_t y = T == 1 ? cell : structure.state_labels_[cell][1];
    const double candidate = (last[cell] + unary[y]) + scores.end[y];
    if (structure.end_allowed_[y] && candidate > best) {
      best = candidate;
      choice = cell;
    }
  }
  if (choice < 0) {
    std::fill(labels, labels + T, 0);
  } else if (T == 1) {
    labels[0] = choice;
  } else {
    Backtrack(structure, scores, T, choice, labels);
  }
  return best;
}

// Also built for AVX2 and picked at load time where the CPU has it, as
// ViterbiDecoder::Decode is: the max-plus kernels run four targets wide.
// The sources of a block (a, b) all end in b, so b's unary at t − 1 is
// added once per source rather than once per state at t − 1.
CHAINTAG_AVX2_CLONES void SecondOrderViterbi::Advance(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    int t) {
  const double* previous = delta_.data() + structure.RowOffset(t - 1);
  double* current = delta_.data() + structure.RowOffset(t);
  const double* unary =
      scores.unary + static_cast<size_t>(t - 1) * structure.num_labels_;
  for (int b = 0; b < structure.num_labels_; ++b) {
    const SecondOrderStructure::Block& block = structure.blocks_[b];
    const int n = block.num_targets;
    double* out = current + block.first_target;
    if (block.num_sources == 0) {
      std::fill(out, out + n, kMinusInfinity);
      continue;
    }
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const double* edge = edge_score_.data() + block.first_edge;
    // Up to 16 targets at a time, their maxima in registers (a switch, not
    // a table of kernels, so that each is inlined into this clone). The
    // kernels store whole vectors: the slots past the block belong to later
    // blocks (or rows, or delta_'s slack), written after this one.
    for (int j = 0; j < n; j += 16) {
      const int columns = std::min(16, n - j);
      auto kernel = [&](auto width) {
        MaxPlusColumnsOf<decltype(width)::value>(
            previous, sources, block.num_sources, unary[b], edge + j,
            block.row_stride, out + j);
      };
      switch ((columns + 3) / 4) {
        case 1:
          kernel(std::integral_constant<int, 1>());
          break;
        case 2:
          kernel(std::integral_constant<int, 2>());
          break;
        case 3:
          kernel(std::integral_constant<int, 3>());
          break;
        default:
          kernel(std::integral_constant<int, 4>());
      }
    }
  }
  structure.AddPairScores(scores, t, current);
}

void SecondOrderViterbi::Backtrack(const SecondOrderStructure& structure,
                                   const SecondOrderScores& scores, int length,
                                   int32_t state, int32_t* labels) const {
  labels[length - 1] = structure.state_labels_[state][1];
  // The argmax for the chosen state only, from the same sums; the strict
  // '>' over ascending sources (a) keeps the lowest y_{t−2} on ties.
  for (int t = length - 1; t >= 2; --t) {
    const int32_t b = structure.state_labels_[state][0];
    const SecondOrderStructure::Block& block = structure.blocks_[b];
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const double* previous = delta_.data() + structure.RowOffset(t - 1);
    const double unary =
        scores.unary[static_cast<size_t>(t - 1) * structure.num_labels_ + b];
    const double* edge =
        edge_score_.data() + block.first_edge + (state - block.first_target);
    int32_t from = sources[0];
    double best = (previous[from] + unary) + edge[0];
    for (int i = 1; i < block.num_sources; ++i) {
      const double candidate = (previous[sources[i]] + unary) +
                               edge[static_cast<size_t>(i) * block.row_stride];
      if (candidate > best) {
        best = candidate;
        from = sources[i];
      }
    }
    labels[t - 1] = b;
    state = from;
  }
  labels[0] = structure.state_labels_[state][0];
}

int SecondOrderTopK::Decode(const SecondOrderStructure& structure,
                            const SecondOrderScores& scores, int k,
                            std::vector<int32_t>* labelings,
                            std::vector<double>* labeling_scores) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const int width = k <= 0 ? 0 : TopKWidth(k, L, T);
  if (width == 0) {
    labelings->clear();
    labeling_scores->clear();
    return 0;
  }
  if (T == 0) {
    labelings->clear();
    labeling_scores->assign(1, 0.0);
    return 1;
  }
  const size_t cells = structure.RowOffset(T);
  score_.resize(cells * width);
  from_cell_.resize(cells * width);
  from_rank_.resize(cells * width);
  count_.resize(cells);
  // Position 0: one partial labeling per allowed start, none where its score
  // is −∞.
  for (int y = 0; y < L; ++y) {
    const double value = scores.start[y] + scores.unary[y];
    score_[static_cast<size_t>(y) * width] = value;
    count_[y] = structure.start_allowed_[y] && value != kMinusInfinity;
  }
  if (T > 1) {
    // Position 1: each state (a, b) extends the one labeling of a.
    const size_t row = structure.RowOffset(1);
    for (int s = 0; s < structure.num_states(); ++s) {
      const auto [a, b] = structure.state_labels_[s];
      const size_t entry = (row + s) * width;
      score_[entry] = score_[static_cast<size_t>(a) * width] +
                      scores.transition[static_cast<size_t>(a) * L + b];
      from_cell_[entry] = a;
      from_rank_[entry] = 0;
      count_[row + s] = count_[a];
      CompleteCell(structure, scores, 1, s, width);
    }
  }
  if (T > 2) {
    edge_score_.resize(structure.num_edge_slots());
    structure.TransitionEdgeScores(scores, edge_score_.data());
  }
  for (int t = 2; t < T; ++t) Advance(structure, scores, t, width);
  const int m = Finish(structure, scores, width);
  labelings->resize(static_cast<size_t>(m) * T);
  labeling_scores->assign(final_score_.begin(), final_score_.begin() + m);
  for (int j = 0; j < m; ++j) {
    Backtrack(structure, T, width, j,
              labelings->data() + static_cast<size_t>(j) * T);
  }
  return m;
}

// SecondOrderViterbi adds a position's unary when it reads the row; the
// cells hold it, which sums the same.
void SecondOrderTopK::CompleteCell(const SecondOrderStructure& structure,
                                   const SecondOrderScores& scores, int t,
                                   int32_t state, int width) {
  const size_t cell = structure.RowOffset(t) + state;
  double* value = &score_[cell * width];
  const auto [a, b] = structure.state_labels_[state];
  const int32_t column = structure.pair_index(a, b);
  const double pair_score =
      column < 0
          ? 0.0
          : scores.pair_unary[static_cast<size_t>(t) * structure.num_pairs() +
                              column];
  const double unary =
      scores.unary[static_cast<size_t>(t) * structure.num_labels_ + b];
  int count = count_[cell];
  for (int r = 0; r < count; ++r) {
    if (column >= 0) value[r] += pair_score;
    value[r] += unary;
  }
  while (count > 0 && value[count - 1] == kMinusInfinity) --count;
  count_[cell] = count;
}

void SecondOrderTopK::Advance(const SecondOrderStructure& structure,
                              const SecondOrderScores& scores, int t,
                              int width) {
  const size_t previous = structure.RowOffset(t - 1);
  const size_t row = structure.RowOffset(t);
  const double* previous_scores = score_.data() + previous * width;
  const int32_t* previous_counts = count_.data() + previous;
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const double* edge = edge_score_.data() + block.first_edge;
    for (int j = 0; j < block.num_targets; ++j) {
      const size_t cell = row + block.first_target + j;
      count_[cell] = MergeSortedLists(
          previous_scores, previous_counts, width, sources, block.num_sources,
          edge + j, block.row_stride, &score_[cell * width],
          &from_cell_[cell * width], &from_rank_[cell * width]);
      CompleteCell(structure, scores, t, block.first_target + j, width);
    }
  }
}

int SecondOrderTopK::Finish(const SecondOrderStructure& structure,
                            const SecondOrderScores& scores, int width) {
  const int T = scores.length;
  final_cells_.clear();
  final_offsets_.clear();
  if (T == 1) {
    for (int y = 0; y < structure.num_labels_; ++y) {
      if (!structure.end_allowed_[y]) continue;
      final_cells_.push_back(y);
      final_offsets_.push_back(scores.end[y]);
    }
  } else {
    for (int s = 0; s < structure.num_states(); ++s) {
      const int32_t y = structure.state_labels_[s][1];
      if (!structure.end_allowed_[y]) continue;
      final_cells_.push_back(s);
      final_offsets_.push_back(scores.end[y]);
    }
  }
  final_score_.resize(width);
  final_cell_.resize(width);
  final_rank_.resize(width);
  const size_t last = structure.RowOffset(T - 1);
  return MergeSortedLists(score_.data() + last * width, count_.data() + last,
                          width, final_cells_.data(),
                          static_cast<int>(final_cells_.size()),
                          final_offsets_.data(), 1, final_score_.data(),
                          final_cell_.data(), final_rank_.data());
}

void SecondOrderTopK::Backtrack(const SecondOrderStructure& structure,
                                int length, int width, int rank_in_final,
                                int32_t* labels) const {
  int32_t cell = final_cell_[rank_in_final];
  int32_t rank = final_rank_[rank_in_final];
  for (int t = length - 1; t >= 1; --t) {
    labels[t] = structure.state_labels_[cell][1];
    const size_t entry = (structure.RowOffset(t) + cell) * width + rank;
    cell = from_cell_[entry];
    rank = from_rank_[entry];
  }
  labels[0] = cell;  // position 0's cells are labels
}

int64_t SecondOrderForwardBackward::MarginalsSize(
    const SecondOrderStructure& structure, int length) {
  const int64_t L = structure.num_labels();
  return length * (L + structure.num_pairs()) + L * L + 2 * L +
         structure.num_trigrams();
}

double SecondOrderForwardBackward::Compute(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    double mu, double* marginals) {
  assert(mu > 0);
  if (marginals != nullptr) {
    std::fill(marginals, marginals + MarginalsSize(structure, scores.length),
              0.0);
  }
  if (scores.length == 0) return 0;
  const double inv_mu = 1 / mu;
  Prepare(structure, scores, inv_mu);
  const double log_z = Forward(structure, scores, inv_mu);
  if (marginals != nullptr && log_z != kMinusInfinity) {
    Backward(structure, scores, inv_mu);
    WriteMarginals(structure, scores, inv_mu, marginals);
  }
  return mu * log_z;
}

void SecondOrderForwardBackward::Prepare(const SecondOrderStructure& structure,
                                         const SecondOrderScores& scores,
                                         double inv_mu) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const size_t S = structure.num_states();
  state_score_.resize(T * S);
  for (int t = 1; t < T; ++t) {
    double* row = state_score_.data() + t * S;
    structure.StateScores(scores, t, row);
    for (size_t s = 0; s < S; ++s) row[s] *= inv_mu;
  }
  terms_.resize(std::max<size_t>(L, S));
  factor_.resize(L);
  sum_.resize((L + 3) / 4 * 4);  // a block's padded row
  if (T < 3) return;
  const size_t slots = structure.num_edge_slots();
  edge_score_.resize(slots);
  edge_factor_.resize(slots);
  column_max_.resize(S);
  structure.EdgeScores(scores.trigram, edge_score_.data());
  for (size_t e = 0; e < slots; ++e) edge_score_[e] *= inv_mu;
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int n = block.num_targets;
    double* top = column_max_.data() + block.first_target;
    std::fill(top, top + n, kMinusInfinity);
    for (int i = 0; i < block.num_sources; ++i) {
      const double* row =
          edge_score_.data() + block.first_edge + i * block.row_stride;
      for (int j = 0; j < n; ++j) top[j] = std::max(top[j], row[j]);
    }
    // Edges without a weight (most of them) share their column's factor.
    for (int j = 0; j < n; ++j) {
      factor_[j] = top[j] == kMinusInfinity ? 0 : std::exp(-top[j]);
    }
    for (int i = 0; i < block.num_sources; ++i) {
      const size_t row = block.first_edge + i * block.row_stride;
      for (int j = 0; j < block.row_stride; ++j) {
        edge_factor_[row + j] = j < n ? factor_[j] : 0.0;
      }
    }
  }
  for (const SecondOrderStructure::WeightedEdge& edge :
       structure.weighted_edges_) {
    const double top = column_max_[edge.target];
    if (top != kMinusInfinity) {
      edge_factor_[edge.edge] = std::exp(edge_score_[edge.edge] - top);
    }
  }
}

double SecondOrderForwardBackward::Forward(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    double inv_mu) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const int S = structure.num_states();
  alpha_.resize(structure.RowOffset(T));
  alpha_shift_.resize(T);
  source_factor_.resize(static_cast<size_t>(T) * S);
  column_sum_.resize(static_cast<size_t>(T) * S);
  double* first = alpha_.data();
  for (int y = 0; y < L; ++y) {
    first[y] = structure.start_allowed_[y]
                   ? (scores.start[y] + scores.unary[y]) * inv_mu
                   : kMinusInfinity;
  }
  double log_z = alpha_shift_[0] = ShiftToMaxZero(first, L);
  double* terms = terms_.data();
  if (T == 1) {
    for (int y = 0; y < L; ++y) {
      terms[y] = structure.end_allowed_[y] ? first[y] + scores.end[y] * inv_mu
                                           : kMinusInfinity;
    }
    return log_z + LogSumExp(terms, L);
  }
  for (int t = 1; t < T && log_z != kMinusInfinity; ++t) {
    double* row = alpha_.data() + structure.RowOffset(t);
    if (t == 1) {
      const double* state_score = state_score_.data() + S;
      for (int s = 0; s < S; ++s) {
        row[s] = first[structure.state_labels_[s][0]] + state_score[s];
      }
    } else {
      ForwardStep(structure, t);
    }
    alpha_shift_[t] = ShiftToMaxZero(row, S);
    log_z += alpha_shift_[t];
  }
  if (log_z == kMinusInfinity) return log_z;
  const double* last = alpha_.data() + structure.RowOffset(T - 1);
  for (int s = 0; s < S; ++s) {
    const int32_t y = structure.state_labels_[s][1];
    terms[s] = structure.end_allowed_[y] ? last[s] + scores.end[y] * inv_mu
                                         : kMinusInfinity;
  }
  return log_z + LogSumExp(terms, S);
}

// alpha_t(b, c) = state score + log Σ_a exp(alpha_{t−1}(a, b) + edge score),
// computed per block as log S_c + shifts, S_c = Σ_a P_a·F_ac, where P_a =
// exp(alpha − its max over the sources) and F the edge factors: one exp per
// source and a multiply-add per edge instead of an exp per edge. P and S
// are kept for the trigram marginals.
void SecondOrderForwardBackward::ForwardStep(
    const SecondOrderStructure& structure, int t) {
  const double* previous = alpha_.data() + structure.RowOffset(t - 1);
  double* current = alpha_.data() + structure.RowOffset(t);
  const size_t row = static_cast<size_t>(t) * structure.num_states();
  const double* state_score = state_score_.data() + row;
  double* source_factor = source_factor_.data() + row;
  double* column_sum = column_sum_.data() + row;
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const int m = block.num_sources;
    double* out = current + block.first_target;
    double top = kMinusInfinity;
    for (int i = 0; i < m; ++i) top = std::max(top, previous[sources[i]]);
    if (top == kMinusInfinity) {  // also when b has no source
      std::fill(out, out + block.num_targets, kMinusInfinity);
      std::fill(column_sum + block.first_target,
                column_sum + block.first_target + block.num_targets, 0.0);
      continue;
    }
    for (int i = 0; i < m; ++i) {
      factor_[i] = source_factor[sources[i]] =
          std::exp(previous[sources[i]] - top);
    }
    SumBlockColumns(block);
    const double* edge_score = edge_score_.data() + block.first_edge;
    const double* top_edge = column_max_.data() + block.first_target;
    for (int j = 0; j < block.num_targets; ++j) {
      double log_sum;
      column_sum[block.first_target + j] = sum_[j] >= kMinSum ? sum_[j] : 0;
      if (sum_[j] >= kMinSum) {
        log_sum = top + top_edge[j] + std::log(sum_[j]);
      } else {
        for (int i = 0; i < m; ++i) {
          terms_[i] =
              previous[sources[i]] + edge_score[i * block.row_stride + j];
        }
        log_sum = LogSumExp(terms_.data(), m);
      }
      out[j] = log_sum + state_score[block.first_target + j];
    }
  }
}

// Rows of whole vectors, as SecondOrderViterbi's kernels: the padding
// columns of sum_ are computed and ignored.
CHAINTAG_AVX2_CLONES void SecondOrderForwardBackward::SumBlockColumns(
    const SecondOrderStructure::Block& block) {
  double* __restrict sum = sum_.data();
  const double* factor = factor_.data();
  const int width = block.row_stride;
  std::fill(sum, sum + width, 0.0);
  const double* edge_factor = edge_factor_.data() + block.first_edge;
  for (int i = 0; i < block.num_sources; ++i) {
    const double p = factor[i];
    const double* row = edge_factor + static_cast<size_t>(i) * width;
    for (int j = 0; j < width; ++j) sum[j] += p * row[j];
  }
}

void SecondOrderForwardBackward::Backward(const SecondOrderStructure& structure,
                                          const SecondOrderScores& scores,
                                          double inv_mu) {
  const int T = scores.length;
  const int S = structure.num_states();
  beta_.resize(structure.RowOffset(T));
  if (T == 1) return;  // the marginals need no backward message
  double* last = beta_.data() + structure.RowOffset(T - 1);
  for (int s = 0; s < S; ++s) {
    const int32_t y = structure.state_labels_[s][1];
    last[s] =
        structure.end_allowed_[y] ? scores.end[y] * inv_mu : kMinusInfinity;
  }
  ShiftToMaxZero(last, S);
  for (int t = T - 2; t >= 1; --t) {
    BackwardStep(structure, t);
    ShiftToMaxZero(beta_.data() + structure.RowOffset(t), S);
  }
}

// beta_t(a, b) = log Σ_c exp(edge score + state score + beta_{t+1}(b, c)),
// per block as log Σ_c F_ac·R_c + shifts, with R_c = exp(column max + state
// score + beta − their max): the edge factors of the forward pass serve.
void SecondOrderForwardBackward::BackwardStep(
    const SecondOrderStructure& structure, int t) {
  const double* next = beta_.data() + structure.RowOffset(t + 1);
  double* current = beta_.data() + structure.RowOffset(t);
  const double* state_score =
      state_score_.data() + static_cast<size_t>(t + 1) * structure.num_states();
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const int32_t first = block.first_target;
    const int n = block.num_targets;
    double top = kMinusInfinity;
    for (int j = 0; j < n; ++j) {
      factor_[j] =
          column_max_[first + j] + state_score[first + j] + next[first + j];
      top = std::max(top, factor_[j]);
    }
    if (top == kMinusInfinity) {  // also when b has no target
      for (int i = 0; i < block.num_sources; ++i) {
        current[sources[i]] = kMinusInfinity;
      }
      continue;
    }
    for (int j = 0; j < n; ++j) factor_[j] = std::exp(factor_[j] - top);
    for (int i = 0; i < block.num_sources; ++i) {
      const size_t row = block.first_edge + i * block.row_stride;
      double dot = 0;
      for (int j = 0; j < n; ++j) dot += edge_factor_[row + j] * factor_[j];
      if (dot >= kMinSum) {
        current[sources[i]] = top + std::log(dot);
        continue;
      }
      for (int j = 0; j < n; ++j) {
        terms_[j] =
            edge_score_[row + j] + state_score[first + j] + next[first + j];
      }
      current[sources[i]] = LogSumExp(terms_.data(), n);
    }
  }
}

// Each position's state marginals are normalised by their own log-sum-exp
// rather than by log Z, as ForwardBackward::ComputeInLogSpace does: the
// same value, with no cancellation between large numbers.
void SecondOrderForwardBackward::WriteMarginals(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    double inv_mu, double* marginals) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const int P = structure.num_pairs();
  const int S = structure.num_states();
  double* unary = marginals;
  double* pair = unary + static_cast<size_t>(T) * L;
  double* bigram = pair + static_cast<size_t>(T) * P;
  double* start = bigram + static_cast<size_t>(L) * L;
  double* end = start + L;
  double* q = terms_.data();
  if (T == 1) {
    for (int y = 0; y < L; ++y) {
      q[y] = structure.end_allowed_[y] ? alpha_[y] + scores.end[y] * inv_mu
                                       : kMinusInfinity;
    }
    NormalisedExp(q, L);
    std::copy(q, q + L, unary);
  }
  for (int t = 1; t < T; ++t) {
    const double* alpha = alpha_.data() + structure.RowOffset(t);
    const double* beta = beta_.data() + structure.RowOffset(t);
    for (int s = 0; s < S; ++s) q[s] = alpha[s] + beta[s];
    const double normaliser = NormalisedExp(q, S);
    double* unary_row = unary + static_cast<size_t>(t) * L;
    for (int s = 0; s < S; ++s) {
      const auto [a, b] = structure.state_labels_[s];
      unary_row[b] += q[s];
      if (t == 1) unary[a] += q[s];
      bigram[static_cast<size_t>(a) * L + b] += q[s];
    }
    double* pair_row = pair + static_cast<size_t>(t) * P;
    for (const SecondOrderStructure::WeightedState& weighted :
         structure.weighted_states_) {
      pair_row[weighted.column] = q[weighted.state];
    }
    if (t >= 2) AddTrigramMarginals(structure, t, normaliser, end + L);
  }
  std::copy(unary, unary + L, start);
  const double* last_row = unary + static_cast<size_t>(T - 1) * L;
  std::copy(last_row, last_row + L, end);
}

// With the forward pass's factors, P(edge a → c at t) = exp(alpha_{t−1}(a)
// + edge score + state score + beta_t(c) − shift_t − normaliser_t) =
// P_a·F_ac·q_c / S_c, q_c the state marginal (in terms_): no exp, unless
// the target's sum fell back to log space or P_a·F_ac is too small for the
// product to be exact.
void SecondOrderForwardBackward::AddTrigramMarginals(
    const SecondOrderStructure& structure, int t, double normaliser,
    double* trigram) {
  const size_t S = structure.num_states();
  const double* q = terms_.data();
  const double* source_factor = source_factor_.data() + t * S;
  const double* column_sum = column_sum_.data() + t * S;
  const double* previous = alpha_.data() + structure.RowOffset(t - 1);
  const double* beta = beta_.data() + structure.RowOffset(t);
  const double* state_score = state_score_.data() + t * S;
  const double shift = alpha_shift_[t] + normaliser;
  for (const SecondOrderStructure::WeightedEdge& edge :
       structure.weighted_edges_) {
    const double factors = source_factor[edge.source] * edge_factor_[edge.edge];
    if (column_sum[edge.target] > 0 && factors >= kMinProduct) {
      trigram[edge.trigram] +=
          factors * (q[edge.target] / column_sum[edge.target]);
    } else {
      trigram[edge.trigram] +=
          std::exp(previous[edge.source] + edge_score_[edge.edge] +
                   state_score[edge.target] + beta[edge.target] - shift);
    }
  }
}

}  // namespace chaintag
