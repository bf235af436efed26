// ChainProblem: a linear-chain structured SVM as a solvers::Problem, of
// first or second order (models/chain_layout.h, models/second_order.h).
//
// φ(x, y) = Σ_t x_t ⊗ e_{y_t} + Σ_{t>0} e_{(y_{t−1}, y_t)} + e_start(y_0)
//           + e_end(y_{T−1}), with pair templates also
//           Σ_{t>0} z_t ⊗ e_{p(y_{t−1}, y_t)} (observation-conditioned
//           transitions, z_t the pair features; at first order p(a, b) =
//           a·L + b, a full L×L block per pair row, at second order the
//           structure's weighted pairs), and at second order
//           Σ_{t>1} e_{k(y_{t−2}, y_{t−1}, y_t)} (weighted trigrams); the
//           loss is Hamming,
//           optionally divided by T. A second-order problem's labelings are
//           those its structure's constraints allow.
//
// Block state of sentence i (T tokens, L labels): the expected features
// E_β[φ(x_i, y)] of its dual distribution β, stored as label marginals
//   [T×L per-position marginals μ_t]
//   [T×P per-position pair marginals (with pair features; row 0 zero)]
//   [L×L transition counts][L start][L end][K trigram counts],
// the last four in the same order as the weights' tail (with allowed
// transitions set, the transition counts hold only the S allowed pairs, in
// row-major order: S + 2L tail entries instead of L² + 2L), so
// v_i = φ(x_i, y_i) − E_β φ. Inner products with w come from the unary
// scores, and ‖v_i − ψ_i(y)‖² = ‖φ(y) − E_β φ‖² from the sentence's Gram
// matrices ⟨x_t, x_t'⟩ (and ⟨z_t, z_t'⟩), computed once, at the first
// distance asked for (the smooth losses' solvers ask for none), or, with
// the free coordinates as the space (MakeFreeCoordinatesTheSpace), summed
// at the free coordinates. Nothing is O(dim).
//
// Thread-safety: const methods are safe to call concurrently (scratch
// buffers are thread_local; the Gram matrices are built under
// std::call_once).

#ifndef CHAINTAG_MODELS_CHAIN_PROBLEM_H_
#define CHAINTAG_MODELS_CHAIN_PROBLEM_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "features/feature_sequence.h"
#include "models/chain_layout.h"
#include "models/gram_matrices.h"
#include "models/second_order.h"
#include "models/sparse_rows.h"
#include "solvers/problem.h"

namespace chaintag {

struct ChainExample {
  FeatureSequence features;
  std::vector<int32_t> labels;  // gold label ids, one per position
  // With pair features (either order): one row per position, row 0 empty
  // (no pair before the first label); otherwise no positions.
  FeatureSequence pair_features;
};

class ChainProblem : public Problem {
 public:
  // Every example must have as many labels as positions, ids < num_labels,
  // and feature rows < layout.num_rows (checked by the caller; see
  // Validate). A second-order layout needs its `structure` (the same label
  // count, pairs and trigrams as the layout); a first-order one with pair
  // rows has num_pairs = L². The Gram matrices are
  // computed on `num_threads` threads, when first needed.
  ChainProblem(ChainLayout layout, std::vector<ChainExample> examples,
               bool normalize_loss,
               std::shared_ptr<const SecondOrderStructure> structure = nullptr,
               int num_threads = 1);

  // Checks the examples against the layout (and, at second order, the
  // structure: pair features, gold labelings the constraints allow); a
  // message names the example.
  static absl::Status Validate(const ChainLayout& layout,
                               const std::vector<ChainExample>& examples,
                               const SecondOrderStructure* structure = nullptr);

