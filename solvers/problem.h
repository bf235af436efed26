// Problem: the solvers' whole view of a structured SVM
//
//   min_w  λ/2‖w‖² + 1/n Σ_i max_y [L_i(y) − ⟨w, ψ_i(y)⟩],
//   ψ_i(y) = φ(x_i, y_i) − φ(x_i, y).
//
// A solver sees n blocks and, per block, opaque corners (labelings). Every
// operation costs O(size of example i), never O(Dim()), except where a dense
// vector is named. Solvers never include anything chain-specific: what they
// need is added here.
//
// Per-block dual state. BCFW-type solvers keep, per block, a point
// v_i ∈ conv{ψ_i(y)} (so w_i = v_i/(λn)). Its representation belongs to the
// problem (for chains: expected label marginals, far smaller than a dense
// d-vector); the solver only holds BlockStateSize(i) doubles for it and asks
// the problem to operate on them. The state is independent of λ and affine
// in α: a solver may combine states (and corners, via AddCornerToState) with
// weights that sum to one, which is how pairwise, away and fully-corrective
// steps move a block inside its active set.
//
// Thread-safety: all methods are const and may be called concurrently for
// different or equal blocks, with distinct output buffers.

#ifndef CHAINTAG_SOLVERS_PROBLEM_H_
#define CHAINTAG_SOLVERS_PROBLEM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chaintag {

// A labeling of one block; its meaning is the problem's.
using Corner = std::vector<int32_t>;

// How a smoothed oracle replaces the max over labelings (Pillutla et al.
// 2018): with h(y) = L_i(y) − ⟨w, ψ_i(y)⟩,
//   kNone     f_i = max_y h(y)
//   kTopKL2   f_i = max_{u ∈ simplex} Σ_k u_k h(y_k) − μ/2‖u‖² over the
//             top_k labelings y_k of h (the −μ/2‖u‖² term included, which
//             the reference code leaves out of its reported value)
//   kEntropy  f_i = μ·log Σ_y exp(h(y)/μ)
struct Smoothing {
  enum class Kind { kNone, kTopKL2, kEntropy };
  Kind kind = Kind::kNone;
  double mu = 0;  // > 0 unless kNone
  int top_k = 5;  // kTopKL2
};

// Coordinates [begin, begin + length) of w.
struct CoordinateRange {
  int64_t begin = 0;
  int64_t length = 0;
};

struct OracleResult {
  Corner corner;
  double loss = 0;   // L_i(corner)
  double score = 0;  // ⟨w, ψ_i(corner)⟩
  // ⟨v_i, w⟩ for the block state passed to MaxOracle (0 when none was).
  double state_dot = 0;
};

// A change of w as scaled copies of a few vectors: addition j adds
// scales[j] times vector vectors[j] at w[targets[j], targets[j] + its
// length). Vector v is values[vector_ends[v − 1], vector_ends[v]) (from 0
// for v = 0). For chains, one label vector per position, added at each of
// the position's feature rows: a few KB per sentence where the dense
// change covers rows × labels, and addable to w by a process that does not
// hold the sentence (distributed training exchanges these).
struct BlockUpdate {
  std::vector<double> values;
  std::vector<int64_t> vector_ends;
  std::vector<int64_t> targets;
  std::vector<int32_t> vectors;
  std::vector<double> scales;

  void Clear() {
    values.clear();
    vector_ends.clear();
    targets.clear();
    vectors.clear();
    scales.clear();
  }
  int64_t VectorBegin(int32_t v) const {
    return v == 0 ? 0 : vector_ends[v - 1];
  }
  int64_t VectorLength(int32_t v) const {
    return vector_ends[v] - VectorBegin(v);
  }
  // Starts a new vector of `length` zeros; returns its index.
  int32_t AddVector(int64_t length) {
    values.resize(values.size() + length, 0.0);
    vector_ends.push_back(static_cast<int64_t>(values.size()));
    return static_cast<int32_t>(vector_ends.size()) - 1;
  }
  void AddAddition(int64_t target, int32_t vector, double scale) {
    targets.push_back(target);
    vectors.push_back(vector);
    scales.push_back(scale);
  }
  // at[0, its length) += addition j (at = w + targets[j] adds it to w).
  void AddTo(size_t j, double* at) const {
    const double* vector = values.data() + VectorBegin(vectors[j]);
    const int64_t length = VectorLength(vectors[j]);
    const double scale = scales[j];
    for (int64_t x = 0; x < length; ++x) at[x] += scale * vector[x];
  }
};

