// Second-order linear chains: decoding when a label depends on the two
// before it. A labeling y_0 … y_{T−1} of L labels scores
//
//   score(y) = start[y_0] + Σ_t unary[t][y_t] + end[y_{T−1}]
//            + Σ_{t≥1} (transition[y_{t−1}][y_t]
//                       + pair_unary[t][p(y_{t−1}, y_t)])
//            + Σ_{t≥2} trigram[k(y_{t−2}, y_{t−1}, y_t)]
//
// where k(a, b, c) is the index of the trigram's weight, or none (the term is
// then 0), and p(a, b) the column of the label pair among the
// observation-conditioned transition weights, or none (0). The decoders run
// on the lattice whose states at t ≥ 1 are the label pairs (y_{t−1}, y_t)
// that the constraints allow (models/transition_constraints.h), joined by
// the allowed trigrams, so a position costs the allowed trigrams, not L³.
// Only labelings the constraints allow are ever decoded, scored or summed
// over: they are the model's output space.
//
// Thread-safety: SecondOrderStructure is immutable after Create and safe to
// share; the decoders hold scratch buffers (one per thread).

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
  // The weight index of trigram (a, b, c), or −1.
  int32_t trigram_index(int a, int b, int c) const;
  // The column of pair (a, b), or −1.
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
  std::vector<int32_t> state_of_pair_;  // [a·L + b], or −1 when forbidden
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
  std::vector<int32_t> edge_trigram_;  // per slot: weight index or −1
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

class SecondOrderViterbi {
 public:
  // Writes the best allowed labeling (length entries) and returns its score;
  // −∞ (labeling unspecified) when no labeling is allowed. Ties go to the
  // lowest label at every choice, scanning from the end (the lowest final
  // pair (y_{T−2}, y_{T−1}) in lexicographic order, then the lowest
  // y_{t−2} for each state), so the result is deterministic. A chain of
  // length 0 scores 0.
  //
  // Time per position: a max-plus operation per edge (num_edges()), four
  // edges per instruction where the CPU has AVX2, and a sum per pair
  // column. Memory: length × num_states() doubles, and the edges'.
  double Decode(const SecondOrderStructure& structure,
                const SecondOrderScores& scores, int32_t* labels);

 private:
  // Fills row t ≥ 2 of delta_ from row t − 1: the hot loop.
  void Advance(const SecondOrderStructure& structure,
               const SecondOrderScores& scores, int t);
  // Writes the labels of the best path ending in `state` at the last
  // position.
  void Backtrack(const SecondOrderStructure& structure,
                 const SecondOrderScores& scores, int length, int32_t state,
                 int32_t* labels) const;

  std::vector<double> edge_score_;  // with the transitions
  // The best score of a partial labeling ending in each label (position 0)
  // or state (positions ≥ 1) but for that position's unary, rows as
  // SecondOrderStructure::RowOffset.
  std::vector<double> delta_;
};

class SecondOrderTopK {
 public:
  // The m = min(k, N) best allowed labelings, all distinct (N: how many
  // allowed labelings have a finite score), as m rows of `length` labels in
  // `labelings` and their scores, descending, in `labeling_scores`. Its
  // first labeling is exactly SecondOrderViterbi's, and among equal scores
  // the labeling whose (y_{T−2}, y_{T−1}, y_{T−3}, y_{T−4}, …, y_0) is
  // lexicographically smaller comes first, which extends Viterbi's tie
  // rule. (The order is exact for exactly representable scores, such as
  // integers; with general doubles, near-ties follow the sums' rounding.)
  // k ≤ 0 returns 0 with both outputs empty; length 0 gives one empty
  // labeling of score 0.
  //
  // Time per position O(num_edges() · K) for K = min(k, L^length), usually
  // O(num_edges() + num_states() · K): each state's list merges its
  // sources' sorted lists by insertion, and a list stops at its first row
  // that cannot enter. Memory O(length · num_states() · K).
  int Decode(const SecondOrderStructure& structure,
             const SecondOrderScores& scores, int k,
             std::vector<int32_t>* labelings,
             std::vector<double>* labeling_scores);

 private:
  // Fills the cells of position t ≥ 2 from those of t − 1.
  void Advance(const SecondOrderStructure& structure,
               const SecondOrderScores& scores, int t, int width);
  // Adds the pair score and unary of `state` at t ≥ 1 to its cell, after
  // the merge as SecondOrderViterbi does (so that rank 0 sums exactly as
  // its delta), and drops the entries that become −∞.
  void CompleteCell(const SecondOrderStructure& structure,
                    const SecondOrderScores& scores, int t, int32_t state,
                    int width);
  // Selects the best finished labelings into final_*; returns how many.
  int Finish(const SecondOrderStructure& structure,
             const SecondOrderScores& scores, int width);
  void Backtrack(const SecondOrderStructure& structure, int length, int width,
                 int rank_in_final, int32_t* labels) const;

