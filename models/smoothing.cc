#include "models/smoothing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

double LogSumExp(const double* x, int n) {
  double top = x[0];
  for (int i = 1; i < n; ++i) top = std::max(top, x[i]);
  // All −∞ would give −∞ − (−∞) = NaN below.
  if (top == kMinusInfinity) return top;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(x[i] - top);
  return top + std::log(sum);
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

double ForwardBackward::Compute(const ChainScores& scores, double mu,
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
  scaled_transition_.resize(LL);
  terms_.resize(L);
  emission_.resize(L);
  const double* transition = scaled_transition_.data();
  for (size_t i = 0; i < LL; ++i) {
    scaled_transition_[i] = scores.transition[i] * inv_mu;
  }
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
  double* pair = marginals + cells;
  double* start = pair + LL;
  double* end = start + L;
  std::fill(pair, pair + LL, 0.0);
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
    for (int b = 0; b < L; ++b) {
      emission[b] = unary[b] * inv_mu + b_row[b] - alpha_shift_[t] - normaliser;
    }
    for (int a = 0; a < L; ++a) {
      const double* from_a = transition + static_cast<size_t>(a) * L;
      double* pair_a = pair + static_cast<size_t>(a) * L;
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
