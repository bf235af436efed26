#include "models/smoothing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "base/cpu_dispatch.h"
#include "models/log_sum_exp.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.69314718055994530942;

// The scaled forward–backward gives up on a sentence (it goes to log space)
// when a nonzero factor exp((score − max)/μ) or a nonzero entry of a
// normalised message falls below kMinFactor: then no product of three of
// them, (1e-100)³, comes near the smallest normal double (2.2e-308), so
// nothing underflows. kMinScale bounds the row sums and normalisers whose
// reciprocals are taken.
constexpr double kMinFactor = 1e-100;
constexpr double kMinScale = 1e-280;
// The forward–backward visits the allowed transitions by their lists when
// they are at most 1/kListedShare of the L² pairs
// (docs/experiments.md#the-crfs-forward-backward-over-the-allowed-transitions-2026-11-28-night).
constexpr int64_t kListedShare = 4;

double MaxOf(const double* x, size_t n) {
  double top = x[0];
  for (size_t i = 1; i < n; ++i) top = std::max(top, x[i]);
  return top;
}

// out[j] = Σ_i weights[i]·table[i·L + j], the terms added in order of i:
// the forward step with the factors E[a][b], the backward step with their
// transpose, so that both run along contiguous rows.
CHAINTAG_AVX2_CLONES void WeightedRowSum(int L, const double* weights,
                                         const double* table,
                                         double* __restrict out) {
  std::fill(out, out + L, 0.0);
  for (int i = 0; i < L; ++i) {
    const double weight = weights[i];
    const double* row = table + static_cast<size_t>(i) * L;
    for (int j = 0; j < L; ++j) out[j] += weight * row[j];
  }
}

// matrix[a·L + b] += left[a]·right[b].
CHAINTAG_AVX2_CLONES void AddOuterProduct(int L, const double* left,
                                          const double* right,
                                          double* __restrict matrix) {
  for (int a = 0; a < L; ++a) {
    const double p = left[a];
    double* row = matrix + static_cast<size_t>(a) * L;
    for (int b = 0; b < L; ++b) row[b] += p * right[b];
  }
}

// out[j] = Σ_k weights[index[k]]·factors[k] over k in [begin[j],
// begin[j + 1]), in order of k: with the lists ascending and factors[k] the
// table's entry at (index[k], j), WeightedRowSum's sums less their terms of
// a zero factor, which add exactly +0 to a sum of nonnegative terms; so the
// same bits. Scalar, so that the order of the additions stays that one.
void ListedRowSum(int L, const int32_t* begin, const int32_t* index,
                  const double* factors, const double* weights,
                  double* __restrict out) {
  for (int j = 0; j < L; ++j) {
    double sum = 0;
    for (int32_t k = begin[j]; k < begin[j + 1]; ++k) {
      sum += weights[index[k]] * factors[k];
    }
    out[j] = sum;
  }
}

// to[b·L + a] = from[a·L + b].
void Transpose(int L, const double* from, double* to) {
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      to[static_cast<size_t>(b) * L + a] = from[static_cast<size_t>(a) * L + b];
    }
  }
}

// Subtracts the row's log-sum-exp from it and returns that shift.
double ShiftToLogSumZero(double* x, int n) {
  const double shift = LogSumExp(x, n);
  for (int i = 0; i < n; ++i) x[i] -= shift;
  return shift;
}

}  // namespace

