// The two smoothings of the max oracle used by Casimir-SVRG (Pillutla et al.
// 2018, §4–5): ℓ2 smoothing over the top-K labelings (a projection onto the
// simplex of the K scores from TopKViterbi) and entropy smoothing over all
// labelings (forward–backward, scaled, with a log-space fallback). Scores are
// loss-augmented by the caller; nothing here knows about losses or features.
//
// Thread-safety: ProjectScoresOntoSimplex is a pure function. ForwardBackward
// holds scratch buffers; use one per thread.

#ifndef CHAINTAG_MODELS_SMOOTHING_H_
#define CHAINTAG_MODELS_SMOOTHING_H_

#include <cstddef>
#include <cstdint>
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

// Entropy smoothing: μ·log Z, Z = Σ_y exp(score(y)/μ) over all L^T
// labelings, and its gradient, the expected indicator features under
// p(y) ∝ exp(score(y)/μ).
class ForwardBackward {
 public:
  // Returns μ·log Z. When `marginals` is non-null, writes T·L + L² + 2L
  // doubles in the block-state layout of models/chain_problem.h:
  //   [T×L: P(y_t = l)]
  //   [L×L: Σ_{t>0} P(y_{t−1} = a, y_t = b), row a = previous label]
  //   [L: P(y_0 = l)] [L: P(y_{T−1} = l)].
  // With pair scores (ChainScores::pair) the per-position pair marginals
  // P(y_{t−1} = a, y_t = b) come after the first part, T×L×L (row 0 zero);
  // the transition factors are then one table per position (T·L² exps).
  // A chain of length 0 has one empty labeling: returns 0, and its L² + 2L
  // marginals are 0. Requires μ > 0 and at least one labeling of finite
  // score.
  //
  // Runs the scaled forward–backward in probability space: T·L + L² + L
  // exps (each score shifted by the max of its row or table, so every factor
  // is in [0, 1]) and O(T·L²) multiply-adds; O(T·S) over the S allowed
  // transitions when ChainScores::lists has few of them (ReadsLists): the
  // same bits as over the full table with −∞ off the lists, which is what
  // it then reads whatever `transition` holds there (without ReadsLists the
  // lists are not read, and `transition` must be −∞ off them, as for the
  // other decoders). When a small μ (or a large
  // spread of scores) makes a factor exp((score − max)/μ) or a normalised
  // message entry nonzero but below 1e-100, where products of them could
  // underflow, the sentence is redone by ComputeInLogSpace. Either way the
  // result is the log-space pass's to rounding; only marginals below ~1e-300
  // may come out as 0 or denormal.
  double Compute(const ChainScores& scores, double mu, double* marginals);

  // Whether Compute reads `scores`' transitions by their lists (few allowed
  // pairs, no pair scores); it then reads `transition` on the lists alone.
  static bool ReadsLists(const ChainScores& scores);
  // With ReadsLists(scores): Compute's value and marginals, the pair part
  // being the S allowed pairs' marginals in the order of lists->next (the
  // successors of label 0, then of 1, ...): T·L + S + 2L doubles, with no
  // work of L² but in the log-space fallback, `transition` read on the
  // lists alone.
  double ComputeListed(const ChainScores& scores, double mu, double* marginals);

  // The same in log space, with one exp per (t, a, b) per pass: Compute's
  // fallback and its reference in tests.
  double ComputeInLogSpace(const ChainScores& scores, double mu,
                           double* marginals);

  // Whether the last Compute fell back to ComputeInLogSpace.
  bool used_log_space() const { return used_log_space_; }

 private:
  // The scaled pass; returns false, leaving `marginals` partly written, when
  // a factor or message entry is too small (or not finite) for it to be
  // exact.
  bool ComputeScaled(const ChainScores& scores, double mu, double* marginals,
                     double* value);

  // What the steps of the scaled pass share.
  struct ScaledPass {
    double inv_mu = 0;
    // A nonzero factor or message entry fell below kMinFactor: the sentence
    // goes to log space.
    bool tiny = false;
    // The sum of the maxima the tables were shifted by (score units).
    double shift = 0;
    // The product of the row sums as mantissa × 2^exponent: a log per
    // position would cost as much as the exps of one position.
    double scale_mantissa = 1;
    int64_t scale_exponent = 0;
    // Σ of the end factors, which start the backward pass.
    double end_sum = 0;