// w += update, addition by addition.
void AddBlockUpdate(const BlockUpdate& update, double* w);

class Problem {
 public:
  virtual ~Problem() = default;

  virtual int NumExamples() const = 0;
  virtual int64_t Dim() const = 0;

  // Loss-augmented decoding: a maximiser of L_i(y) − ⟨w, ψ_i(y)⟩, ties
  // broken deterministically. When `state` is non-null, also ⟨v_i, w⟩
  // (computed from the same intermediate scores, hence nearly free).
  virtual void MaxOracle(int i, const double* w, const double* state,
                         OracleResult* result) const = 0;
  // MaxOracle at w = scale·v (state-free), scores included: lets a solver
  // keep w as a scale times a vector, so that shrinking w costs O(1)
  // instead of O(Dim()) (SSG). scale > 0.
  virtual void MaxOracleScaled(int i, const double* v, double scale,
                               OracleResult* result) const = 0;
  // Prediction: a maximiser of ⟨w, φ(x_i, y)⟩.
  virtual void Decode(int i, const double* w, Corner* corner) const = 0;
  virtual double Loss(int i, const Corner& y) const = 0;
  // ⟨w, ψ_i(y)⟩.
  virtual double Score(int i, const double* w, const Corner& y) const = 0;
  // w += c·ψ_i(y).
  virtual void AddScaled(int i, const Corner& y, double c, double* w) const = 0;
  // w += c·(ψ_i(a) − ψ_i(b)), a pairwise step's change: problems that can
  // touch only where a and b differ override it.
  virtual void AddCornerDifference(int i, const Corner& a, const Corner& b,
                                   double c, double* w) const {
    AddScaled(i, a, c, w);
    AddScaled(i, b, -c, w);
  }

  // Block dual state (see the top comment).
  virtual int64_t BlockStateSize(int i) const = 0;
  // v_i = ψ_i(y_i) = 0, the state of α_i concentrated on the gold labeling.
  virtual void InitBlockState(int i, double* state) const = 0;
  // v_i ← (1−γ)·v_i + γ·ψ_i(y).
  virtual void MixCorner(int i, const Corner& y, double gamma,
                         double* state) const = 0;
  // v_i ← factor·v_i (an FW step's shrinking, MixCorner's first half):
  // problems whose states hold few nonzeros override it to touch those.
  virtual void ScaleBlockState(int i, double factor, double* state) const {
    const int64_t size = BlockStateSize(i);
    for (int64_t k = 0; k < size; ++k) state[k] *= factor;
  }
  // ‖v_i − ψ_i(y)‖².
  virtual double StateDistanceSquared(int i, const double* state,
                                      const Corner& y) const = 0;
  // w += c·(ψ_i(y) − v_i).
  virtual void AddCornerMinusState(int i, const Corner& y, const double* state,
                                   double c, double* w) const = 0;
  // The same for a state known to be Σ_k weights[k]·(the state of
  // corners[k]), the weights summing to one: problems that can read the
  // labelings instead of parts of the state they would otherwise sweep
  // override it.
  virtual void AddCornerMinusMixture(int i, const Corner& y,
                                     const double* state,
                                     const Corner* const* corners,
                                     const double* weights, int count, double c,
                                     double* w) const {
    AddCornerMinusState(i, y, state, c, w);
  }
  // AddCornerMinusState on w's coordinates in [begin, end) only, where
  // begin and end never split a range TouchedRanges gives: threads that own
  // disjoint slices of w can then add many blocks together, each
  // coordinate receiving exactly the additions, in block order, that the
  // unrestricted calls would make (forming w̄ from the averaged states).
  virtual void AddCornerMinusStateInSlice(int i, const Corner& y,
                                          const double* state, double c,
                                          int64_t begin, int64_t end,
                                          double* w) const = 0;
  // AddCornerMinusState and AddScaled as BlockUpdates, appended to
  // `update`: adding them to w changes it as those calls would (up to the
  // rounding of their sums). Their additions lie inside TouchedRanges(i).
  virtual void EncodeCornerMinusState(int i, const Corner& y,
                                      const double* state, double c,
                                      BlockUpdate* update) const = 0;
  virtual void EncodeScaled(int i, const Corner& y, double c,
                            BlockUpdate* update) const = 0;
  // state += c·(the state of α concentrated on y). Used with weights that
  // keep the state's α summing to one (e.g. +γ on one corner, −γ on another).
  virtual void AddCornerToState(int i, const Corner& y, double c,
                                double* state) const = 0;

