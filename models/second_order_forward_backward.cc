#include "models/second_order_forward_backward.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>

#include "base/cpu_dispatch.h"
#include "models/log_sum_exp.h"

namespace chaintag {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// The forward–backward sums a block's products of factors in [0, 1] and
// takes their log; below kMinSum it redoes that one sum as a log-sum-exp.
// Above it, the largest product is at least kMinSum / L, so products that
// underflowed (< 1e-308) change the sum by less than 1e-100 of itself.
constexpr double kMinSum = 1e-200;
// Below this, a product of factors may have lost digits to underflow.
constexpr double kMinProduct = 1e-290;

// Subtracts the row's max from it (unless it is −∞: nothing is allowed) and
// returns it: the messages stay the size of one position's scores, at no
// exp.
double ShiftToMaxZero(double* x, int n) {
  double top = kMinusInfinity;
  for (int i = 0; i < n; ++i) top = std::max(top, x[i]);
  if (top == kMinusInfinity) return top;
  for (int i = 0; i < n; ++i) x[i] -= top;
  return top;
}

// Writes exp(x[i] − max) / Σ_i exp(x[i] − max) over x and returns the
// log-sum-exp of x: one exp per entry. x must have a finite entry.
double NormalisedExp(double* x, int n) {
  double top = kMinusInfinity;
  for (int i = 0; i < n; ++i) top = std::max(top, x[i]);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - top);
    sum += x[i];
  }
  const double inverse = 1 / sum;
  for (int i = 0; i < n; ++i) x[i] *= inverse;
  return top + std::log(sum);
}

}  // namespace

int64_t SecondOrderForwardBackward::MarginalsSize(
    const SecondOrderStructure& structure, int length) {
  const int64_t L = structure.num_labels();
  return length * (L + structure.num_pairs()) + L * L + 2 * L +
         structure.num_trigrams();
}

double SecondOrderForwardBackward::Compute(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    double mu, double* marginals) {
  assert(mu > 0);
  if (marginals != nullptr) {
    std::fill(marginals, marginals + MarginalsSize(structure, scores.length),
              0.0);
  }
  if (scores.length == 0) return 0;
  const double inv_mu = 1 / mu;
  Prepare(structure, scores, inv_mu);
  const double log_z = Forward(structure, scores, inv_mu);
  if (marginals != nullptr && log_z != kMinusInfinity) {
    Backward(structure, scores, inv_mu);
    WriteMarginals(structure, scores, inv_mu, marginals);
  }
  return mu * log_z;
}

void SecondOrderForwardBackward::Prepare(const SecondOrderStructure& structure,
                                         const SecondOrderScores& scores,
                                         double inv_mu) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const size_t S = structure.num_states();
  state_score_.resize(T * S);
  for (int t = 1; t < T; ++t) {
    double* row = state_score_.data() + t * S;
    structure.StateScores(scores, t, row);
    for (size_t s = 0; s < S; ++s) row[s] *= inv_mu;
  }
  terms_.resize(std::max<size_t>(L, S));
  factor_.resize(L);
  sum_.resize((L + 3) / 4 * 4);  // a block's padded row
  if (T < 3) return;
  const size_t slots = structure.num_edge_slots();
  edge_score_.resize(slots);
  edge_factor_.resize(slots);
  column_max_.resize(S);
  structure.EdgeScores(scores.trigram, edge_score_.data());
  for (size_t e = 0; e < slots; ++e) edge_score_[e] *= inv_mu;
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int n = block.num_targets;
    double* top = column_max_.data() + block.first_target;
    std::fill(top, top + n, kMinusInfinity);
    for (int i = 0; i < block.num_sources; ++i) {
      const double* row =
          edge_score_.data() + block.first_edge + i * block.row_stride;
      for (int j = 0; j < n; ++j) top[j] = std::max(top[j], row[j]);
    }
    // Edges without a weight (most of them) share their column's factor.
    for (int j = 0; j < n; ++j) {
      factor_[j] = top[j] == kMinusInfinity ? 0 : std::exp(-top[j]);
    }
    for (int i = 0; i < block.num_sources; ++i) {
      const size_t row = block.first_edge + i * block.row_stride;
      for (int j = 0; j < block.row_stride; ++j) {
        edge_factor_[row + j] = j < n ? factor_[j] : 0.0;
      }
    }
  }
  for (const SecondOrderStructure::WeightedEdge& edge :
       structure.weighted_edges_) {
    const double top = column_max_[edge.target];
    if (top != kMinusInfinity) {
      edge_factor_[edge.edge] = std::exp(edge_score_[edge.edge] - top);
    }
  }
}