  // L_i(y) = scale * (the Hamming loss): 1 by default (the structured
  // hinge, and with entropy smoothing at mu = 1 the softmax-margin loss of
  // Gimpel & Smith 2010); 0 makes the entropy-smoothed oracle at mu = 1
  // the CRF's negative log-likelihood, log Z_i(w) - <w, phi(x_i, y_i)>, and
  // the max oracle plain decoding. Set before any solver runs.
  void set_loss_scale(double scale) { loss_scale_ = scale; }
  double loss_scale() const { return loss_scale_; }

  // Restricts a first-order problem's labelings to those whose every
  // transition (a, b) has allowed[a·L + b] ≠ 0 (L² entries; CRFsuite's
  // all_possible_transitions=false, with the pairs of the training
  // labelings): every oracle decodes over them only, and a block state's
  // tail holds the allowed pairs' counts alone. Every gold labeling must be
  // allowed. Set before any solver runs; fails at second order (whose
  // structure already prunes) and on a wrong size or a forbidden gold pair.
  absl::Status SetAllowedTransitions(std::vector<uint8_t> allowed);
  // Empty when every transition is allowed.
  const std::vector<uint8_t>& allowed_transitions() const { return allowed_; }

  // Restricts each emission row to the labels the training labelings put
  // at the positions holding it (CRFsuite's all_possible_states=false):
  // the model has no feature for a row's other labels, so w is 0 there.
  // FreeCoordinates then lists the observed (row, label) coordinates with
  // the pair rows and the tail: the operations stay those of whole rows,
  // and a solver that supports the restriction (lbfgs, sag) minimises over w
  // with 0 elsewhere, taking its gradients at those coordinates alone; the
  // registry's other solvers refuse the problem (they take it through
  // MakeFreeCoordinatesTheSpace instead), and such a solver's w
  // (Solver::Solve) is the free coordinates' values: the emission rows'
  // as free_emissions() indexes them, then the rest of w from
  // layout().pair_emission_offset(). Set before any solver runs; fails only
  // past SparseRows' limits.
  absl::Status RestrictEmissionsToObservedLabels();
  // Makes a restricted problem's free coordinates the whole of w, for the
  // solvers that minimise over every coordinate they are given (every
  // solver but lbfgs and sag): Dim() is then num_free_coordinates(), w
  // holds the emission rows' free labels as free_emissions() indexes them,
  // then the pair rows and the tail, and every operation reads and writes
  // w there. φ(x, y) becomes its projection on those coordinates (an
  // emission feature of a label its row never takes has no weight), so
  // state and corner distances are those of the projection (from the
  // rows' free labels, not the Gram matrices), and FreeCoordinates is
  // false: the problem is a plain one of smaller dimension. The w a
  // solver returns is what a restricted solver's is. Set before any solver
  // runs; fails unless restricted.
  absl::Status MakeFreeCoordinatesTheSpace();
  bool free_coordinates_are_the_space() const { return free_space_; }
  bool FreeCoordinates(std::vector<int64_t>* coordinates) const override;
  // Restricted: the free emission coordinates as sparse rows over the
  // layout's rows (a row may hold none); rows null when every coordinate
  // is free.
  FreeEmissions free_emissions() const {
    if (free_coordinates_.empty()) return {};
    return {&free_rows_, free_listed_labels_.data()};
  }
  // How many coordinates FreeCoordinates lists; the layout's dim() when
  // unrestricted.
  int64_t num_free_coordinates() const {
    return free_coordinates_.empty()
               ? layout_.dim()
               : static_cast<int64_t>(free_coordinates_.size());
  }
  // A solver's w over this problem (num_free_coordinates() entries, in
  // either space) in all of the layout's coordinates, 0 at those without a
  // feature. Fails on a w of another size.
  absl::StatusOr<std::vector<double>> WeightsInLayout(
      absl::Span<const double> w) const;
  // Its inverse: the Dim() entries of a w of all of the layout's
  // coordinates that this problem's operations read (the free coordinates'
  // when they are the space). Fails on a w of another size.
  absl::StatusOr<std::vector<double>> WeightsInSpace(
      absl::Span<const double> layout_w) const;

