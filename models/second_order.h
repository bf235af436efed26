// Second-order linear chains: the lattice that decoding runs on when a label
// depends on the two before it, and the score it maximises or sums. A
// labeling y_0 … y_{T−1} of L labels scores
//
//   score(y) = start[y_0] + Σ_t unary[t][y_t] + end[y_{T−1}]
//            + Σ_{t≥1} (transition[y_{t−1}][y_t]
//                       + pair_unary[t][p(y_{t−1}, y_t)])
//            + Σ_{t≥2} trigram[k(y_{t−2}, y_{t−1}, y_t)]
//
// where k(a, b, c) is the index of the trigram's weight, or none (the term is
// then 0), and p(a, b) the column of the label pair among the
// observation-conditioned transition weights, or none (0). The decoders
// (models/second_order_viterbi.h, second_order_top_k.h and
// second_order_forward_backward.h) run on the lattice whose states at t ≥ 1
// are the label pairs (y_{t−1}, y_t) that the constraints allow
// (models/transition_constraints.h), joined by the allowed trigrams, so a
// position costs the allowed trigrams, not L³. Only labelings the
// constraints allow are ever decoded, scored or summed over: they are the
// model's output space.
//
// Thread-safety: SecondOrderStructure is immutable after Create and safe to
// share; ScoreLabeling is a pure function.

#ifndef CHAINTAG_MODELS_SECOND_ORDER_H_
#define CHAINTAG_MODELS_SECOND_ORDER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "models/transition_constraints.h"

namespace chaintag {

using LabelPair = std::array<int32_t, 2>;
using LabelTrigram = std::array<int32_t, 3>;

struct SecondOrderScores;

// Which trigrams and pairs have weights, and the lattice of allowed states.
class SecondOrderStructure {
 public:
  // `constraints` over `num_labels` labels (a default-constructed one, or a
  // trivial one, allows everything). `trigrams` are the trigrams with a
  // weight, in weight order; `pairs` the label pairs with a column of
  // observation-conditioned weights, in column order (may be empty). Fails
  // on a label out of range, a repeated trigram or pair, or constraints
  // over another number of labels. A weighted trigram or pair that the
  // constraints forbid is allowed (its weight is simply never used).
  static absl::StatusOr<SecondOrderStructure> Create(
      int num_labels, const TransitionConstraints& constraints,
      std::vector<LabelTrigram> trigrams, std::vector<LabelPair> pairs);

  int num_labels() const;
  int num_trigrams() const;
  int num_pairs() const;
  const std::vector<LabelTrigram>& trigrams() const;
  const std::vector<LabelPair>& pairs() const;
  // The weight index of trigram (a, b, c), or -1.
  int32_t trigram_index(int a, int b, int c) const;
  // The column of pair (a, b), or -1.
  int32_t pair_index(int a, int b) const;
  // Whether the constraints allow the labeling (start, every transition,
  // end); the empty labeling is allowed.
  bool IsAllowed(const int32_t* labels, int length) const;
  // Allowed label pairs (lattice states at t ≥ 1) and allowed trigrams
  // (edges between them): what a position of decoding costs.
  int num_states() const;
  int num_edges() const;

 private:
  friend class SecondOrderViterbi;
  friend class SecondOrderTopK;
  friend class SecondOrderForwardBackward;

  SecondOrderStructure() = default;
  void BuildLattice(const TransitionConstraints& constraints);
  // The sources and edges of middle label b (its targets are set).
  void BuildBlock(int b);

  // One sentence's score of every edge slot: its trigram's weight, or 0.
  void EdgeScores(const double* trigram, double* edge_score) const;
  // The same plus the transition into the target, in ScoreLabeling's
  // order: what the decoders add along an edge.
  void TransitionEdgeScores(const SecondOrderScores& scores,
                            double* edge_score) const;
  // Adds position t's pair_unary to the states with a pair column.
  void AddPairScores(const SecondOrderScores& scores, int t,
                     double* state_score) const;
  // The whole score a state (a, b) adds at position t ≥ 1: transition,
  // unary and pair_unary.
  void StateScores(const SecondOrderScores& scores, int t,
                   double* state_score) const;
  int num_edge_slots() const { return static_cast<int>(edge_trigram_.size()); }
  // Where position t's row starts in a decoder's table: position 0 has one
  // entry per label, later positions one per state.
  size_t RowOffset(int t) const {
    return t == 0 ? 0 : num_labels_ + static_cast<size_t>(t - 1) * num_states();
  }

  int num_labels_ = 0;
  std::vector<LabelTrigram> trigrams_;
  std::vector<LabelPair> pairs_;
  std::vector<int32_t> trigram_index_;  // [(a·L + b)·L + c]
  std::vector<int32_t> pair_index_;     // [a·L + b]
  std::vector<uint8_t> start_allowed_;
  std::vector<uint8_t> end_allowed_;

  // States: the allowed pairs in lexicographic order (the Viterbi tie order).
  std::vector<int32_t> state_of_pair_;  // [a·L + b], or -1 when forbidden
  std::vector<LabelPair> state_labels_;
  struct WeightedState {
    int32_t state, column;
  };
  std::vector<WeightedState> weighted_states_;  // those with a pair column

  // The edges through a middle label b are all (a, b) → (b, c), the product
  // of b's sources and targets: one dense block, so that decoding b is a
  // first-order max-plus step whose inner loop runs over contiguous targets.
  struct Block {
    // b's targets (b, c) are the states [first_target, … + num_targets).
    int32_t first_target, num_targets;
    // b's sources (a, b), a ascending, are source_state_[first_source, …).
    int32_t first_source, num_sources;
    // The edge from source i to target j is the slot first_edge +
    // i·row_stride + j: rows padded to whole vectors of 4 (slots past
    // num_targets are never read as edges).
    int32_t first_edge, row_stride;
  };
  std::vector<Block> blocks_;  // by middle label
  std::vector<int32_t> source_state_;
  std::vector<int32_t> edge_trigram_;  // per slot: weight index or -1
  int num_edges_ = 0;
  // The edges with a trigram weight, for its expected count.
  struct WeightedEdge {
    int32_t edge, source, target, trigram;
  };
  std::vector<WeightedEdge> weighted_edges_;
};

// One sentence's scores; the arrays are not owned.
struct SecondOrderScores {
  int length = 0;
  const double* unary = nullptr;       // length × L, row-major
  const double* transition = nullptr;  // L × L, [previous][next]
  const double* start = nullptr;       // L
  const double* end = nullptr;         // L
  const double* trigram = nullptr;     // num_trigrams()
  // length × num_pairs(), row t for the pair (y_{t−1}, y_t); row 0 is never
  // read. May be null when num_pairs() is 0.
  const double* pair_unary = nullptr;
};

// score(y) as above; ignores the constraints (scores any labeling). It adds
// in the decoders' order, so their scores equal it to the bit.
double ScoreLabeling(const SecondOrderStructure& structure,
                     const SecondOrderScores& scores, const int32_t* labels);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SECOND_ORDER_H_