  std::vector<double> edge_score_;  // with the transitions
  // A cell per label (position 0) or state (positions ≥ 1), rows as
  // SecondOrderStructure::RowOffset; cell c holds its best partial
  // labelings, best first, at [c·width, c·width + count_[c]): their scores,
  // and the cell (of the previous position) and rank they extend.
  std::vector<double> score_;
  std::vector<int32_t> from_cell_;
  std::vector<int32_t> from_rank_;
  std::vector<int32_t> count_;
  // The last position's cells that may end a labeling, and their end scores.
  std::vector<int32_t> final_cells_;
  std::vector<double> final_offsets_;
  std::vector<double> final_score_;
  std::vector<int32_t> final_cell_;
  std::vector<int32_t> final_rank_;
};

// Entropy smoothing on the second-order lattice: μ·log Z over the allowed
// labelings, Z = Σ_y exp(score(y)/μ), and the expected indicator features
// under p(y) ∝ exp(score(y)/μ).
class SecondOrderForwardBackward {
 public:
  // Returns μ·log Z. With `marginals` non-null, writes MarginalsSize(length)
  // doubles:
  //   [length × L:            P(y_t = l)]
  //   [length × num_pairs():  row t ≥ 1: P((y_{t−1}, y_t) = pairs()[p]);
  //                           row 0 is 0]
  //   [L × L:                 Σ_{t≥1} P(y_{t−1} = a, y_t = b)]
  //   [L:                     P(y_0 = l)]
  //   [L:                     P(y_{T−1} = l)]
  //   [num_trigrams():        Σ_{t≥2} P((y_{t−2}, y_{t−1}, y_t)
  //                                     = trigrams()[k])]
  // Requires μ > 0 and an allowed labeling of finite score. Length 0:
  // returns 0 and zero marginals.
  //
  // Runs in log space, each position's messages shifted by their max. Within
  // a position, a block of edges with the same middle label sums products
  // of factors in [0, 1] (edges' exp per sentence, sources' or targets' exp
  // per position), so a position costs a multiply-add per edge and per pass
  // and, per state, two exps and two logs for the value, one exp and one
  // log more for the marginals. A sum whose products could have underflowed
  // (below 1e−200) is redone as an exact log-sum-exp; results match the
  // exact sums to rounding, but for marginals below ~1e−300, which may come
  // out as 0 or denormal.
  double Compute(const SecondOrderStructure& structure,
                 const SecondOrderScores& scores, double mu, double* marginals);

  static int64_t MarginalsSize(const SecondOrderStructure& structure,
                               int length);

 private:
  // The edge and state scores over μ, and the factors of the edges.
  void Prepare(const SecondOrderStructure& structure,
               const SecondOrderScores& scores, double inv_mu);
  // Returns log Z; fills alpha_ and alpha_shift_.
  double Forward(const SecondOrderStructure& structure,
                 const SecondOrderScores& scores, double inv_mu);
  void ForwardStep(const SecondOrderStructure& structure, int t);
  // sum_[j] = Σ_i factor_[i]·(edge factor from source i to target j).
  void SumBlockColumns(const SecondOrderStructure::Block& block);
  // Fills beta_.
  void Backward(const SecondOrderStructure& structure,
                const SecondOrderScores& scores, double inv_mu);
  void BackwardStep(const SecondOrderStructure& structure, int t);
  void WriteMarginals(const SecondOrderStructure& structure,
                      const SecondOrderScores& scores, double inv_mu,
                      double* marginals);
  // Adds position t's terms of the trigram totals, from its state marginals
  // (in terms_) and their normaliser.
  void AddTrigramMarginals(const SecondOrderStructure& structure, int t,
                           double normaliser, double* trigram);

  // Edge scores over μ; per target state, their max over its edges; and
  // per edge exp(its score over μ − that max), in [0, 1].
  std::vector<double> edge_score_;
  std::vector<double> column_max_;
  std::vector<double> edge_factor_;
  std::vector<double> state_score_;  // length × num_states: score over μ
  // Log-messages, rows as SecondOrderStructure::RowOffset, each row shifted
  // to max 0 so that they stay the size of one position's scores.
  std::vector<double> alpha_;
  std::vector<double> beta_;
  std::vector<double> alpha_shift_;  // per position: the shift of alpha_
  // length × num_states, row t for ForwardStep(t): each source state's
  // factor P, and each target's sum S (0 where it fell back to log space).
  std::vector<double> source_factor_;
  std::vector<double> column_sum_;
  // One block's scratch: exp of its sources' or targets' messages less
  // their max, and the sums of their products with the edge factors.
  std::vector<double> factor_;
  std::vector<double> sum_;
  std::vector<double> terms_;  // one log-sum-exp's terms
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SECOND_ORDER_H_
