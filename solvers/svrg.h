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
// step it was last brought up to date and the running sum of its iterates,
// and applies m skipped steps in closed form (a^m and a geometric sum) when
// a step reads the coordinate (Problem::TouchedRanges) or the epoch ends.
// The ranges are taken as parts of a fixed partition (rows, for chains):
// the coordinates of a range share their last update, checked once. A
// step then costs O(size of the example), not O(dim). The snapshot
// gradients ∇f_{i,μ}(w̃) are kept as block states from the full-gradient
// pass, so a step calls one smoothed oracle, not two.
//
// Thread-safety: one SvrgEpoch per thread; the full-gradient pass uses
// `num_threads`.

#ifndef CHAINTAG_SOLVERS_SVRG_H_
#define CHAINTAG_SOLVERS_SVRG_H_

#include <cstdint>
#include <vector>

#include "solvers/problem.h"
#include "solvers/random.h"

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

  // Wall-clock seconds of the last Run's full-gradient pass and of its n
  // steps (catch-ups included), for logs and benchmarks.
  double full_gradient_seconds() const { return full_gradient_seconds_; }
  double steps_seconds() const { return steps_seconds_; }

 private:
  // ḡ (into fixed_point_) and the snapshot block states at w̃ = start.
  void FullGradient(const SvrgEpochSettings& settings, const double* snapshot);
  // Brings coordinates [begin, begin + length), all last brought up to date
  // at the same step, to `step` along the dense map. Invariant:
  // w_[j] = w_{last}, sum_[j] = Σ_{s=1}^{last−1} w_s (the average is over
  // w_1 … w_n, so w_0 never joins it).
  void CatchUp(int64_t begin, int64_t length, int32_t step);

  const Problem& problem_;
  const int n_;
  const int64_t dim_;
  const std::vector<int64_t> state_offset_;
  std::vector<double> snapshot_states_;
  std::vector<double> w_;
  std::vector<double> sum_;
  std::vector<int32_t> last_step_;

  // Per-epoch constants of the dense map w ← a·w + (1 − a)·c with
  // a = 1 − η(λ + κ): the fixed points c_j (ḡ until the full-gradient pass
  // is done), and powers of a.
  std::vector<double> fixed_point_;
  std::vector<double> powers_;        // a^m, m = 0…n
  std::vector<double> partial_sums_;  // Σ_{k=1}^{m} a^k

  double full_gradient_seconds_ = 0;
  double steps_seconds_ = 0;

  // Per-step scratch.
  std::vector<CoordinateRange> ranges_;
  std::vector<double> step_state_;
};

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_SVRG_H_