  const ChainLayout& layout() const { return layout_; }
  // Where the tail (transitions, start and end biases, trigrams, in the
  // layout's order) starts in w: layout().transition_offset(), or with the
  // free coordinates as the space, after the free emission coordinates and
  // the pair rows.
  int64_t TailBegin() const {
    return EmissionEnd() +
           (layout_.transition_offset() - layout_.pair_emission_offset());
  }
  // Null at first order.
  const SecondOrderStructure* structure() const { return structure_.get(); }
  const ChainExample& example(int i) const { return examples_[i]; }
  // Moves the examples out (to build another problem from them without a
  // copy); the problem is then empty.
  std::vector<ChainExample> TakeExamples();

  int NumExamples() const override {
    return static_cast<int>(examples_.size());
  }
  int64_t Dim() const override {
    return free_space_ ? num_free_coordinates() : layout_.dim();
  }
  void MaxOracle(int i, const double* w, OracleResult* result) const override {
    MaxOracleWithStateDot(i, w, nullptr, result);
  }
  void MaxOracleWithStateDot(int i, const double* w, const double* state,
                             OracleResult* result) const override;
  void MaxOracleScaled(int i, const double* v, double scale,
                       OracleResult* result) const override;
  void Decode(int i, const double* w, Corner* corner) const override;
  double Loss(int i, const Corner& y) const override;
  double Score(int i, const double* w, const Corner& y) const override;
  void AddScaled(int i, const Corner& y, double c, double* w) const override;
  void AddCornerDifference(int i, const Corner& a, const Corner& b, double c,
                           double* w) const override;
  int64_t BlockStateSize(int i) const override;
  void InitBlockState(int i, double* state) const override;
  // The label and pair marginals, and the tail entries the state's labels
  // can form (TailSupport), not the whole tail.
  void ScaleBlockState(int i, double factor, double* state) const override;
  double StateDistanceSquared(int i, const double* state,
                              const Corner& y) const override;
  void AddCornerMinusState(int i, const Corner& y, const double* state,
                           double c, double* w) const override;
  // The tail from the labelings' transitions and trigrams, not from every
  // one their labels could form.
  void AddCornerMinusMixture(int i, const Corner& y, const double* state,
                             const Corner* const* corners,
                             const double* weights, int count, double c,
                             double* w) const override;
  void AddCornerMinusStateInSlice(int i, const Corner& y, const double* state,
                                  double c, int64_t begin, int64_t end,
                                  double* w) const override;
  // Restricted, reads no vector of all of w: each emission row's free
  // coordinates are found by its range in the free list.
  void AddCornerMinusStateAtFree(int i, const Corner& y, const double* state,
                                 double c, int64_t begin, int64_t end,
                                 double* free_w) const override;
  void EncodeCornerMinusState(int i, const Corner& y, const double* state,
                              double c, BlockUpdate* update) const override;
  void EncodeScaled(int i, const Corner& y, double c,
                    BlockUpdate* update) const override;
  void AddCornerToState(int i, const Corner& y, double c,
                        double* state) const override;
  void ScoreCorners(int i, const double* w, const double* state,
                    const Corner* const* corners, int count, double* scores,
                    double* state_dot) const override;
  void ScoreCornersAndMaxOracle(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores,
                                OracleResult* result) const override;
  double CornerDistanceSquared(int i, const Corner& a,
                               const Corner& b) const override;
  const Corner& GoldCorner(int i) const override { return examples_[i].labels; }
  // One label id < num_labels per position; at second order, a labeling
  // the structure allows.
  bool IsCorner(int i, const Corner& y) const override;
  // kTopKL2 through top-K Viterbi and the simplex projection, kEntropy
  // through forward–backward; both on the loss-augmented scores. The state
  // is the distribution's expected label marginals.
  double SmoothedOracle(int i, const double* w, const Smoothing& smoothing,
                        double* state) const override;
  double SmoothedOracleWithStateDot(int i, const double* w,
                                    const Smoothing& smoothing, double* state,
                                    double* state_dot) const override;
  // Reads free_w directly: the emission rows at their free labels.
  double SmoothedOracleWithStateDotAtFree(int i, const double* free_w,
                                          const Smoothing& smoothing,
                                          double* state,
                                          double* state_dot) const override;
  // From kFreeOracleLabels labels with free coordinates: a dense row is
  // then several cache lines, of which a row's few free labels read one or
  // two; below, reading a row's range, labels and weights costs more than
  // its dense line.
  bool OraclesAtFreeAreFaster() const override;
  bool SupportsSmoothing(Smoothing::Kind) const override { return true; }
  // From the unary scores (ScoreCorners with no corners).
  double StateDot(int i, const double* state, const double* w) const override;
  // The emission rows of the sentence's feature buckets (one per feature
  // occurrence), then the transitions and biases.
  void TouchedRanges(int i,
                     std::vector<CoordinateRange>* ranges) const override;
  // The same at the free coordinates: each feature's row as its range of
  // free labels (none for a row without any), then the pair rows and the
  // tail, whole, as they follow the emission rows in the free list.
  void TouchedRangesAtFree(int i,
                           std::vector<CoordinateRange>* ranges) const override;

