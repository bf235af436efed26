// The two smoothings of the max oracle used by Casimir-SVRG (Pillutla et al.
// 2018, §4–5): ℓ2 smoothing over the top-K labelings (a projection onto the
// simplex of the K scores from TopKViterbi) and entropy smoothing over all
// labelings (forward–backward in log space). Scores are loss-augmented by
// the caller; nothing here knows about losses or features.
//
// Thread-safety: ProjectScoresOntoSimplex is a pure function. ForwardBackward
// holds scratch buffers; use one per thread.

#ifndef CHAINTAG_MODELS_SMOOTHING_H_
#define CHAINTAG_MODELS_SMOOTHING_H_

#include <vector>

#include "models/viterbi.h"

namespace chaintag {

// ℓ2 smoothing of max_k s_k: u = argmax_{u ∈ simplex} ⟨u, s⟩ − (μ/2)‖u‖², the
// Euclidean projection of s/μ onto the simplex. `scores` holds k ≥ 1 scores
// sorted descending with scores[0] finite; trailing entries may be −∞ (fewer
// than k labelings exist) and then get weight exactly 0. Writes u to
// `weights` (k entries) and returns Σ_j u_j s_j − (μ/2)‖u‖². Requires μ > 0.
//
// The returned value includes −(μ/2)‖u‖², so it is the smoothed max whose
// gradient with respect to the scores is u; the reference code's
// `function_value` reports Σ_j u_j s_j without that term.
double ProjectScoresOntoSimplex(const double* scores, int k, double mu,
                                double* weights);

// Entropy smoothing: μ·log Σ_y exp(score(y)/μ) over all L^T labelings, and
// its gradient, the expected indicator features under p(y) ∝ exp(score(y)/μ).
class ForwardBackward {
 public:
  // Returns μ·log Z. When `marginals` is non-null, writes T·L + L² + 2L
  // doubles in the block-state layout of models/chain_problem.h:
  //   [T×L: P(y_t = l)]
  //   [L×L: Σ_{t>0} P(y_{t−1} = a, y_t = b), row a = previous label]
  //   [L: P(y_0 = l)] [L: P(y_{T−1} = l)].
  // A chain of length 0 has one empty labeling: returns 0, and its L² + 2L
  // marginals are 0. Requires μ > 0 and at least one labeling of finite
  // score. Runs in O(T·L²) time, with one exp per (t, a, b) per pass.
  double Compute(const ChainScores& scores, double mu, double* marginals);

 private:
  // Forward and backward log-messages, T×L, each row shifted to log-sum 0 so
  // their magnitude stays that of one position's scores even at T = 1000.
  std::vector<double> alpha_;
  std::vector<double> beta_;
  // The row shifts of alpha_ (their sum plus the last step is log Z).
  std::vector<double> alpha_shift_;
  std::vector<double> scaled_transition_;  // transition / μ
  std::vector<double> terms_;              // one log-sum-exp's L terms
  std::vector<double> emission_;           // per-label row of one position
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SMOOTHING_H_