double ProjectScoresOntoSimplex(const double* scores, int k, double mu,
                                double* weights) {
  assert(k >= 1 && mu > 0 && std::isfinite(scores[0]));
  // Everything is computed on d_j = s_j − s_0 (the reference's formulas are
  // invariant to the shift): with s_j/μ directly, a small μ makes ρ cancel
  // s_0/μ and the one-hot weight of a clear winner comes out ≠ 1.
  const double top = scores[0];
  // The reference's rule: the support is the first n = j + 1 such that
  // D_j − n·d_{j+1} ≥ μ (D_j = d_0 + … + d_j), or all k. This is the classic
  // sort-based projection: D_j − n·d_{j+1} is nondecreasing in j, and its
  // first crossing of μ is where the next coordinate's weight would be ≤ 0.
  // A −∞ score makes the left side +∞, so the support stops before it.
  int support = k;
  double cumulative = 0;
  for (int j = 0; j < k; ++j) {
    cumulative += scores[j] - top;
    if (j + 1 < k && cumulative - (j + 1) * (scores[j + 1] - top) >= mu) {
      support = j + 1;
      break;
    }
  }
  const double rho = (1 - cumulative / mu) / support;
  double value = top;
  double squared_norm = 0;
  for (int j = 0; j < k; ++j) {
    // Beyond the support the weight is 0 exactly (rounding of d_j/μ + ρ
    // could leave a tiny positive one; a −∞ score would give 0·∞ below).
    const double u =
        j < support ? std::max(0.0, (scores[j] - top) / mu + rho) : 0.0;
    weights[j] = u;
    if (u > 0) {
      // Σ u_j s_j = s_0 + Σ u_j d_j since Σ u_j = 1.
      value += u * (scores[j] - top);
      squared_norm += u * u;
    }
  }
  return value - 0.5 * mu * squared_norm;
}

// Only when the allowed transitions are few, as a gather costs more than a
// contiguous multiply-add.
bool ForwardBackward::ReadsLists(const ChainScores& scores) {
  const TransitionLists* lists = scores.lists;
  if (lists == nullptr || scores.pair != nullptr) return false;
  const int64_t L = scores.num_labels;
  return lists->size() > 0 && kListedShare * lists->size() <= L * L;
}

double ForwardBackward::Compute(const ChainScores& scores, double mu,
                                double* marginals) {
  listed_output_ = false;
  return Run(scores, mu, marginals);
}

double ForwardBackward::ComputeListed(const ChainScores& scores, double mu,
                                      double* marginals) {
  assert(ReadsLists(scores));
  listed_output_ = true;
  return Run(scores, mu, marginals);
}

double ForwardBackward::Run(const ChainScores& scores, double mu,
                            double* marginals) {
  assert(mu > 0);
  double value;
  used_log_space_ = !ComputeScaled(scores, mu, marginals, &value);
  if (used_log_space_) value = FallBack(scores, mu, marginals);
  return value;
}

// The log-space pass reads every transition: read by the lists, it gets
// them −∞ off the lists (the scaled pass ignored what they held there), and
// a listed output is gathered from its full one.
double ForwardBackward::FallBack(const ChainScores& scores, double mu,
                                 double* marginals) {
  if (!ReadsLists(scores)) return ComputeInLogSpace(scores, mu, marginals);
  const TransitionLists& lists = *scores.lists;
  const int L = scores.num_labels;
  const size_t LL = static_cast<size_t>(L) * L;
  masked_transition_.assign(LL, kMinusInfinity);
  for (int a = 0; a < L; ++a) {
    for (int32_t k = lists.next_begin[a]; k < lists.next_begin[a + 1]; ++k) {
      const size_t at = static_cast<size_t>(a) * L + lists.next[k];
      masked_transition_[at] = scores.transition[at];
    }
  }
  ChainScores masked = scores;
  masked.transition = masked_transition_.data();
  masked.lists = nullptr;
  if (!listed_output_ || marginals == nullptr) {
    return ComputeInLogSpace(masked, mu, marginals);
  }
  const size_t cells = static_cast<size_t>(scores.length) * L;
  full_marginals_.resize(cells + LL + 2 * L);
  const double value = ComputeInLogSpace(masked, mu, full_marginals_.data());
  std::copy(full_marginals_.begin(), full_marginals_.begin() + cells,
            marginals);
  double* pair = marginals + cells;
  for (int a = 0; a < L; ++a) {
    for (int32_t k = lists.next_begin[a]; k < lists.next_begin[a + 1]; ++k) {
      pair[k] =
          full_marginals_[cells + static_cast<size_t>(a) * L + lists.next[k]];
    }
  }
  std::copy(full_marginals_.begin() + cells + LL, full_marginals_.end(),
            pair + lists.size());
  return value;
}

void ForwardBackward::ScaledPass::CheckFactor(double factor, double score) {
  tiny |= factor < kMinFactor && score != kMinusInfinity;
}