 private:
  struct Scores;
  int Length(int i) const { return examples_[i].features.size(); }
  // The column of label pair (a, b) in a pair row: every pair has one at
  // first order (a·L + b), the structure's weighted pairs at second; -1
  // for none.
  int32_t PairColumn(int a, int b) const {
    return structure_ != nullptr ? structure_->pair_index(a, b)
                                 : a * layout_.num_labels + b;
  }
  // The state's parts: T×L label marginals, T×P pair marginals, the tail.
  int64_t PairStateOffset(int i) const;
  int64_t TailStateOffset(int i) const;
  // Where the pair rows start in w (pair_emission_offset(), or with
  // MakeFreeCoordinatesTheSpace the free emission coordinates' count): the
  // rest of w follows in the layout's order from there.
  int64_t EmissionEnd() const {
    return free_space_ ? static_cast<int64_t>(free_labels_.size())
                       : layout_.pair_emission_offset();
  }
  // Emission row `row`'s coordinate for `label` in w: row·L + label, or in
  // the free space its free coordinate, −1 for none.
  int64_t EmissionCoordinate(int64_t row, int label) const {
    return free_space_ ? free_rows_.Find(free_listed_labels_.data(), row, label)
                       : row * layout_.num_labels + label;
  }
  // The scores of sentence i under w = scale·v, in the thread's scratch.
  void ComputeScores(int i, const double* v, double scale,
                     Scores* scores) const;
  // The unary scores ScoreCorners reads, into the thread's scratch: at each
  // position those of the gold label, the corners' labels and the labels
  // `state` gives weight (the rest 0, which StateDot multiplies by the
  // state's zeros). False, with nothing computed, when that would be more
  // than a third of all labels' scores.
  bool ComputeCornerUnary(int i, const double* w, const double* state,
                          const Corner* const* corners, int count) const;
  // ComputeScores at the point whose free coordinates (FreeCoordinates) are
  // free_w: the emission rows read at their free labels alone (in the free
  // space, ComputeScores itself).
  void ComputeScoresAtFree(int i, const double* free_w, double scale,
                           Scores* scores) const;
  // For the gradient's additions at the free coordinates, at feature
  // occurrence k of `f` (of `total`): a row's range two strides ahead, then,
  // once that is in cache, its labels and its entries of `free_values` one
  // stride ahead (as SparseRows' scoring does for the oracles).
  void PrefetchFreeRows(const FeatureSequence& f, int32_t k, int32_t total,
                        const double* free_values) const {
    if (k + 2 * kPrefetchDistance < total) {
      __builtin_prefetch(free_row_begin_.data() +
                         f.buckets[k + 2 * kPrefetchDistance]);
    }
    if (k + kPrefetchDistance < total) {
      const int64_t ahead = free_row_begin_[f.buckets[k + kPrefetchDistance]];
      __builtin_prefetch(free_values + ahead);
      __builtin_prefetch(free_labels_.data() + ahead);
    }
  }
  // The rest of ComputeScores once the scratch's unary scores are set;
  // `after_emission` is the point from pair_emission_offset() on (the pair
  // rows and the tail, laid out as in w).
  void FinishScores(int i, const double* after_emission, double scale,
                    Scores* scores) const;
  double ScoreOf(const Scores& scores, const int32_t* y) const;
  // The best labeling under `scores` (the allowed ones at second order).
  double DecodeBest(const Scores& scores, int32_t* y) const;
  // ‖d‖² for a difference d of two block states (state layout), through the
  // Gram matrices for the emission parts.
  double StateDifferenceNormSquared(int i, const double* d) const;
  // Its label and pair marginals' part (d needs only those).
  double StateHeadNormSquared(int i, const double* d) const;
  // In the free space, ‖the projection of Σ_t x_t ⊗ d_t‖² for d's T×L
  // label part: the sums at the free coordinates the rows of each position
  // hold for the labels where d_t ≠ 0 (chain_problem_free.cc).
  double FreeEmissionNormSquared(int i, const double* d) const;
  // TouchedRanges in all of w's coordinates.
  void RangesInAllCoordinates(int i,
                              std::vector<CoordinateRange>* ranges) const;
  // The same ranges at the free coordinates.
  void RangesAtFreeCoordinates(int i,
                               std::vector<CoordinateRange>* ranges) const;
  // The tail entries (transitions, biases, trigrams) a block state of
  // sentence i can hold: those of the labelings whose every label has mass
  // in the state's label marginals, each index once. A labeling's tail
  // entries are nonzero exactly where its labels are, up to the rounding
  // of steps that remove a labeling's mass. False, with `indices`
  // unspecified, when there could be more than a third of the tail.
  bool TailSupport(int i, const double* state,
                   std::vector<int64_t>* indices) const;
  // The smoothed oracles at w, or with free_w at the point whose free
  // coordinates it holds: the state dot too when state_dot is not null.
  double Smoothed(int i, const double* w, const double* free_w,
                  const Smoothing& smoothing, double* state,
                  double* state_dot) const;
  // The smoothed max of the (loss-augmented) scores, its distribution's
  // block state into `state`.
  double SmoothedMax(int i, const Scores& scores, const Smoothing& smoothing,
                     double* state) const;
  // ⟨v_i, w⟩ = score(y_i) − ⟨E_β φ, w⟩ from the unary scores;
  // `after_emission` as FinishScores'.
  double StateDot(int i, const double* after_emission, const Scores& scores,
                  double gold_score, const double* state) const;
  // tail += c·(the transition, bias and trigram indicators of y) on w's
  // tail (AddTailFeatures) or a state's (AddStateTailFeatures).
  void AddTailFeatures(const int32_t* y, int T, double c, double* tail) const;
  void AddStateTailFeatures(const int32_t* y, int T, double c,
                            double* tail) const;
  // A tail index of w (layout) as a state's tail index (-1 for a forbidden
  // transition), and back.
  int64_t StateTailIndex(int64_t k) const {
    return tail_slot_.empty() ? k : tail_slot_[k];
  }
  int64_t FullTailIndex(int64_t k) const {
    return tail_full_.empty() ? k : tail_full_[k];
  }
  int64_t StateTailSize() const {
    return tail_full_.empty() ? layout_.tail_size()
                              : static_cast<int64_t>(tail_full_.size());
  }
  // With allowed transitions, before decoding: gives scores->first the
  // allowed pairs' lists (ViterbiDecoder then visits those alone) and,
  // unless `viterbi_only` and without pair scores, points its transitions
  // at a copy with −∞ on the forbidden pairs (the other decoders).
  void ForbidTransitions(Scores* scores, bool viterbi_only) const;
  // visit(k) for each tail index y's transitions, biases and trigrams hit
  // (once per occurrence).
  template <typename Visit>
  void ForEachTailIndex(const int32_t* y, int T, const Visit& visit) const;
  // ‖tail(a) − tail(b)‖² of two labelings' tail indicators, in O(T).
  double TailDistanceSquared(const int32_t* a, const int32_t* b, int T) const;
  // Each position's pair column of y (-1 at 0 and where none), into
  // `columns` (T entries).
  void PairColumns(const int32_t* y, int T, int32_t* columns) const;
  // w += c·φ(x_i, y).
  void AddFeatures(int i, const int32_t* y, double c, double* w) const;
  // One label vector per position (`labels` wide: L, or P for the pair
  // rows), from `fill(t, vector)`, added at each of the position's rows of
  // `features` (rows of `labels` coordinates from `offset`) scaled by the
  // feature's value.
  template <typename Fill>
  void EncodeRows(const FeatureSequence& features, int first_position,
                  int64_t offset, int labels, Fill fill,
                  BlockUpdate* update) const;
  // EncodeRows for the emission rows (`features`, L wide); in the free
  // space each feature's vector holds its row's free labels.
  template <typename Fill>
  void EncodeEmissionRows(const FeatureSequence& features, Fill fill,
                          BlockUpdate* update) const;
  // The coordinates an update writes: all of them, or [begin, end). Clip
  // gives the part [from, to) of the `length` coordinates at `start` that
  // the slice holds, false for none.
  struct AllCoordinates {
    bool Holds(int64_t) const { return true; }
    bool Clip(int64_t, int64_t length, int64_t* from, int64_t* to) const {
      *from = 0;
      *to = length;
      return true;
    }
  };
  struct CoordinateSlice {
    int64_t begin;
    int64_t end;
    bool Holds(int64_t x) const { return x >= begin && x < end; }
    bool Clip(int64_t start, int64_t length, int64_t* from, int64_t* to) const {
      *from = std::max<int64_t>(begin - start, 0);
      *to = std::min<int64_t>(end - start, length);
      return *from < *to;
    }
  };
  // AddCornerMinusState's work on the coordinates `slice` holds, also where
  // it cuts a row or the tail (Problem::AddCornerMinusStateInSlice).
  // With `mixture`, the state's tail is read from its labelings.
  struct Mixture {
    const Corner* const* corners;
    const double* weights;
    int count;
  };
  template <typename Slice>
  void AddCornerMinusStateIn(int i, const Corner& y, const double* state,
                             double c, const Slice& slice, double* w,
                             const Mixture* mixture = nullptr) const;
  // AddCornerMinusState's change at the free coordinates [begin, end) of
  // `free_w` (FreeCoordinates' order), with `mixture` as
  // AddCornerMinusStateIn's: the restricted solvers' sums and the free
  // space's updates.
  void AddFreeCornerMinusState(int i, const Corner& y, const double* state,
                               double c, int64_t begin, int64_t end,
                               double* free_w, const Mixture* mixture) const;
  // Its work past the emission rows: the pair rows and the tail, written
  // at `pair_rows` (where w's pair rows start) and after; `slice` is in
  // w's coordinates.
  template <typename Slice>
  void AddPairRowsAndTailMinusState(int i, const Corner& y, const double* state,
                                    double c, const Slice& slice,
                                    double* pair_rows,
                                    const Mixture* mixture) const;
  // The tail's part of it, into all of `tail`.
  void AddTailMinusState(int i, const Corner& y, const double* state, double c,
                         double* tail, const Mixture* mixture) const;
  // w += c·(E_β φ − φ(y)) on the pair-feature rows the slice holds, w's
  // pair rows starting at `pair_rows`.
  template <typename Slice>
  void AddPairRowsMinusState(int i, const int32_t* y, const double* pair_state,
                             double c, const Slice& slice,
                             double* pair_rows) const;
  double LossUnit(int i) const;
  // unary[t][y] += sign·L_i's unit on every label y ≠ y_t: loss
  // augmentation (sign +1) and its removal (-1).
  void AddLossToUnary(int i, double sign, double* unary) const;
  // The same on positions [first, last) only.
  void AddLossToPositions(int i, double sign, int first, int last,
                          double* unary) const;
  // AddCornerToState for a labeling stored in a plain array.
  void AddLabelingToState(int i, const int32_t* y, double c,
                          double* state) const;
  // Its label and pair marginals' part, without the tail.
  void AddLabelingToStateHead(int i, const int32_t* y, double c,
                              double* state) const;
  // Whether Oracle may run as PipelinedOracle: the step's helpers lent to
  // this thread, first order with listed transitions and no pair rows,
  // scale 1, many labels and a few positions.
  bool CanPipelineOracle(int i, double scale) const;
  // Oracle at scale 1 with the unary scores computed by the helpers while
  // one thread decodes the positions already scored, and scores the next
  // ones itself when they are late (chain_problem_pipeline.cc).
  void PipelinedOracle(int i, const double* w, const double* state,
                       const Corner* const* corners, int count,
                       double* corner_scores, OracleResult* result) const;
  // The loss-augmented oracle at w = scale·v; with `corners`, also their
  // scores from the same unary pass.
  void Oracle(int i, const double* v, double scale, const double* state,
              const Corner* const* corners, int count, double* corner_scores,
              OracleResult* result) const;
  // The smoothed oracles' state for the top-K labelings' simplex weights.
  double TopKSmoothed(int i, const Scores& scores, const Smoothing& smoothing,
                      double* state) const;
  // The Gram matrices (below), built at the first call.
  const GramMatrices& Gram() const;
  const GramMatrices& PairGram() const;

