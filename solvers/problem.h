// Problem: the solvers' whole view of a structured SVM
//
//   min_w  λ/2‖w‖² + 1/n Σ_i max_y [L_i(y) − ⟨w, ψ_i(y)⟩],
//   ψ_i(y) = φ(x_i, y_i) − φ(x_i, y).
//
// A solver sees n blocks and, per block, opaque corners (labelings).
// Solvers never include anything chain-specific: what they need is added
// here. A problem that overrides every speed path (ChainProblem) costs
// O(size of example i) per operation, never O(Dim()); the defaults may cost
// O(Dim()).
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

#include "absl/status/statusor.h"
#include "absl/types/span.h"

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

// A structured problem as the solvers see it. Ten methods are the core,
// pure virtual: a new problem (a loss, a tree, a segmentation) writes those
// and every solver runs on it. Every other virtual method is an optional
// speed path with a default built from the core, correct but O(Dim()) per
// call or slower; a problem overrides one when it can do the same work from
// less (for chains: from the unary scores, the Gram matrices, the labels a
// state holds). Each speed path's comment says what it must equal.
//
//   core (pure virtual)        what it is
//   NumExamples, Dim           n blocks, w in R^Dim
//   GoldCorner                 y_i (psi_i(y_i) = 0)
//   Loss                       L_i(y)
//   MaxOracle                  argmax_y L_i(y) - <w, psi_i(y)>
//   Decode                     argmax_y <w, phi(x_i, y)>
//   AddScaled                  w += c * psi_i(y)
//   BlockStateSize             doubles of block i's dual state
//   AddCornerToState           state += c * (the state of alpha on y)
//   AddCornerMinusState        w += c * (psi_i(y) - v_i)
//
// A minimal problem whose block state is v_i itself, densely (BlockStateSize
// = Dim(), the state of y is psi_i(y)):
//
//   class MyProblem : public Problem {
//    public:
//     int NumExamples() const override { return n_; }
//     int64_t Dim() const override { return d_; }
//     const Corner& GoldCorner(int i) const override { return gold_[i]; }
//     double Loss(int i, const Corner& y) const override { ... }
//     void MaxOracle(int i, const double* w,
//                    OracleResult* result) const override {
//       result->corner = ...;  // a maximiser of L_i(y) - <w, psi_i(y)>
//       result->loss = Loss(i, result->corner);
//       result->score = Score(i, w, result->corner);
//     }
//     void Decode(int i, const double* w, Corner* y) const override { ... }
//     void AddScaled(int i, const Corner& y, double c,
//                    double* w) const override { ... }  // w += c psi_i(y)
//     int64_t BlockStateSize(int) const override { return d_; }
//     void AddCornerToState(int i, const Corner& y, double c,
//                           double* state) const override {
//       AddScaled(i, y, c, state);
//     }
//     void AddCornerMinusState(int i, const Corner& y, const double* state,
//                              double c, double* w) const override {
//       AddScaled(i, y, c, w);
//       for (int64_t j = 0; j < d_; ++j) w[j] -= c * state[j];
//     }
//   };
//
//   MyProblem problem(...);
//   absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);  //
//   registry.h std::vector<double> w; absl::StatusOr<TrainingSummary> summary =
//       (*solver)->Solve(problem, &monitor, &w);  // summary->gap certifies w
//
// solvers/core_problem_test.cc runs every solver on a problem that writes
// only the core and checks that each reaches the optimum the full
// implementation of the same problem reaches.
class Problem {
 public:
  virtual ~Problem() = default;

  // ---- The core ----

  virtual int NumExamples() const = 0;
  virtual int64_t Dim() const = 0;
  // The gold labeling y_i (psi_i(y_i) = 0, L_i(y_i) = 0 for Hamming losses).
  virtual const Corner& GoldCorner(int i) const = 0;
  virtual double Loss(int i, const Corner& y) const = 0;
  // Loss-augmented decoding: result->corner a maximiser of
  // L_i(y) - <w, psi_i(y)>, ties broken deterministically, with its loss and
  // score <w, psi_i(corner)>; result->state_dot is left as it is.
  virtual void MaxOracle(int i, const double* w,
                         OracleResult* result) const = 0;
  // Prediction: a maximiser of <w, phi(x_i, y)>.
  virtual void Decode(int i, const double* w, Corner* corner) const = 0;
  // w += c*psi_i(y).
  virtual void AddScaled(int i, const Corner& y, double c, double* w) const = 0;
  // Block dual state (see the top comment): its size in doubles, and
  // state += c*(the state of alpha concentrated on y). The state is affine
  // in alpha; solvers combine states with weights that sum to one (e.g. +g
  // on one corner, -g on another).
  virtual int64_t BlockStateSize(int i) const = 0;
  virtual void AddCornerToState(int i, const Corner& y, double c,
                                double* state) const = 0;
  // w += c*(psi_i(y) - v_i), v_i the point the state represents (with y
  // the gold labeling: w -= c*v_i).
  virtual void AddCornerMinusState(int i, const Corner& y, const double* state,
                                   double c, double* w) const = 0;

