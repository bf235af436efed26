#include "models/second_order.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace chaintag {
namespace {

// Fills `slots` (one per label tuple, -1 = none) with each tuple's position
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

}  // namespace chaintag