  // Active sets, caches and working sets keep corners, never ψ vectors; these
  // serve them at the cost of one oracle's shared work, not one per corner.
  //
  // scores[k] = ⟨w, ψ_i(*corners[k])⟩ for k < count, and, when `state` is
  // non-null, *state_dot = ⟨v_i, w⟩ (for chains the unary scores are
  // computed once for all of them).
  virtual void ScoreCorners(int i, const double* w, const double* state,
                            const Corner* const* corners, int count,
                            double* scores, double* state_dot) const = 0;
  // ScoreCorners and MaxOracle(i, w, state, result) in one call, sharing
  // the work both need (for chains: one unary pass instead of two), for
  // solvers that know they will call the oracle anyway.
  virtual void ScoreCornersAndMaxOracle(int i, const double* w,
                                        const double* state,
                                        const Corner* const* corners, int count,
                                        double* scores,
                                        OracleResult* result) const = 0;
  // ‖ψ_i(a) − ψ_i(b)‖² (so ‖ψ_i(a)‖² with b the gold labeling).
  virtual double CornerDistanceSquared(int i, const Corner& a,
                                       const Corner& b) const = 0;
  // The gold labeling y_i (ψ_i(y_i) = 0, L_i(y_i) = 0 for Hamming losses).
  virtual const Corner& GoldCorner(int i) const = 0;
  // Whether `y` is a corner of block i, for corners read from a file (a
  // checkpoint): every other method trusts its corners. By default only
  // the length is checked; problems with label ids check their range too.
  virtual bool IsCorner(int i, const Corner& y) const {
    return y.size() == GoldCorner(i).size();
  }

  // Smoothed oracle: returns f_{i,μ}(w) (see Smoothing) and writes to
  // `state` (BlockStateSize(i) doubles) the block state of the distribution
  // q the smoothing puts on labelings, so that ∇f_{i,μ}(w) = −E_q ψ_i(y).
  // AddCornerMinusState(i, GoldCorner(i), state, c, w) then does
  // w += c·∇f_{i,μ}(w).
  virtual double SmoothedOracle(int i, const double* w,
                                const Smoothing& smoothing,
                                double* state) const = 0;
  // The coordinates block i's oracles read and its updates write, as
  // ranges (which may repeat), so that a solver can bring exactly those up
  // to date before a step (lazy updates). The ranges of every block are
  // parts of one fixed partition of the coordinates: two ranges are equal
  // or disjoint. Appends to `ranges`.
  virtual void TouchedRanges(int i,
                             std::vector<CoordinateRange>* ranges) const = 0;
};

// Where each block's state starts in one array holding all of them:
// offsets[i] for block i, offsets[n] the total size.
inline std::vector<int64_t> BlockStateOffsets(const Problem& problem) {
  const int n = problem.NumExamples();
  std::vector<int64_t> offsets(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    offsets[i + 1] = offsets[i] + problem.BlockStateSize(i);
  }
  return offsets;
}

// max_j |v_j − (Σ_i v_i/(λn))_j| for block states held in one array at
// `offsets` (BlockStateOffsets): how far a solver's v (w before any box
// truncation) is from its states, for bookkeeping checks. O(Dim()).
double MaxWeightError(const Problem& problem, const double* v,
                      const double* states, const int64_t* offsets,
                      double lambda);

// The largest g that divides Dim() and the start and length of every range
// any block touches: the ranges are then unions of aligned slots of g
// coordinates (rows of the label count, for chains), and a slot index
// (coordinate / g) names one range. O(size of the problem), on up to
// num_threads threads.
int64_t RangeGranularity(const Problem& problem, int num_threads = 1);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_PROBLEM_H_