void ForwardBackward::ScaledPass::CheckMessage(double entry) {
  tiny |= entry < kMinFactor && entry != 0;
}

bool ForwardBackward::ScaledPass::AcceptScale(double sum) {
  if (tiny || !(sum >= kMinScale)) return false;  // also NaN
  int exponent;
  scale_mantissa = std::frexp(scale_mantissa * sum, &exponent);
  scale_exponent += exponent;
  return true;
}

bool ForwardBackward::ComputeScaled(const ChainScores& scores, double mu,
                                    double* marginals, double* value) {
  const int T = scores.length;
  const int L = scores.num_labels;
  if (T == 0) {
    const size_t pairs = listed_output_
                             ? static_cast<size_t>(scores.lists->size())
                             : static_cast<size_t>(L) * L;
    if (marginals != nullptr) {
      std::fill(marginals, marginals + pairs + 2 * L, 0.0);
    }
    *value = 0;
    return true;
  }
  // Every table is shifted by its max so that its factors lie in [0, 1]:
  // the sum of the shifts (score units) plus μ·log of the product of the
  // row sums is μ·log Z. A −∞ score gives a factor of exactly 0; a table
  // with no finite entry (or a +∞ or NaN one) gives NaN, which fails the
  // checks.
  //
  // Exactness: every nonzero factor and every nonzero normalised message
  // entry is kept ≥ kMinFactor (else `tiny` is set and the sentence goes to
  // log space), so no product of up to three of them underflows: each
  // message entry is a sum of nonnegative terms computed to relative
  // rounding, and its zeros are exact (forbidden labelings). Underflow can
  // then only touch the output marginals themselves, below ~1e-300.
  scaled_ = ScaledPass();
  scaled_.inv_mu = 1 / mu;
  if (!ScaledForward(scores)) return false;
  *value =
      scaled_.shift + mu * (std::log(scaled_.scale_mantissa) +
                            static_cast<double>(scaled_.scale_exponent) * kLn2);
  if (marginals == nullptr) return true;
  if (!ScaledBackward(scores) || scaled_.tiny) return false;
  return ScaledMarginals(scores, marginals);
}

// Forward: alpha[t] ∝ Σ over prefixes ending in each label of their factors,
// normalised to sum 1 (the sum, scale[t], is kept in alpha_shift_).
bool ForwardBackward::ScaledForward(const ChainScores& scores) {
  const int T = scores.length;
  const size_t cells = static_cast<size_t>(T) * scores.num_labels;
  alpha_.resize(cells);
  exp_unary_.resize(cells);
  alpha_shift_.resize(T);
  terms_.resize(scores.num_labels);
  emission_.resize(scores.num_labels);
  listed_ = ReadsLists(scores);
  if (!ScaledForwardFirst(scores)) return false;
  if (T > 1) ExpTransitionFactors(scores);
  for (int t = 1; t < T; ++t) {
    if (!ScaledForwardStep(scores, t)) return false;
  }
  return ScaledForwardEnd(scores);
}

bool ForwardBackward::ScaledForwardFirst(const ChainScores& scores) {
  const int L = scores.num_labels;
  double* terms = terms_.data();
  double* u = exp_unary_.data();
  double* alpha = alpha_.data();
  for (int y = 0; y < L; ++y) terms[y] = scores.start[y] + scores.unary[y];
  const double top = MaxOf(terms, L);
  scaled_.shift += top;
  double sum = 0;
  for (int y = 0; y < L; ++y) {
    u[y] = std::exp((terms[y] - top) * scaled_.inv_mu);
    scaled_.CheckFactor(u[y], terms[y]);
    sum += u[y];
  }
  if (!scaled_.AcceptScale(sum)) return false;
  alpha_shift_[0] = sum;
  for (int y = 0; y < L; ++y) {
    alpha[y] = u[y] / sum;
    scaled_.CheckMessage(alpha[y]);
  }
  return true;
}