  // ---- Optional speed paths: each default is built from the core ----

  // MaxOracle, and, when `state` is non-null, result->state_dot = <v_i, w>
  // (StateDot), else 0. Chains compute both from the same scores.
  virtual void MaxOracleWithStateDot(int i, const double* w,
                                     const double* state,
                                     OracleResult* result) const;
  // <v_i, w>.
  virtual double StateDot(int i, const double* state, const double* w) const;
  // MaxOracle at w = scale*v, scale > 0: lets a solver keep w as a scale
  // times a vector, so that shrinking w costs O(1) instead of O(Dim()) (SSG).
  virtual void MaxOracleScaled(int i, const double* v, double scale,
                               OracleResult* result) const;
  // <w, psi_i(y)>.
  virtual double Score(int i, const double* w, const Corner& y) const;
  // w += c*(psi_i(a) - psi_i(b)), a pairwise step's change.
  virtual void AddCornerDifference(int i, const Corner& a, const Corner& b,
                                   double c, double* w) const;
  // The state of alpha concentrated on the gold labeling (v_i = 0).
  virtual void InitBlockState(int i, double* state) const;
  // v_i <- (1-gamma)*v_i + gamma*psi_i(y): ScaleBlockState(1 - gamma), then
  // AddCornerToState(y, gamma).
  virtual void MixCorner(int i, const Corner& y, double gamma,
                         double* state) const;
  // v_i <- factor*v_i (an FW step's shrinking, MixCorner's first half).
  virtual void ScaleBlockState(int i, double factor, double* state) const;
  // ||v_i - psi_i(y)||^2.
  virtual double StateDistanceSquared(int i, const double* state,
                                      const Corner& y) const;
  // AddCornerMinusState for a state known to be sum_k weights[k]*(the state
  // of corners[k]), the weights summing to one.
  virtual void AddCornerMinusMixture(int i, const Corner& y,
                                     const double* state,
                                     const Corner* const* corners,
                                     const double* weights, int count, double c,
                                     double* w) const;
  // AddCornerMinusState on w's coordinates in [begin, end) only, wherever
  // begin and end cut the ranges TouchedRanges gives: threads that own
  // disjoint slices of w can then add many blocks together, each
  // coordinate receiving the additions, in block order, that the
  // unrestricted calls would make (forming the average from the averaged
  // states).
  virtual void AddCornerMinusStateInSlice(int i, const Corner& y,
                                          const double* state, double c,
                                          int64_t begin, int64_t end,
                                          double* w) const;
  // AddCornerMinusState and AddScaled as BlockUpdates, appended to
  // `update`: adding them to w changes it as those calls would (up to the
  // rounding of their sums). Their additions lie inside TouchedRanges(i).
  virtual void EncodeCornerMinusState(int i, const Corner& y,
                                      const double* state, double c,
                                      BlockUpdate* update) const;
  virtual void EncodeScaled(int i, const Corner& y, double c,
                            BlockUpdate* update) const;
  // Active sets, caches and working sets keep corners, never psi vectors;
  // these serve them. scores[k] = <w, psi_i(*corners[k])> for k < count,
  // and, when `state` is non-null, *state_dot = <v_i, w>.
  virtual void ScoreCorners(int i, const double* w, const double* state,
                            const Corner* const* corners, int count,
                            double* scores, double* state_dot) const;
  // ScoreCorners (state_dot into result->state_dot) and
  // MaxOracleWithStateDot in one call, for solvers that know they will call
  // the oracle anyway.
  virtual void ScoreCornersAndMaxOracle(int i, const double* w,
                                        const double* state,
                                        const Corner* const* corners, int count,
                                        double* scores,
                                        OracleResult* result) const;
  // ||psi_i(a) - psi_i(b)||^2 (so ||psi_i(a)||^2 with b the gold labeling).
  virtual double CornerDistanceSquared(int i, const Corner& a,
                                       const Corner& b) const;
  // Whether `y` is a corner of block i, for corners read from a file (a
  // checkpoint): every other method trusts its corners. By default only
  // the length is checked; problems with label ids check their range too.
  virtual bool IsCorner(int i, const Corner& y) const;
  // Whether SmoothedOracle implements `kind`. The default implements kNone
  // only (top-K and entropy smoothing need a problem's own enumeration);
  // the smoothed solvers refuse a kind the problem lacks.
  virtual bool SupportsSmoothing(Smoothing::Kind kind) const;
  // Smoothed oracle: returns f_{i,mu}(w) (see Smoothing) and writes to
  // `state` (BlockStateSize(i) doubles) the block state of the distribution
  // q the smoothing puts on labelings, so that grad f_{i,mu}(w) =
  // -E_q psi_i(y). AddCornerMinusState(i, GoldCorner(i), state, c, w) then
  // does w += c*grad f_{i,mu}(w).
  virtual double SmoothedOracle(int i, const double* w,
                                const Smoothing& smoothing,
                                double* state) const;
  // SmoothedOracle, and ⟨v_i, w⟩ of the state it writes into *state_dot
  // (StateDot). Chains compute both from the same scores; the smoothed
  // solvers' certificates need both at every example.
  virtual double SmoothedOracleWithStateDot(int i, const double* w,
                                            const Smoothing& smoothing,
                                            double* state,
                                            double* state_dot) const;
  // The coordinates the model has features for, ascending, when it fixes
  // the others at 0 (a chain restricted to the labels each attribute is
  // seen with): the objective is then minimised over w with 0 elsewhere,
  // whose gradient is the full one's at these coordinates. The operations
  // above stay those of all of w. A solver that supports this keeps its
  // vectors over these coordinates (lbfgs, sag); the registry's others refuse
  // such a problem (a chain offers them its free coordinates as its whole
  // space instead: ChainProblem::MakeFreeCoordinatesTheSpace). False, with
  // `coordinates` untouched, when every coordinate is free (the default).
  // `coordinates` may be null. The w such a solver returns (Solver::Solve) and
  // reports (PassSteps::Point) holds one entry per free coordinate
  // (WeightsInAllCoordinates gives it in all of w).
  virtual bool FreeCoordinates(std::vector<int64_t>* coordinates) const;
  // SmoothedOracleWithStateDot at the point whose free coordinates are
  // `free_w` (one entry each, in FreeCoordinates' order), 0 elsewhere: a
  // solver keeping its vectors over the free coordinates calls the oracles
  // without a point in all of w. Without FreeCoordinates free_w is w. By
  // default through a dense copy of the point (Dim() a call); a problem
  // with free coordinates should read them directly.
  virtual double SmoothedOracleWithStateDotAtFree(int i, const double* free_w,
                                                  const Smoothing& smoothing,
                                                  double* state,
                                                  double* state_dot) const;
  // Whether SmoothedOracleWithStateDotAtFree is the faster of the two (a
  // solver then needs no point in all of w to call the oracles). False by
  // default.
  virtual bool OraclesAtFreeAreFaster() const { return false; }
  // AddCornerMinusState's change at the free coordinates alone, added to
  // `free_w` (one entry per free coordinate, in FreeCoordinates' order) at
  // its entries [begin, end): a solver keeping its vectors over the free
  // coordinates sums gradients without a vector of all of w. Without
  // FreeCoordinates it is AddCornerMinusStateInSlice. By default through a
  // vector of all of w (Dim() doubles a call).
  virtual void AddCornerMinusStateAtFree(int i, const Corner& y,
                                         const double* state, double c,
                                         int64_t begin, int64_t end,
                                         double* free_w) const;
  // The coordinates block i's oracles read and its updates write, as
  // ranges (which may repeat), so that a solver can bring exactly those up
  // to date before a step (lazy updates). The ranges of every block are
  // parts of one fixed partition of the coordinates: two ranges are equal
  // or disjoint. Appends to `ranges`. By default all of w, one range.
  virtual void TouchedRanges(int i, std::vector<CoordinateRange>* ranges) const;
  // TouchedRanges at the free coordinates: ranges of entries of a vector
  // holding one entry per free coordinate (FreeCoordinates' order), again
  // parts of one fixed partition, covering every free coordinate block i's
  // oracles read and its updates write. Without FreeCoordinates it is
  // TouchedRanges. By default all the free coordinates, one range (their
  // list a call).
  virtual void TouchedRangesAtFree(int i,
                                   std::vector<CoordinateRange>* ranges) const;
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

// w as Solver::Solve returns it, in all of `problem`'s Dim() coordinates:
// a copy of w, or on a problem with FreeCoordinates (where w holds one
// entry per free coordinate) w's entries at those coordinates and 0
// elsewhere. Fails on a w of neither size.
absl::StatusOr<std::vector<double>> WeightsInAllCoordinates(
    const Problem& problem, absl::Span<const double> w);

// The entries of the w a solver keeps: Dim(), or on a problem with
// FreeCoordinates one per free coordinate.
int64_t SolverDimension(const Problem& problem);

// The largest g that divides Dim() and the start and length of every range
// any block touches: the ranges are then unions of aligned slots of g
// coordinates (rows of the label count, for chains), and a slot index
// (coordinate / g) names one range. O(size of the problem), on up to
// num_threads threads.
int64_t RangeGranularity(const Problem& problem, int num_threads = 1);

// w's coordinates [0, dim) cut into at most `parts` nearly equal slices of
// whole slots of `granularity` (which divides dim): the slices' bounds,
// slice s being [bounds[s], bounds[s + 1]). Threads that own one slice each
// can add many blocks' AddCornerMinusStateInSlice together.
std::vector<int64_t> SliceBounds(int64_t dim, int64_t granularity, int parts);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_PROBLEM_H_