double SecondOrderForwardBackward::Forward(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    double inv_mu) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const int S = structure.num_states();
  alpha_.resize(structure.RowOffset(T));
  alpha_shift_.resize(T);
  source_factor_.resize(static_cast<size_t>(T) * S);
  column_sum_.resize(static_cast<size_t>(T) * S);
  double* first = alpha_.data();
  for (int y = 0; y < L; ++y) {
    first[y] = structure.start_allowed_[y]
                   ? (scores.start[y] + scores.unary[y]) * inv_mu
                   : kMinusInfinity;
  }
  double log_z = alpha_shift_[0] = ShiftToMaxZero(first, L);
  double* terms = terms_.data();
  if (T == 1) {
    for (int y = 0; y < L; ++y) {
      terms[y] = structure.end_allowed_[y] ? first[y] + scores.end[y] * inv_mu
                                           : kMinusInfinity;
    }
    return log_z + LogSumExp(terms, L);
  }
  for (int t = 1; t < T && log_z != kMinusInfinity; ++t) {
    double* row = alpha_.data() + structure.RowOffset(t);
    if (t == 1) {
      const double* state_score = state_score_.data() + S;
      for (int s = 0; s < S; ++s) {
        row[s] = first[structure.state_labels_[s][0]] + state_score[s];
      }
    } else {
      ForwardStep(structure, t);
    }
    alpha_shift_[t] = ShiftToMaxZero(row, S);
    log_z += alpha_shift_[t];
  }
  if (log_z == kMinusInfinity) return log_z;
  const double* last = alpha_.data() + structure.RowOffset(T - 1);
  for (int s = 0; s < S; ++s) {
    const int32_t y = structure.state_labels_[s][1];
    terms[s] = structure.end_allowed_[y] ? last[s] + scores.end[y] * inv_mu
                                         : kMinusInfinity;
  }
  return log_z + LogSumExp(terms, S);
}

// alpha_t(b, c) = state score + log Σ_a exp(alpha_{t−1}(a, b) + edge score),
// computed per block as log S_c + shifts, S_c = Σ_a P_a·F_ac, where P_a =
// exp(alpha − its max over the sources) and F the edge factors: one exp per
// source and a multiply-add per edge instead of an exp per edge. P and S
// are kept for the trigram marginals.
void SecondOrderForwardBackward::ForwardStep(
    const SecondOrderStructure& structure, int t) {
  const double* previous = alpha_.data() + structure.RowOffset(t - 1);
  double* current = alpha_.data() + structure.RowOffset(t);
  const size_t row = static_cast<size_t>(t) * structure.num_states();
  const double* state_score = state_score_.data() + row;
  double* source_factor = source_factor_.data() + row;
  double* column_sum = column_sum_.data() + row;
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const int m = block.num_sources;
    double* out = current + block.first_target;
    double top = kMinusInfinity;
    for (int i = 0; i < m; ++i) top = std::max(top, previous[sources[i]]);
    if (top == kMinusInfinity) {  // also when b has no source
      std::fill(out, out + block.num_targets, kMinusInfinity);
      std::fill(column_sum + block.first_target,
                column_sum + block.first_target + block.num_targets, 0.0);
      continue;
    }
    for (int i = 0; i < m; ++i) {
      factor_[i] = source_factor[sources[i]] =
          std::exp(previous[sources[i]] - top);
    }
    SumBlockColumns(block);
    const double* edge_score = edge_score_.data() + block.first_edge;
    const double* top_edge = column_max_.data() + block.first_target;
    for (int j = 0; j < block.num_targets; ++j) {
      double log_sum;
      column_sum[block.first_target + j] = sum_[j] >= kMinSum ? sum_[j] : 0;
      if (sum_[j] >= kMinSum) {
        log_sum = top + top_edge[j] + std::log(sum_[j]);
      } else {
        for (int i = 0; i < m; ++i) {
          terms_[i] =
              previous[sources[i]] + edge_score[i * block.row_stride + j];
        }
        log_sum = LogSumExp(terms_.data(), m);
      }
      out[j] = log_sum + state_score[block.first_target + j];
    }
  }
}

