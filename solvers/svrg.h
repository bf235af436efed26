// One SVRG epoch on a smoothed structured SVM (the inner loop of Pillutla et
// al. 2018, Alg. 3–4, as their reference code runs it):
//
//   F(w) = 1/n Σ_i f_{i,μ}(w) + λ/2‖w‖² + κ/2‖w − z‖²,
//
// from a start point w_0 that is also the snapshot w̃: the full gradient
// ḡ = 1/n Σ_i ∇f_{i,μ}(w̃) (loss only), then n steps, each on a block i drawn
// uniformly with replacement,
//
//   w ← w − η·(∇f_{i,μ}(w) − ∇f_{i,μ}(w̃) + ḡ + λw + κ(w − z)),
//
// and the epoch's output is the average of the n inner iterates.
//
// Lazy updates. Within an epoch the dense part of a step is the same affine
// map on every coordinate, w_j ← a·w_j + (1 − a)·c_j with a = 1 − η(λ + κ)
// and the fixed point c_j = (κ z_j − ḡ_j)/(λ + κ). A coordinate no example
// touches just follows that map, so the epoch keeps, per coordinate, the
// step L it was last brought up to date and a value u_j from which
// w_s = a^{s−L}·u_j + (1 − a^{s−L})·c_j for every later step s up to the
// next touch, and applies the skipped steps in closed form (tabulated
// powers) when a step reads the coordinate (Problem::TouchedRanges) or the
// epoch ends. The ranges are taken as parts of a fixed partition (rows, for
// chains): the coordinates of a range share their last update, checked
// once and kept once per slot of g coordinates, g the largest number that
// divides every range's start and length (the label count, for chains), so
// that the steps' table is g times smaller than w. A step brings its ranges to
// w_t in one sweep, calls the oracle, and folds the sparse gradient into u: u =
// w_t − (η/a)·(∇f_i(w_t) − ∇f_i(w̃)), so that the map's next application
// completes the step (a ≠ 0; at a = 0 the epoch runs dense). A step then costs
// O(size of the example), not O(dim).
//
// The average of w_1 … w_n is not summed lazily: unrolling the recursion,
//   Σ_{s=1}^{n} w_s = P·w_0 + (n − P)·c + Σ_t ω_t·δ_t,
// with P = Σ_{k=1}^{n} a^k, δ_t the sparse part of step t and
// ω_t = Σ_{k=0}^{n−1−t} a^k, and δ_t is linear in the block state
// difference s_t − s̃_i, so the epoch sums ω_t·(s_t − s̃_i) per block in
// block-state space (O(state size) a step) and maps each sampled block's
// sum into w-space once, at the end. The snapshot gradients ∇f_{i,μ}(w̃)
// are kept as block states from the full-gradient pass, so a step calls
// one smoothed oracle, not two.
//
// Thread-safety: one SvrgEpoch per thread; the full-gradient pass uses
// `num_threads`.

#ifndef CHAINTAG_SOLVERS_SVRG_H_
#define CHAINTAG_SOLVERS_SVRG_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "base/huge_pages.h"
#include "base/random.h"
#include "solvers/duality_gap.h"
#include "solvers/lazy_prox.h"
#include "solvers/problem.h"

namespace chaintag {

struct SvrgEpochSettings {
  double lambda = 0;
  double kappa = 0;  // 0: no proximal term (plain SVRG)
  double learning_rate = 0;
  Smoothing smoothing;
  bool lazy_updates = true;
  int num_threads = 1;
};

class SvrgEpoch {
 public:
  explicit SvrgEpoch(const Problem& problem);

  // Runs one epoch from `start` with prox centre `center` (Dim() doubles;
  // may be null when κ = 0), drawing blocks from `random`. Writes the
  // average of the n inner iterates to `average` and the last iterate to
  // `last` (either may be null). Returns the smoothed oracle calls made
  // (2n).
  int64_t Run(const SvrgEpochSettings& settings,
              const std::vector<double>& start, const double* center,
              SolverRandom* random, std::vector<double>* average,
              std::vector<double>* last);