// One table of T − 1 uses: its shift counts T − 1 times. With pair scores,
// one table per position t ≥ 1 (row t of T, row 0 unused), each shifted by
// its own max.
void ForwardBackward::ExpTransitionFactors(const ChainScores& scores) {
  const size_t LL = static_cast<size_t>(scores.num_labels) * scores.num_labels;
  if (scores.pair != nullptr) {
    cached_.valid = false;  // exp_transition_ now holds per-position tables
    exp_transition_.resize(scores.length * LL);
    for (int t = 1; t < scores.length; ++t) {
      double* factors = exp_transition_.data() + t * LL;
      const double* sum = TransitionsInto(scores, t, factors);
      const double top = MaxOf(sum, LL);
      scaled_.shift += top;
      for (size_t i = 0; i < LL; ++i) {
        const double score = factors[i];
        factors[i] = std::exp((score - top) * scaled_.inv_mu);
        scaled_.CheckFactor(factors[i], score);
      }
    }
    exp_transition_transposed_.resize(scores.length * LL);
    for (int t = 1; t < scores.length; ++t) {
      Transpose(scores.num_labels, exp_transition_.data() + t * LL,
                exp_transition_transposed_.data() + t * LL);
    }
    return;
  }
  if (listed_) {
    ListedTransitionFactors(scores);
    return;
  }
  // A solver's pass calls Compute for every sentence with the same
  // transitions: their factors are kept, and their L² exps skipped while the
  // scores and μ stay the same.
  const bool same =
      cached_.valid && cached_.inv_mu == scaled_.inv_mu &&
      std::equal(scores.transition, scores.transition + LL,
                 cached_.transition.begin(), cached_.transition.end());
  if (!same) {
    exp_transition_.resize(LL);
    cached_.transition.assign(scores.transition, scores.transition + LL);
    cached_.inv_mu = scaled_.inv_mu;
    cached_.top = MaxOf(scores.transition, LL);
    ScaledPass check;
    for (size_t i = 0; i < LL; ++i) {
      exp_transition_[i] =
          std::exp((scores.transition[i] - cached_.top) * scaled_.inv_mu);
      check.CheckFactor(exp_transition_[i], scores.transition[i]);
    }
    exp_transition_transposed_.resize(LL);
    Transpose(scores.num_labels, exp_transition_.data(),
              exp_transition_transposed_.data());
    cached_.tiny = check.tiny;
    cached_.valid = true;
  }
  scaled_.shift += (scores.length - 1) * cached_.top;
  scaled_.tiny |= cached_.tiny;
}

// The full table's factors at the allowed pairs, in list order, from the
// allowed transitions alone: the same maximum (the others are −∞ in the
// full table) and the same exps, so the same bits; kept while the lists,
// their transitions and μ stay the same (S + L comparisons, not L²).
void ForwardBackward::ListedTransitionFactors(const ChainScores& scores) {
  const TransitionLists& lists = *scores.lists;
  const int L = scores.num_labels;
  const size_t S = lists.next.size();
  ListedCache& cache = listed_cache_;
  if (!cache.valid || cache.next_begin != lists.next_begin ||
      cache.next != lists.next) {
    cache.valid = false;
    cache.next_begin = lists.next_begin;
    cache.next = lists.next;
    // Where the pair k of the previous-label lists is in the next-label
    // lists: both list the pairs, by successor and by predecessor.
    cache.into_from.resize(S);
    std::vector<int32_t> taken(L, 0);
    for (int a = 0; a < L; ++a) {
      for (int32_t k = lists.next_begin[a]; k < lists.next_begin[a + 1]; ++k) {
        const int b = lists.next[k];
        cache.into_from[lists.previous_begin[b] + taken[b]++] = k;
      }
    }
    cache.transition.assign(S, 0.0);
  }
  bool same = cache.valid && cache.inv_mu == scaled_.inv_mu;
  for (int a = 0; same && a < L; ++a) {
    const double* row = scores.transition + static_cast<size_t>(a) * L;
    for (int32_t k = lists.next_begin[a]; k < lists.next_begin[a + 1]; ++k) {
      if (!(row[lists.next[k]] == cache.transition[k])) {
        same = false;
        break;
      }
    }
  }
  if (!same) {
    for (int a = 0; a < L; ++a) {
      const double* row = scores.transition + static_cast<size_t>(a) * L;
      for (int32_t k = lists.next_begin[a]; k < lists.next_begin[a + 1]; ++k) {
        cache.transition[k] = row[lists.next[k]];
      }
    }
    cache.inv_mu = scaled_.inv_mu;
    cache.top = MaxOf(cache.transition.data(), S);
    ScaledPass check;
    listed_from_.resize(S);
    for (size_t k = 0; k < S; ++k) {
      listed_from_[k] =
          std::exp((cache.transition[k] - cache.top) * scaled_.inv_mu);
      check.CheckFactor(listed_from_[k], cache.transition[k]);
    }
    listed_into_.resize(S);
    for (size_t k = 0; k < S; ++k) {
      listed_into_[k] = listed_from_[cache.into_from[k]];
    }
    cache.tiny = check.tiny;
    cache.valid = true;
  }
  scaled_.shift += (scores.length - 1) * cache.top;
  scaled_.tiny |= cache.tiny;
}