// Rows of whole vectors, as SecondOrderViterbi's kernels: the padding
// columns of sum_ are computed and ignored.
CHAINTAG_AVX2_CLONES void SecondOrderForwardBackward::SumBlockColumns(
    const SecondOrderStructure::Block& block) {
  double* __restrict sum = sum_.data();
  const double* factor = factor_.data();
  const int width = block.row_stride;
  std::fill(sum, sum + width, 0.0);
  const double* edge_factor = edge_factor_.data() + block.first_edge;
  for (int i = 0; i < block.num_sources; ++i) {
    const double p = factor[i];
    const double* row = edge_factor + static_cast<size_t>(i) * width;
    for (int j = 0; j < width; ++j) sum[j] += p * row[j];
  }
}

void SecondOrderForwardBackward::Backward(const SecondOrderStructure& structure,
                                          const SecondOrderScores& scores,
                                          double inv_mu) {
  const int T = scores.length;
  const int S = structure.num_states();
  beta_.resize(structure.RowOffset(T));
  if (T == 1) return;  // the marginals need no backward message
  double* last = beta_.data() + structure.RowOffset(T - 1);
  for (int s = 0; s < S; ++s) {
    const int32_t y = structure.state_labels_[s][1];
    last[s] =
        structure.end_allowed_[y] ? scores.end[y] * inv_mu : kMinusInfinity;
  }
  ShiftToMaxZero(last, S);
  for (int t = T - 2; t >= 1; --t) {
    BackwardStep(structure, t);
    ShiftToMaxZero(beta_.data() + structure.RowOffset(t), S);
  }
}

// beta_t(a, b) = log Σ_c exp(edge score + state score + beta_{t+1}(b, c)),
// per block as log Σ_c F_ac·R_c + shifts, with R_c = exp(column max + state
// score + beta − their max): the edge factors of the forward pass serve.
void SecondOrderForwardBackward::BackwardStep(
    const SecondOrderStructure& structure, int t) {
  const double* next = beta_.data() + structure.RowOffset(t + 1);
  double* current = beta_.data() + structure.RowOffset(t);
  const double* state_score =
      state_score_.data() + static_cast<size_t>(t + 1) * structure.num_states();
  for (const SecondOrderStructure::Block& block : structure.blocks_) {
    const int32_t* sources =
        structure.source_state_.data() + block.first_source;
    const int32_t first = block.first_target;
    const int n = block.num_targets;
    double top = kMinusInfinity;
    for (int j = 0; j < n; ++j) {
      factor_[j] =
          column_max_[first + j] + state_score[first + j] + next[first + j];
      top = std::max(top, factor_[j]);
    }
    if (top == kMinusInfinity) {  // also when b has no target
      for (int i = 0; i < block.num_sources; ++i) {
        current[sources[i]] = kMinusInfinity;
      }
      continue;
    }
    for (int j = 0; j < n; ++j) factor_[j] = std::exp(factor_[j] - top);
    for (int i = 0; i < block.num_sources; ++i) {
      const size_t row = block.first_edge + i * block.row_stride;
      double dot = 0;
      for (int j = 0; j < n; ++j) dot += edge_factor_[row + j] * factor_[j];
      if (dot >= kMinSum) {
        current[sources[i]] = top + std::log(dot);
        continue;
      }
      for (int j = 0; j < n; ++j) {
        terms_[j] =
            edge_score_[row + j] + state_score[first + j] + next[first + j];
      }
      current[sources[i]] = LogSumExp(terms_.data(), n);
    }
  }
}