  // The exact duality gap at `point` of lambda/2||w||^2 + 1/n sum_i
  // f_{i,mu}(w) with the settings' entropy smoothing: the dual at the
  // smoothing's distributions q_i is 1/n sum_i [f_i + <w, v_i>] -
  // lambda/2||w(q)||^2, w(q) = 1/(lambda n) sum_i v_i (docs/solvers.md).
  // From one full-gradient pass at `point`, which the next Run reuses when
  // it starts there: certifying an epoch's output costs nothing when the
  // next epoch starts from it (plain SVRG).
  DualityGap Certify(const SvrgEpochSettings& settings,
                     const std::vector<double>& point);

  // Wall-clock seconds of the last Run's full-gradient pass, of its n steps
  // (catch-ups included), and of forming its outputs (the lazy path's
  // average from the block sums, the last iterate), for logs and
  // benchmarks.
  double full_gradient_seconds() const { return full_gradient_seconds_; }
  double steps_seconds() const { return steps_seconds_; }
  double finish_seconds() const { return finish_seconds_; }

 private:
  // ḡ (into fixed_point_) and the snapshot block states at w̃ = start;
  // with `certify`, also each block's f_i and <w̃, v_i> (Certify).
  void FullGradient(const SvrgEpochSettings& settings, const double* snapshot,
                    bool certify);
  // The textbook steps, every coordinate every step (lazy_updates = false,
  // or a = 0): the reference the lazy steps must match.
  void DenseSteps(const SvrgEpochSettings& settings, SolverRandom* random);
  // The lazy steps (see the top comment), leaving w_ as u.
  void LazySteps(const SvrgEpochSettings& settings, SolverRandom* random);
  // After LazySteps: the average of w_1 … w_n from the block sums (when
  // `average` is non-null), and w_ brought to w_n when `finish_w` is set.
  void LazyFinish(const SvrgEpochSettings& settings, const double* start,
                  std::vector<double>* average, bool finish_w);

  const Problem& problem_;
  const int n_;
  const int64_t dim_;
  const std::vector<int64_t> state_offset_;
  std::vector<double> snapshot_states_;
  std::vector<double> snapshot_losses_, snapshot_dots_;  // with certify
  // The point of the last Certify, whose full gradient fixed_point_ and
  // snapshot_states_ hold until the next Run.
  std::vector<double> certified_point_;
  bool certified_ = false;
  // The touched ranges are unions of aligned slots of granularity_
  // coordinates (see RangeGranularity).
  const int64_t granularity_;
  // The iterate: w_t itself on the dense path; u (see the top comment) on
  // the lazy one, with last_step_[k] the step L at which the coordinates of
  // slot k stand.
  HugePageVector<double> w_;
  HugePageVector<int32_t> last_step_;
  // Dense path: Σ_{s=1}^{t} w_s.
  std::vector<double> sum_;
  // Lazy path: per block, Σ_t ω_t·(s_t − s̃_i) over the steps that drew it
  // (block-state layout), valid where sampled_[i]; ω_t by step.
  std::vector<double> weighted_states_;
  std::vector<char> sampled_;
  std::vector<double> step_weights_;

  // Per-epoch constants of the dense map w ← a·w + (1 − a)·c with
  // a = 1 − η(λ + κ): the fixed points c_j (ḡ until the full-gradient pass
  // is done; the lazy path forms the average in their place at the end),
  // and for m = 0…n: a^m and 1 − a^m (LazyProx's tables, without a
  // threshold).
  HugePageVector<double> fixed_point_;
  LazyProx prox_;

  double full_gradient_seconds_ = 0;
  double steps_seconds_ = 0;
  double finish_seconds_ = 0;

  // Per-step scratch.
  std::vector<CoordinateRange> ranges_;
  std::vector<double> step_state_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SVRG_H_