bool ForwardBackward::ScaledForwardStep(const ChainScores& scores, int t) {
  const int L = scores.num_labels;
  const double* transition = TransitionFactorsInto(scores, t);
  const double* previous = alpha_.data() + static_cast<size_t>(t - 1) * L;
  double* current = alpha_.data() + static_cast<size_t>(t) * L;
  const double* unary = scores.unary + static_cast<size_t>(t) * L;
  double* u_t = exp_unary_.data() + static_cast<size_t>(t) * L;
  const double top = MaxOf(unary, L);
  scaled_.shift += top;
  for (int b = 0; b < L; ++b) {
    u_t[b] = std::exp((unary[b] - top) * scaled_.inv_mu);
    scaled_.CheckFactor(u_t[b], unary[b]);
  }
  if (listed_) {
    const TransitionLists& lists = *scores.lists;
    ListedRowSum(L, lists.previous_begin.data(), lists.previous.data(),
                 listed_into_.data(), previous, current);
  } else {
    WeightedRowSum(L, previous, transition, current);
  }
  double sum = 0;
  for (int b = 0; b < L; ++b) {
    current[b] *= u_t[b];
    sum += current[b];
  }
  if (!scaled_.AcceptScale(sum)) return false;
  alpha_shift_[t] = sum;
  const double inverse = 1 / sum;
  for (int b = 0; b < L; ++b) {
    current[b] *= inverse;
    scaled_.CheckMessage(current[b]);
  }
  return true;
}

// The end factors close the product; they stay in terms_ for the backward
// pass.
bool ForwardBackward::ScaledForwardEnd(const ChainScores& scores) {
  const int L = scores.num_labels;
  double* terms = terms_.data();
  const double top = MaxOf(scores.end, L);
  scaled_.shift += top;
  const double* last =
      alpha_.data() + static_cast<size_t>(scores.length - 1) * L;
  double closing = 0;
  for (int y = 0; y < L; ++y) {
    terms[y] = std::exp((scores.end[y] - top) * scaled_.inv_mu);
    scaled_.CheckFactor(terms[y], scores.end[y]);
    scaled_.end_sum += terms[y];
    closing += last[y] * terms[y];
  }
  return scaled_.AcceptScale(closing);
}