// Each position's state marginals are normalised by their own log-sum-exp
// rather than by log Z, as ForwardBackward::ComputeInLogSpace does: the
// same value, with no cancellation between large numbers.
void SecondOrderForwardBackward::WriteMarginals(
    const SecondOrderStructure& structure, const SecondOrderScores& scores,
    double inv_mu, double* marginals) {
  const int T = scores.length;
  const int L = structure.num_labels_;
  const int P = structure.num_pairs();
  const int S = structure.num_states();
  double* unary = marginals;
  double* pair = unary + static_cast<size_t>(T) * L;
  double* bigram = pair + static_cast<size_t>(T) * P;
  double* start = bigram + static_cast<size_t>(L) * L;
  double* end = start + L;
  double* q = terms_.data();
  if (T == 1) {
    for (int y = 0; y < L; ++y) {
      q[y] = structure.end_allowed_[y] ? alpha_[y] + scores.end[y] * inv_mu
                                       : kMinusInfinity;
    }
    NormalisedExp(q, L);
    std::copy(q, q + L, unary);
  }
  for (int t = 1; t < T; ++t) {
    const double* alpha = alpha_.data() + structure.RowOffset(t);
    const double* beta = beta_.data() + structure.RowOffset(t);
    for (int s = 0; s < S; ++s) q[s] = alpha[s] + beta[s];
    const double normaliser = NormalisedExp(q, S);
    double* unary_row = unary + static_cast<size_t>(t) * L;
    for (int s = 0; s < S; ++s) {
      const auto [a, b] = structure.state_labels_[s];
      unary_row[b] += q[s];
      if (t == 1) unary[a] += q[s];
      bigram[static_cast<size_t>(a) * L + b] += q[s];
    }
    double* pair_row = pair + static_cast<size_t>(t) * P;
    for (const SecondOrderStructure::WeightedState& weighted :
         structure.weighted_states_) {
      pair_row[weighted.column] = q[weighted.state];
    }
    if (t >= 2) AddTrigramMarginals(structure, t, normaliser, end + L);
  }
  std::copy(unary, unary + L, start);
  const double* last_row = unary + static_cast<size_t>(T - 1) * L;
  std::copy(last_row, last_row + L, end);
}

// With the forward pass's factors, P(edge a → c at t) = exp(alpha_{t−1}(a)
// + edge score + state score + beta_t(c) − shift_t − normaliser_t) =
// P_a·F_ac·q_c / S_c, q_c the state marginal (in terms_): no exp, unless
// the target's sum fell back to log space or P_a·F_ac is too small for the
// product to be exact.
void SecondOrderForwardBackward::AddTrigramMarginals(
    const SecondOrderStructure& structure, int t, double normaliser,
    double* trigram) {
  const size_t S = structure.num_states();
  const double* q = terms_.data();
  const double* source_factor = source_factor_.data() + t * S;
  const double* column_sum = column_sum_.data() + t * S;
  const double* previous = alpha_.data() + structure.RowOffset(t - 1);
  const double* beta = beta_.data() + structure.RowOffset(t);
  const double* state_score = state_score_.data() + t * S;
  const double shift = alpha_shift_[t] + normaliser;
  for (const SecondOrderStructure::WeightedEdge& edge :
       structure.weighted_edges_) {
    const double factors = source_factor[edge.source] * edge_factor_[edge.edge];
    if (column_sum[edge.target] > 0 && factors >= kMinProduct) {
      trigram[edge.trigram] +=
          factors * (q[edge.target] / column_sum[edge.target]);
    } else {
      trigram[edge.trigram] +=
          std::exp(previous[edge.source] + edge_score_[edge.edge] +
                   state_score[edge.target] + beta[edge.target] - shift);
    }
  }
}

}  // namespace chaintag
