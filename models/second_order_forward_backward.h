// Entropy smoothing on the second-order lattice (models/second_order.h):
// μ·log Z over the allowed labelings and the expected features, what the
// entropy-smoothed oracle needs at second order (models/smoothing.h has the
// first-order ForwardBackward).
//
// Thread-safety: a SecondOrderForwardBackward holds scratch buffers; use one
// per thread. The structure and scores it reads may be shared.

#ifndef CHAINTAG_MODELS_SECOND_ORDER_FORWARD_BACKWARD_H_
#define CHAINTAG_MODELS_SECOND_ORDER_FORWARD_BACKWARD_H_

#include <cstdint>
#include <vector>

#include "models/second_order.h"

namespace chaintag {

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
  // (below 1e-200) is redone as an exact log-sum-exp; results match the
  // exact sums to rounding, but for marginals below ~1e-300, which may come
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

#endif  // CHAINTAG_MODELS_SECOND_ORDER_FORWARD_BACKWARD_H_