    void CheckFactor(double factor, double score);
    void CheckMessage(double entry);
    // Multiplies the product by `sum`; false when `sum` is too small to
    // invert (or NaN) or `tiny` is set.
    bool AcceptScale(double sum);
  };

  // The steps of ComputeScaled, each false where it gives up. The forward
  // pass leaves in terms_ the end factors, in exp_unary_ and
  // exp_transition_ the factors the later steps reuse.
  bool ScaledForward(const ChainScores& scores);
  bool ScaledForwardFirst(const ChainScores& scores);
  void ExpTransitionFactors(const ChainScores& scores);
  bool ScaledForwardStep(const ChainScores& scores, int t);
  bool ScaledForwardEnd(const ChainScores& scores);
  bool ScaledBackward(const ChainScores& scores);
  bool ScaledMarginals(const ChainScores& scores, double* marginals);
  // Compute's and ComputeListed's pass, and its log-space fallback.
  double Run(const ChainScores& scores, double mu, double* marginals);
  double FallBack(const ChainScores& scores, double mu, double* marginals);
  // listed_into_ and listed_from_ for scores.lists (ExpTransitionFactors').
  void ListedTransitionFactors(const ChainScores& scores);
  // The transition factors of the step into t ≥ 1.
  const double* TransitionFactorsInto(const ChainScores& scores, int t) const {
    return exp_transition_.data() +
           (scores.pair != nullptr
                ? static_cast<size_t>(t) * scores.num_labels * scores.num_labels
                : 0);
  }

  // The same transposed, [next][previous]: the backward step's rows.
  const double* TransposedFactorsInto(const ChainScores& scores, int t) const {
    return exp_transition_transposed_.data() +
           (scores.pair != nullptr
                ? static_cast<size_t>(t) * scores.num_labels * scores.num_labels
                : 0);
  }

  // Forward and backward messages, T×L. In log space: log-messages, each row
  // shifted to log-sum 0 so their magnitude stays that of one position's
  // scores even at T = 1000. Scaled: probabilities, each row summing to 1.
  std::vector<double> alpha_;
  std::vector<double> beta_;
  // Log space: the row shifts of alpha_ (their sum plus the last step is
  // log Z). Scaled: the sums s_t that row t of alpha_ was divided by.
  std::vector<double> alpha_shift_;
  std::vector<double> scaled_transition_;  // log space: transition / μ
  // Scaled: exp((transition − its max)/μ), L×L (with pair scores one such
  // table per position, T×L×L), and exp((unary[t] + start at t = 0 − the
  // row's max)/μ), T×L.
  std::vector<double> exp_transition_;
  std::vector<double> exp_transition_transposed_;
  // With few allowed transitions (ChainScores::lists): the factors in list
  // order, E[previous[k]][b] along the previous-label lists (the forward
  // step) and E[a][next[k]] along the next-label lists (the backward step
  // and the pair marginals), and the pair marginals' sums in the latter
  // order. listed_: whether this pass reads them.
  std::vector<double> listed_into_;
  std::vector<double> listed_from_;
  std::vector<double> listed_pair_;
  bool listed_ = false;
  // Whether the marginals' pair part is in list order (ComputeListed).
  bool listed_output_ = false;
  // The fallback's transitions, −∞ off the lists, and its full marginals.
  std::vector<double> masked_transition_;
  std::vector<double> full_marginals_;
  std::vector<double> exp_unary_;
  std::vector<double> terms_;     // L: one log-sum-exp's terms; end factors
  std::vector<double> emission_;  // L: per-label row of one position
  ScaledPass scaled_;
  // The transition scores exp_transition_'s single table was computed
  // from, with its shift and whether a factor was too small.
  struct TransitionCache {
    bool valid = false;
    std::vector<double> transition;
    double inv_mu = 0;
    double top = 0;
    bool tiny = false;
  };
  TransitionCache cached_;
  // The lists and allowed transitions listed_into_ and listed_from_ were
  // made from, with into_from[k]: where pair k of the previous-label lists
  // is in the next-label lists.
  struct ListedCache {
    bool valid = false;
    std::vector<int32_t> next_begin;
    std::vector<int32_t> next;
    std::vector<int32_t> into_from;
    std::vector<double> transition;  // in the order of `next`
    double inv_mu = 0;
    double top = 0;
    bool tiny = false;
  };
  ListedCache listed_cache_;
  bool used_log_space_ = false;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_SMOOTHING_H_