  ChainLayout layout_;
  std::vector<ChainExample> examples_;
  bool normalize_loss_;
  double loss_scale_ = 1;
  std::shared_ptr<const SecondOrderStructure> structure_;
  // The Gram matrices of the label features and (second order) of the pair
  // features, built on gram_threads_ threads when a state distance is first
  // asked for: the smooth losses' solvers never ask, so never hold them.
  int gram_threads_;
  mutable std::once_flag gram_built_;
  mutable GramMatrices gram_;
  mutable GramMatrices pair_gram_;
  // SetAllowedTransitions: the L² mask, each tail index's state index (-1
  // forbidden) and each state tail index's tail index; all empty when every
  // transition is allowed.
  std::vector<uint8_t> allowed_;
  std::vector<int32_t> tail_slot_;
  std::vector<int64_t> tail_full_;
  TransitionLists lists_;  // of allowed_
  // RestrictEmissionsToObservedLabels' coordinates, ascending; empty when
  // every coordinate is free.
  std::vector<int64_t> free_coordinates_;
  // Where each emission row's coordinates start in free_coordinates_
  // (num_rows + 1 entries, the last the emission coordinates' count).
  std::vector<int64_t> free_row_begin_;
  // The label of each emission coordinate in free_coordinates_ (its
  // coordinate mod L, kept so that the gradient's inner loop reads 4 bytes
  // rather than dividing an 8-byte coordinate).
  std::vector<int32_t> free_labels_;
  // The same emission coordinates as sparse rows, and the labels they list.
  SparseRows free_rows_;
  std::vector<uint32_t> free_listed_labels_;
  // MakeFreeCoordinatesTheSpace: w holds the free coordinates alone.
  bool free_space_ = false;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_CHAIN_PROBLEM_H_