// Backward: beta[t] ∝ Σ over suffixes after each label of their factors,
// normalised to sum 1.
bool ForwardBackward::ScaledBackward(const ChainScores& scores) {
  const int T = scores.length;
  const int L = scores.num_labels;
  beta_.resize(static_cast<size_t>(T) * L);
  double* beta = beta_.data();
  const double* terms = terms_.data();
  const double* u = exp_unary_.data();
  double* emission = emission_.data();
  double* beta_last = beta + static_cast<size_t>(T - 1) * L;
  for (int y = 0; y < L; ++y) {
    beta_last[y] = terms[y] / scaled_.end_sum;
    scaled_.CheckMessage(beta_last[y]);
  }
  for (int t = T - 2; t >= 0; --t) {
    const double* next = beta + static_cast<size_t>(t + 1) * L;
    double* current = beta + static_cast<size_t>(t) * L;
    const double* u_next = u + static_cast<size_t>(t + 1) * L;
    const double* transposed = TransposedFactorsInto(scores, t + 1);
    // u·beta is not a message entry: the product of up to three factors
    // bound by kMinFactor is the whole term E·u·beta.
    for (int b = 0; b < L; ++b) emission[b] = u_next[b] * next[b];
    // current[a] = Σ_b E[a][b]·emission[b], summed in order of b.
    if (listed_) {
      const TransitionLists& lists = *scores.lists;
      ListedRowSum(L, lists.next_begin.data(), lists.next.data(),
                   listed_from_.data(), emission, current);
    } else {
      WeightedRowSum(L, emission, transposed, current);
    }
    double sum = 0;
    for (int a = 0; a < L; ++a) sum += current[a];
    if (!(sum >= kMinScale)) return false;
    const double inverse = 1 / sum;
    for (int a = 0; a < L; ++a) {
      current[a] *= inverse;
      scaled_.CheckMessage(current[a]);
    }
  }
  return true;
}

// With n_t = Σ_y alpha[t][y]·beta[t][y]:
//   P(y_t = y) = alpha[t][y]·beta[t][y] / n_t,
//   P(y_{t−1} = a, y_t = b) = alpha[t−1][a]·E[a][b]·u[t][b]·beta[t][b]
//                             / (scale[t]·n_t),
// E the transition factors. The pairwise block accumulates
// Σ_t alpha[t−1][a]·(u[t][b]·beta[t][b] / (scale[t]·n_t)) and is
// multiplied by E[a][b] at the end.
bool ForwardBackward::ScaledMarginals(const ChainScores& scores,
                                      double* marginals) {
  const int T = scores.length;
  const int L = scores.num_labels;
  const size_t LL = static_cast<size_t>(L) * L;
  const size_t cells = static_cast<size_t>(T) * L;
  const double* alpha = alpha_.data();
  const double* beta = beta_.data();
  const double* u = exp_unary_.data();
  const double* scale = alpha_shift_.data();
  double* emission = emission_.data();
  double* node = marginals;
  // With pair scores: the per-position pair marginals, then their sum.
  const bool per_position = scores.pair != nullptr;
  double* position_pair = per_position ? marginals + cells : nullptr;
  double* pair = marginals + cells + (per_position ? T * LL : 0);
  // Listed: the allowed pairs' sums in list order (the others stay 0, as
  // their factor makes them in the full table), written in that order for
  // ComputeListed, else into the L×L table.
  const TransitionLists* lists = listed_ ? scores.lists : nullptr;
  const size_t pairs = listed_output_ ? static_cast<size_t>(lists->size()) : LL;
  if (!listed_output_) std::fill(pair, pair + LL, 0.0);
  if (per_position) std::fill(position_pair, position_pair + LL, 0.0);
  if (lists != nullptr) listed_pair_.assign(lists->next.size(), 0.0);
  for (int t = 0; t < T; ++t) {
    const double* a_row = alpha + static_cast<size_t>(t) * L;
    const double* b_row = beta + static_cast<size_t>(t) * L;
    double* out = node + static_cast<size_t>(t) * L;
    double normaliser = 0;
    for (int y = 0; y < L; ++y) {
      out[y] = a_row[y] * b_row[y];
      normaliser += out[y];
    }
    // 1/(scale·n_t) must not overflow.
    if (!(scale[t] * normaliser >= kMinScale)) return false;
    const double inverse = 1 / normaliser;
    for (int y = 0; y < L; ++y) out[y] *= inverse;
    if (t == 0) continue;
    const double pair_inverse = 1 / (scale[t] * normaliser);
    const double* u_t = u + static_cast<size_t>(t) * L;
    for (int b = 0; b < L; ++b) {
      emission[b] = u_t[b] * b_row[b] * pair_inverse;
    }
    const double* previous = alpha + static_cast<size_t>(t - 1) * L;
    if (per_position) {
      const double* factors = TransitionFactorsInto(scores, t);
      double* here = position_pair + t * LL;
      for (int a = 0; a < L; ++a) {
        const double p = previous[a];
        const double* from_a = factors + static_cast<size_t>(a) * L;
        double* here_a = here + static_cast<size_t>(a) * L;
        double* pair_a = pair + static_cast<size_t>(a) * L;
        for (int b = 0; b < L; ++b) {
          here_a[b] = p * from_a[b] * emission[b];
          pair_a[b] += here_a[b];
        }
      }
      continue;
    }
    if (lists != nullptr) {
      for (int a = 0; a < L; ++a) {
        const double p = previous[a];
        for (int32_t k = lists->next_begin[a]; k < lists->next_begin[a + 1];
             ++k) {
          listed_pair_[k] += p * emission[lists->next[k]];
        }
      }
      continue;
    }
    AddOuterProduct(L, previous, emission, pair);
  }
  if (listed_output_) {
    for (size_t k = 0; k < pairs; ++k) {
      pair[k] = T > 1 ? listed_pair_[k] * listed_from_[k] : 0.0;
    }
  } else if (lists != nullptr && T > 1) {
    for (int a = 0; a < L; ++a) {
      for (int32_t k = lists->next_begin[a]; k < lists->next_begin[a + 1];
           ++k) {
        pair[static_cast<size_t>(a) * L + lists->next[k]] =
            listed_pair_[k] * listed_from_[k];
      }
    }
  }
  for (size_t i = 0; lists == nullptr && !per_position && T > 1 && i < LL;
       ++i) {
    pair[i] *= exp_transition_[i];
  }
  double* start = pair + pairs;
  double* end = start + L;
  std::copy(node, node + L, start);
  std::copy(node + cells - L, node + cells, end);
  return true;
}

double ForwardBackward::ComputeInLogSpace(const ChainScores& scores, double mu,
                                          double* marginals) {
  assert(mu > 0);
  const int T = scores.length;
  const int L = scores.num_labels;
  const size_t LL = static_cast<size_t>(L) * L;
  if (T == 0) {
    if (marginals != nullptr) std::fill(marginals, marginals + LL + 2 * L, 0.0);
    return 0;
  }
  const double inv_mu = 1 / mu;
  const size_t cells = static_cast<size_t>(T) * L;
  alpha_.resize(cells);
  beta_.resize(cells);
  alpha_shift_.resize(T);
  terms_.resize(L);
  emission_.resize(L);
  // One scaled L×L table, or with pair scores one per position (row t the
  // transitions into t; row 0 unused).
  const bool per_position = scores.pair != nullptr;
  scaled_transition_.resize(per_position ? T * LL : LL);
  if (per_position) {
    for (int t = 1; t < T; ++t) {
      double* row = scaled_transition_.data() + t * LL;
      const double* sum = TransitionsInto(scores, t, row);
      for (size_t i = 0; i < LL; ++i) row[i] = sum[i] * inv_mu;
    }
  } else {
    for (size_t i = 0; i < LL; ++i) {
      scaled_transition_[i] = scores.transition[i] * inv_mu;
    }
  }
  auto transition_into = [&](int t) {
    return scaled_transition_.data() + (per_position ? t * LL : 0);
  };
  double* terms = terms_.data();
  double* emission = emission_.data();

  // Forward: alpha[t][b] = log Σ over prefixes ending in b of
  // exp(partial score / μ), less the cumulative row shifts.
  double* alpha = alpha_.data();
  for (int y = 0; y < L; ++y) {
    alpha[y] = (scores.start[y] + scores.unary[y]) * inv_mu;
  }
  alpha_shift_[0] = ShiftToLogSumZero(alpha, L);
  for (int t = 1; t < T; ++t) {
    const double* previous = alpha + static_cast<size_t>(t - 1) * L;
    double* current = alpha + static_cast<size_t>(t) * L;
    const double* unary = scores.unary + static_cast<size_t>(t) * L;
    const double* transition = transition_into(t);
    for (int b = 0; b < L; ++b) {
      for (int a = 0; a < L; ++a) {
        terms[a] = previous[a] + transition[static_cast<size_t>(a) * L + b];
      }
      current[b] = unary[b] * inv_mu + LogSumExp(terms, L);
    }
    alpha_shift_[t] = ShiftToLogSumZero(current, L);
  }
  const double* last = alpha + static_cast<size_t>(T - 1) * L;
  for (int y = 0; y < L; ++y) terms[y] = last[y] + scores.end[y] * inv_mu;
  double log_z = LogSumExp(terms, L);
  for (int t = 0; t < T; ++t) log_z += alpha_shift_[t];
  if (marginals == nullptr) return mu * log_z;

  // Backward: beta[t][a] = log Σ over suffixes after y_t = a, shifted per row
  // like alpha (only the forward shifts are needed again).
  double* beta = beta_.data();
  double* beta_last = beta + static_cast<size_t>(T - 1) * L;
  for (int y = 0; y < L; ++y) beta_last[y] = scores.end[y] * inv_mu;
  ShiftToLogSumZero(beta_last, L);
  for (int t = T - 2; t >= 0; --t) {
    const double* next = beta + static_cast<size_t>(t + 1) * L;
    double* current = beta + static_cast<size_t>(t) * L;
    const double* unary = scores.unary + static_cast<size_t>(t + 1) * L;
    const double* transition = transition_into(t + 1);
    for (int b = 0; b < L; ++b) emission[b] = unary[b] * inv_mu + next[b];
    for (int a = 0; a < L; ++a) {
      const double* from_a = transition + static_cast<size_t>(a) * L;
      for (int b = 0; b < L; ++b) terms[b] = from_a[b] + emission[b];
      current[a] = LogSumExp(terms, L);
    }
    ShiftToLogSumZero(current, L);
  }

  // Node marginals are normalised per position by their own log-sum-exp
  // rather than by log Z: the same value in exact arithmetic, but it needs
  // no cancellation between large numbers, so each row sums to 1 to a few
  // ulps. The pairwise term at t reuses that normaliser: with shifted
  // messages, log P(y_{t−1} = a, y_t = b) = alpha[t−1][a] + transition[a][b]
  // + unary[t][b]/μ + beta[t][b] − alpha_shift[t] − node_normaliser[t].
  double* node = marginals;
  // With pair scores the per-position pair marginals come first (row 0
  // zero), then their sum.
  double* position_pair = per_position ? marginals + cells : nullptr;
  double* pair = marginals + cells + (per_position ? T * LL : 0);
  double* start = pair + LL;
  double* end = start + L;
  std::fill(pair, pair + LL, 0.0);
  if (per_position) std::fill(position_pair, position_pair + LL, 0.0);
  for (int t = 0; t < T; ++t) {
    const double* a_row = alpha + static_cast<size_t>(t) * L;
    const double* b_row = beta + static_cast<size_t>(t) * L;
    double* out = node + static_cast<size_t>(t) * L;
    for (int y = 0; y < L; ++y) terms[y] = a_row[y] + b_row[y];
    const double normaliser = LogSumExp(terms, L);
    for (int y = 0; y < L; ++y) out[y] = std::exp(terms[y] - normaliser);
    if (t == 0) continue;
    const double* previous = alpha + static_cast<size_t>(t - 1) * L;
    const double* unary = scores.unary + static_cast<size_t>(t) * L;
    const double* transition = transition_into(t);
    for (int b = 0; b < L; ++b) {
      emission[b] = unary[b] * inv_mu + b_row[b] - alpha_shift_[t] - normaliser;
    }
    for (int a = 0; a < L; ++a) {
      const double* from_a = transition + static_cast<size_t>(a) * L;
      double* pair_a = pair + static_cast<size_t>(a) * L;
      if (per_position) {
        double* here = position_pair + t * LL + static_cast<size_t>(a) * L;
        for (int b = 0; b < L; ++b) {
          here[b] = std::exp(previous[a] + from_a[b] + emission[b]);
          pair_a[b] += here[b];
        }
        continue;
      }
      for (int b = 0; b < L; ++b) {
        pair_a[b] += std::exp(previous[a] + from_a[b] + emission[b]);
      }
    }
  }
  std::copy(node, node + L, start);
  std::copy(node + cells - L, node + cells, end);
  return mu * log_z;
}

}  // namespace chaintag
