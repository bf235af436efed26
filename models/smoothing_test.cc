#include "models/smoothing.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// --- ℓ2 smoothing ---------------------------------------------------------

// The classic projection onto the simplex (Held et al. 1974; Duchi et al.
// 2008), written independently of the reference's cumulative-sum rule:
// v = s/μ sorted descending, ρ = the largest j with v_j − (Σ_{i≤j} v_i − 1)/j
// > 0, θ = (Σ_{i≤ρ} v_i − 1)/ρ, u = max(v − θ, 0). Finite inputs only.
std::vector<double> ReferenceProjection(std::vector<double> scores, double mu) {
  std::vector<double> v(scores.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = scores[i] / mu;
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  double sum = 0, theta = 0;
  for (size_t j = 0; j < sorted.size(); ++j) {
    sum += sorted[j];
    const double candidate = (sum - 1) / (j + 1);
    if (sorted[j] - candidate > 0) theta = candidate;
  }
  std::vector<double> u(v.size());
  for (size_t i = 0; i < v.size(); ++i) u[i] = std::max(v[i] - theta, 0.0);
  return u;
}

double L2Value(const std::vector<double>& scores, double mu) {
  std::vector<double> weights(scores.size());
  return ProjectScoresOntoSimplex(scores.data(), scores.size(), mu,
                                  weights.data());
}

TEST(ProjectScoresOntoSimplexTest, MatchesSortBasedProjection) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> score(-3, 3);
  std::uniform_real_distribution<double> log_mu(-3, 2);
  for (int trial = 0; trial < 2000; ++trial) {
    const int k = 1 + trial % 9;
    const double mu = std::pow(10.0, log_mu(rng));
    std::vector<double> scores(k);
    for (double& s : scores) s = score(rng);
    if (trial % 5 == 0 && k > 2) scores[1] = scores[2];  // a tie inside
    std::sort(scores.begin(), scores.end(), std::greater<double>());
    std::vector<double> weights(k);
    const double value =
        ProjectScoresOntoSimplex(scores.data(), k, mu, weights.data());
    const std::vector<double> expected = ReferenceProjection(scores, mu);
    double sum = 0, inner = 0, norm = 0;
    for (int j = 0; j < k; ++j) {
      EXPECT_NEAR(weights[j], expected[j], 1e-9) << "trial " << trial;
      EXPECT_GE(weights[j], 0.0);
      sum += weights[j];
      inner += weights[j] * scores[j];
      norm += weights[j] * weights[j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "trial " << trial;
    EXPECT_NEAR(value, inner - 0.5 * mu * norm, 1e-12);
    // Sorted scores give sorted weights.
    EXPECT_TRUE(
        std::is_sorted(weights.begin(), weights.end(), std::greater<double>()));
  }
}

TEST(ProjectScoresOntoSimplexTest, ValueIsTheMaximumOverTheSimplex) {
  // No other point of the simplex does better than u (checked on random
  // points and on the vertices).
  std::mt19937 rng(22);
  std::uniform_real_distribution<double> score(-2, 2);
  std::exponential_distribution<double> mass(1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 2 + trial % 6;
    const double mu = 0.1 + trial % 7 * 0.5;
    std::vector<double> scores(k);
    for (double& s : scores) s = score(rng);
    std::sort(scores.begin(), scores.end(), std::greater<double>());
    const double value = L2Value(scores, mu);
    for (int probe = 0; probe < 50 + k; ++probe) {
      std::vector<double> u(k, 0.0);
      if (probe < k) {
        u[probe] = 1;
      } else {
        for (double& x : u) x = mass(rng);
        const double total = std::accumulate(u.begin(), u.end(), 0.0);
        for (double& x : u) x /= total;
      }
      double objective = 0;
      for (int j = 0; j < k; ++j) {
        objective += u[j] * scores[j] - 0.5 * mu * u[j] * u[j];
      }
      EXPECT_LE(objective, value + 1e-12);
    }
  }
}

TEST(ProjectScoresOntoSimplexTest, MinusInfinityGetsWeightZero) {
  const std::vector<double> scores = {2.0, 1.5, 1.4, -kInf, -kInf};
  for (double mu : {1e-3, 0.3, 1.0, 10.0, 1e6}) {
    std::vector<double> weights(5, -1.0);
    const double value =
        ProjectScoresOntoSimplex(scores.data(), 5, mu, weights.data());
    EXPECT_EQ(weights[3], 0.0);
    EXPECT_EQ(weights[4], 0.0);
    const std::vector<double> expected =
        ReferenceProjection({2.0, 1.5, 1.4}, mu);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(weights[j], expected[j], 1e-12);
    EXPECT_NEAR(weights[0] + weights[1] + weights[2], 1.0, 1e-12);
    EXPECT_TRUE(std::isfinite(value));
    EXPECT_NEAR(value, L2Value({2.0, 1.5, 1.4}, mu), 1e-12);
  }
  // Only one labeling exists: all its weight, its score minus μ/2.
  const std::vector<double> lonely = {0.7, -kInf, -kInf};
  std::vector<double> weights(3);
  EXPECT_DOUBLE_EQ(
      ProjectScoresOntoSimplex(lonely.data(), 3, 2.0, weights.data()),
      0.7 - 1.0);
  EXPECT_EQ(weights, (std::vector<double>{1.0, 0.0, 0.0}));
}

TEST(ProjectScoresOntoSimplexTest, GradientOfTheValueIsTheWeights) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> score(-2, 2);
  const double h = 1e-6;
  for (int trial = 0; trial < 300; ++trial) {
    const int k = 1 + trial % 7;
    const double mu = 0.05 + (trial % 10) * 0.4;
    std::vector<double> scores(k);
    for (double& s : scores) s = score(rng);
    std::sort(scores.begin(), scores.end(), std::greater<double>());
    // Keep neighbours apart so ±h keeps the order.
    bool separated = true;
    for (int j = 1; j < k; ++j) separated &= scores[j - 1] - scores[j] > 1e-3;
    if (!separated) continue;
    std::vector<double> weights(k);
    ProjectScoresOntoSimplex(scores.data(), k, mu, weights.data());
    for (int j = 0; j < k; ++j) {
      std::vector<double> plus = scores, minus = scores;
      plus[j] += h;
      minus[j] -= h;
      const double derivative =
          (L2Value(plus, mu) - L2Value(minus, mu)) / (2 * h);
      EXPECT_NEAR(derivative, weights[j], 1e-6) << "trial " << trial;
    }
  }
}

TEST(ProjectScoresOntoSimplexTest, SmallMuGivesTheMaxAndOneHotWeights) {
  const std::vector<double> scores = {1e3 + 0.25, 1e3, -5.0, -7.0};
  for (double mu : {1e-6, 1e-9, 1e-12}) {
    std::vector<double> weights(4);
    EXPECT_EQ(ProjectScoresOntoSimplex(scores.data(), 4, mu, weights.data()),
              scores[0] - 0.5 * mu);
    EXPECT_EQ(weights, (std::vector<double>{1.0, 0.0, 0.0, 0.0}));
  }
  // Large μ spreads the weight evenly (u → 1/K).
  std::vector<double> weights(4);
  ProjectScoresOntoSimplex(scores.data(), 4, 1e9, weights.data());
  for (double w : weights) EXPECT_NEAR(w, 0.25, 1e-5);
}

// --- entropy smoothing ----------------------------------------------------

RandomChain MakeChain(int T, int L, double scale, std::mt19937* rng) {
  std::uniform_real_distribution<double> real(-scale, scale);
  return MakeRandomChain(T, L, [&] { return real(*rng); });
}

size_t MarginalsSize(int T, int L) {
  return static_cast<size_t>(T) * L + L * L + 2 * L;
}

// μ·log Z and the expected features by enumerating all L^T labelings.
double BruteForce(const ChainScores& scores, double mu,
                  std::vector<double>* marginals) {
  const int T = scores.length, L = scores.num_labels;
  std::vector<std::vector<int32_t>> all;
  std::vector<double> log_weights;
  std::vector<int32_t> y(T, 0);
  while (true) {
    all.push_back(y);
    log_weights.push_back(ScoreLabeling(scores, y.data()) / mu);
    int t = T - 1;
    while (t >= 0 && y[t] == L - 1) y[t--] = 0;
    if (t < 0) break;
    ++y[t];
  }
  const double top = *std::max_element(log_weights.begin(), log_weights.end());
  double z = 0;
  for (double w : log_weights) z += std::exp(w - top);
  const double log_z = top + std::log(z);
  marginals->assign(MarginalsSize(T, L), 0.0);
  double* node = marginals->data();
  double* pair = node + T * L;
  double* start = pair + L * L;
  double* end = start + L;
  for (size_t i = 0; i < all.size(); ++i) {
    const double p = std::exp(log_weights[i] - log_z);
    const std::vector<int32_t>& labels = all[i];
    for (int t = 0; t < T; ++t) {
      node[t * L + labels[t]] += p;
      if (t > 0) pair[labels[t - 1] * L + labels[t]] += p;
    }
    start[labels[0]] += p;
    end[labels[T - 1]] += p;
  }
  return mu * log_z;
}

TEST(ForwardBackwardTest, MatchesBruteForceOnRandomTinyChains) {
  std::mt19937 rng(31);
  ForwardBackward fb;  // Reused across sizes on purpose.
  for (int trial = 0; trial < 300; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    const double mu = std::vector<double>{0.1, 0.5, 1.0, 3.0}[trial % 4];
    const RandomChain chain = MakeChain(T, L, 2.0, &rng);
    std::vector<double> expected;
    const double expected_value = BruteForce(chain.scores(), mu, &expected);
    std::vector<double> marginals(MarginalsSize(T, L), -7.0);
    EXPECT_NEAR(fb.Compute(chain.scores(), mu, marginals.data()),
                expected_value, 1e-10);
    EXPECT_NEAR(fb.Compute(chain.scores(), mu, nullptr), expected_value, 1e-10);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(marginals[i], expected[i], 1e-10)
          << "trial " << trial << " entry " << i;
    }
  }
}

// With pair scores: μ·log Z, the node, per-position pair, summed pair,
// start and end marginals against all labelings scored by hand.
TEST(ForwardBackwardTest, PairScoresMatchBruteForce) {
  std::mt19937 rng(37);
  ForwardBackward fb;
  for (int trial = 0; trial < 200; ++trial) {
    const int T = 1 + trial % 5, L = 2 + (trial / 5) % 3;
    const double mu = std::vector<double>{0.1, 0.5, 1.0, 3.0}[trial % 4];
    const RandomChain chain = MakePairChain(T, L, &rng, false);
    const size_t TL = static_cast<size_t>(T) * L, LL = L * L;
    std::vector<std::vector<int32_t>> all;
    std::vector<double> log_weights;
    ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
      all.push_back(y);
      log_weights.push_back(HandScore(chain, y) / mu);
    });
    const double top =
        *std::max_element(log_weights.begin(), log_weights.end());
    double z = 0;
    for (double w : log_weights) z += std::exp(w - top);
    const double log_z = top + std::log(z);
    // [T×L nodes][T×L×L pairs per position][L×L their sum][L start][L end]
    std::vector<double> expected(TL + T * LL + LL + 2 * L, 0.0);
    for (size_t i = 0; i < all.size(); ++i) {
      const double p = std::exp(log_weights[i] - log_z);
      const std::vector<int32_t>& y = all[i];
      for (int t = 0; t < T; ++t) {
        expected[t * L + y[t]] += p;
        if (t == 0) continue;
        expected[TL + t * LL + y[t - 1] * L + y[t]] += p;
        expected[TL + T * LL + y[t - 1] * L + y[t]] += p;
      }
      expected[TL + T * LL + LL + y[0]] += p;
      expected[TL + T * LL + LL + L + y[T - 1]] += p;
    }
    // The scaled pass and the log-space one.
    for (bool log_space : {false, true}) {
      std::vector<double> marginals(expected.size(), -7.0);
      const double value =
          log_space ? fb.ComputeInLogSpace(chain.scores(), mu, marginals.data())
                    : fb.Compute(chain.scores(), mu, marginals.data());
      EXPECT_NEAR(value, mu * log_z, 1e-10);
      if (!log_space) {
        EXPECT_FALSE(fb.used_log_space());
      }
      EXPECT_NEAR(fb.Compute(chain.scores(), mu, nullptr), mu * log_z, 1e-10);
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_NEAR(marginals[i], expected[i], 1e-10)
            << "trial " << trial << " entry " << i << " log " << log_space;
      }
    }
  }
}

TEST(ForwardBackwardTest, GradientOfTheValueIsTheMarginals) {
  std::mt19937 rng(32);
  ForwardBackward fb;
  const double h = 1e-5;
  for (int trial = 0; trial < 40; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    const double mu = 0.3 + (trial % 3);
    RandomChain chain = MakeChain(T, L, 1.5, &rng);
    std::vector<double> marginals(MarginalsSize(T, L));
    fb.Compute(chain.scores(), mu, marginals.data());
    // Perturb each score array in turn; its block of marginals is the
    // derivative.
    const std::vector<std::pair<std::vector<double>*, size_t>> blocks = {
        {&chain.unary, 0},
        {&chain.transition, static_cast<size_t>(T) * L},
        {&chain.start, static_cast<size_t>(T) * L + L * L},
        {&chain.end, static_cast<size_t>(T) * L + L * L + L}};
    for (const auto& [values, offset] : blocks) {
      for (size_t i = 0; i < values->size(); ++i) {
        const double saved = (*values)[i];
        (*values)[i] = saved + h;
        const double plus = fb.Compute(chain.scores(), mu, nullptr);
        (*values)[i] = saved - h;
        const double minus = fb.Compute(chain.scores(), mu, nullptr);
        (*values)[i] = saved;
        EXPECT_NEAR((plus - minus) / (2 * h), marginals[offset + i], 1e-7)
            << "trial " << trial << " entry " << offset + i;
      }
    }
  }
}

TEST(ForwardBackwardTest, SmallMuRecoversTheViterbiScore) {
  std::mt19937 rng(33);
  ForwardBackward fb;
  ViterbiDecoder viterbi;
  for (int trial = 0; trial < 100; ++trial) {
    const int T = 1 + trial % 5, L = 1 + (trial / 5) % 4;
    const RandomChain chain = MakeChain(T, L, 2.0, &rng);
    std::vector<int32_t> best(T);
    const double max_score = viterbi.Decode(chain.scores(), best.data());
    std::vector<double> marginals(MarginalsSize(T, L));
    const double value = fb.Compute(chain.scores(), 1e-6, marginals.data());
    // μ log Z ∈ [max, max + μ·T·log L].
    EXPECT_NEAR(value, max_score, 1e-5);
    EXPECT_GE(value, max_score - 1e-9);
    for (double m : marginals) EXPECT_TRUE(std::isfinite(m));
  }
}

TEST(ForwardBackwardTest, LongChainWithTinyMuStaysFiniteAndNormalised) {
  std::mt19937 rng(34);
  const int T = 1000, L = 10;
  const RandomChain chain = MakeChain(T, L, 100.0, &rng);
  ForwardBackward fb;
  ViterbiDecoder viterbi;
  std::vector<int32_t> best(T);
  const double max_score = viterbi.Decode(chain.scores(), best.data());
  for (double mu : {1e-3, 1.0, 1e3}) {
    std::vector<double> marginals(MarginalsSize(T, L));
    const double value = fb.Compute(chain.scores(), mu, marginals.data());
    ASSERT_TRUE(std::isfinite(value)) << "mu " << mu;
    EXPECT_GE(value, max_score - 1e-6);
    EXPECT_LE(value, max_score + mu * T * std::log(L) + 1e-6);
    for (double m : marginals) {
      ASSERT_TRUE(std::isfinite(m)) << "mu " << mu;
      EXPECT_GE(m, 0.0);
    }
    for (int t = 0; t < T; ++t) {
      double sum = 0;
      for (int y = 0; y < L; ++y) sum += marginals[t * L + y];
      EXPECT_NEAR(sum, 1.0, 1e-9) << "mu " << mu << " t " << t;
    }
    const double* pair = marginals.data() + T * L;
    EXPECT_NEAR(std::accumulate(pair, pair + L * L, 0.0), T - 1, 1e-6);
    const double* start = pair + L * L;
    EXPECT_NEAR(std::accumulate(start, start + L, 0.0), 1.0, 1e-9);
    EXPECT_NEAR(std::accumulate(start + L, start + 2 * L, 0.0), 1.0, 1e-9);
    if (mu == 1e-3) {
      // Scores ~100 apart per position: the posterior sits on the Viterbi
      // labeling.
      for (int t = 0; t < T; ++t) {
        EXPECT_GT(marginals[t * L + best[t]], 0.5) << "t " << t;
      }
    }
  }
}

TEST(ForwardBackwardTest, EmptyChainScoresZero) {
  const RandomChain chain{0, 2, {}, {1, 2, 3, 4}, {1, 1}, {2, 2}};
  ForwardBackward fb;
  std::vector<double> marginals(MarginalsSize(0, 2), -1.0);
  EXPECT_EQ(fb.Compute(chain.scores(), 0.5, marginals.data()), 0.0);
  EXPECT_EQ(marginals, std::vector<double>(8, 0.0));
}

TEST(ForwardBackwardTest, MinusInfinityScoresAreExcluded) {
  // Forbidding label 1 at position 1 must equal brute force over the rest.
  std::mt19937 rng(35);
  RandomChain chain = MakeChain(3, 3, 1.0, &rng);
  chain.unary[1 * 3 + 1] = -kInf;
  chain.transition[0 * 3 + 2] = -kInf;
  ForwardBackward fb;
  std::vector<double> marginals(MarginalsSize(3, 3));
  const double value = fb.Compute(chain.scores(), 0.7, marginals.data());
  std::vector<double> expected;
  EXPECT_NEAR(value, BruteForce(chain.scores(), 0.7, &expected), 1e-10);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(marginals[i], expected[i], 1e-10) << "entry " << i;
  }
  EXPECT_EQ(marginals[1 * 3 + 1], 0.0);
}

// --- the scaled pass against the log-space one -----------------------------

// |actual − expected| ≤ 1e-10·|expected| entry by entry, or up to
// `absolute` for entries that underflow may have dropped.
void ExpectSameMarginals(const std::vector<double>& actual,
                         const std::vector<double>& expected,
                         double absolute = 0) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(std::isfinite(actual[i])) << "entry " << i;
    EXPECT_LE(std::abs(actual[i] - expected[i]),
              1e-10 * std::abs(expected[i]) + absolute)
        << "entry " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

// Runs Compute (with and without marginals) and ComputeInLogSpace; returns
// whether Compute kept the scaled pass, after checking that both agree.
bool ExpectMatchesLogSpace(const ChainScores& scores, double mu,
                           double absolute = 0) {
  const int T = scores.length, L = scores.num_labels;
  ForwardBackward fb, reference;
  std::vector<double> marginals(MarginalsSize(T, L), -7.0);
  std::vector<double> expected(MarginalsSize(T, L), -9.0);
  const double value = fb.Compute(scores, mu, marginals.data());
  const bool scaled = !fb.used_log_space();
  const double expected_value =
      reference.ComputeInLogSpace(scores, mu, expected.data());
  EXPECT_TRUE(std::isfinite(value));
  EXPECT_NEAR(value, expected_value, 1e-10 * std::abs(expected_value))
      << "T " << T << " L " << L << " mu " << mu;
  EXPECT_EQ(fb.Compute(scores, mu, nullptr), value);
  EXPECT_EQ(fb.used_log_space(), !scaled);
  ExpectSameMarginals(marginals, expected, absolute);
  return scaled;
}

TEST(ForwardBackwardTest, ScaledPassMatchesTheLogSpacePass) {
  std::mt19937 rng(36);
  std::bernoulli_distribution forbid(0.2);
  int kept = 0, fell_back = 0;
  for (int T : {1, 2, 3, 10, 57, 300}) {
    for (int L : {1, 2, 5, 22}) {
      for (double mu : {10.0, 1.0, 0.1}) {
        for (double scale : {2.0, 8.0}) {
          SCOPED_TRACE(testing::Message() << "T " << T << " L " << L << " mu "
                                          << mu << " scale " << scale);
          RandomChain chain = MakeChain(T, L, scale, &rng);
          const bool scaled = ExpectMatchesLogSpace(chain.scores(), mu);
          // Factors no smaller than e^−80 (start + unary at t = 0, spread
          // 8 at μ = 0.1) keep every message entry above ~1e-40.
          if (scale == 2.0) EXPECT_TRUE(scaled);
          // Forbidden transitions (as constraints make them), keeping the
          // diagonal so that some labeling stays finite. Labels that they
          // keep apart for long may drift below 1e-100 and send the chain
          // to log space.
          for (int a = 0; a < L; ++a) {
            for (int b = 0; b < L; ++b) {
              if (a != b && forbid(rng)) chain.transition[a * L + b] = -kInf;
            }
          }
          const bool scaled_forbidden =
              ExpectMatchesLogSpace(chain.scores(), mu, 1e-300);
          kept += scaled + scaled_forbidden;
          fell_back += !scaled + !scaled_forbidden;
        }
      }
    }
  }
  // Scores in [-8, 8] at μ = 0.1 need factors down to e^−320.
  EXPECT_GT(fell_back, 10);
  EXPECT_GT(kept, 200);
}

TEST(ForwardBackwardTest, TinyMuOnALongChainFallsBackToLogSpace) {
  std::mt19937 rng(37);
  const int T = 1000, L = 10;
  const RandomChain chain = MakeChain(T, L, 100.0, &rng);
  ForwardBackward fb;
  std::vector<double> marginals(MarginalsSize(T, L));
  const double value = fb.Compute(chain.scores(), 1e-3, marginals.data());
  EXPECT_TRUE(fb.used_log_space());
  ForwardBackward reference;
  std::vector<double> expected(MarginalsSize(T, L));
  EXPECT_EQ(value,
            reference.ComputeInLogSpace(chain.scores(), 1e-3, expected.data()));
  EXPECT_EQ(marginals, expected);
  EXPECT_TRUE(std::isfinite(value));
  for (double m : marginals) ASSERT_TRUE(std::isfinite(m));
  // At μ = 100 (factors down to e^−4) the same chain stays on the scaled
  // pass.
  EXPECT_TRUE(ExpectMatchesLogSpace(chain.scores(), 100.0));
}

TEST(ForwardBackwardTest, UnderflowThatMattersFallsBack) {
  // μ = 1. Labelings through products like e^−750 = 0 in double: row sums
  // and α·β normalisers alone (each ≥ e^−600 ≈ 1e-261) do not reveal that
  // the forward and the backward pass both drop the best labelings, e.g.
  // (0, 2, 0, 1) and (0, 1, 1, 1) at -2700 in the second chain; a scaled
  // pass that kept going would be off by log 2 or more.
  std::vector<RandomChain> chains = {
      {3, 2, {0, -kInf, 0, -150, 0, 0}, {-600, -600, 0, -600}, {0, 0}, {0, 0}},
      {4,
       3,
       {0, -450, -750, -300, -750, -750, -300, -750, -600, -450, -600, 0},
       {-600, -150, -300, -450, 0, -600, -150, -600, -600},
       {-300, -600, -300},
       {-150, -150, -750}}};
  // Factors no smaller than e^−200, but two labels that never mix: label 1
  // trails by 200 per position for four positions (its forward entries fall
  // to e^−800, 0 in double) and leads by 200 for the next four, so both
  // constant labelings score -800.
  RandomChain apart{8, 2, {}, {0, -kInf, -kInf, 0}, {0, 0}, {0, 0}};
  for (int t = 0; t < 8; ++t) {
    apart.unary.push_back(t < 4 ? 0 : -200);
    apart.unary.push_back(t < 4 ? -200 : 0);
  }
  chains.push_back(apart);
  for (const RandomChain& chain : chains) {
    const int T = chain.length, L = chain.num_labels;
    ForwardBackward fb;
    std::vector<double> marginals(MarginalsSize(T, L));
    const double value = fb.Compute(chain.scores(), 1.0, marginals.data());
    EXPECT_TRUE(fb.used_log_space());
    std::vector<double> expected;
    EXPECT_NEAR(value, BruteForce(chain.scores(), 1.0, &expected), 1e-9);
    EXPECT_EQ(fb.Compute(chain.scores(), 1.0, nullptr), value);
    EXPECT_TRUE(fb.used_log_space());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(marginals[i], expected[i], 1e-10) << "entry " << i;
    }
  }
}

// One ForwardBackward keeps the last transition table's factors for the
// next sentence: every call gives the bits a fresh one gives, whether the
// transitions, μ or the kind of scores change between calls, and a table
// with a factor too small for the scaled pass sends every sentence that
// reuses it to log space.
TEST(ForwardBackwardTest, ReusedTransitionFactorsGiveTheBitsOfAFreshPass) {
  std::mt19937 rng(41);
  const RandomChain base = MakeChain(6, 3, 2.0, &rng);
  RandomChain other_unary = MakeChain(4, 3, 2.0, &rng);
  other_unary.transition = base.transition;
  RandomChain other_transition = base;
  other_transition.transition[4] += 1e-12;
  // A factor of e^−300 at μ = 1, fine at μ = 10.
  RandomChain tiny = base;
  tiny.transition[2] = -300;
  const RandomChain pairs = MakePairChain(5, 3, &rng, false);
  struct Call {
    const RandomChain* chain;
    double mu;
  };
  const std::vector<Call> calls = {{&base, 1.0},
                                   {&other_unary, 1.0},
                                   {&base, 0.5},
                                   {&base, 0.5},
                                   {&other_transition, 0.5},
                                   {&base, 0.5},
                                   {&tiny, 1.0},
                                   {&tiny, 1.0},
                                   {&tiny, 10.0},
                                   {&pairs, 1.0},
                                   {&base, 1.0},
                                   {&pairs, 1.0},
                                   {&base, 1.0}};
  ForwardBackward reused;
  int log_space = 0;
  for (size_t k = 0; k < calls.size(); ++k) {
    SCOPED_TRACE(testing::Message() << "call " << k);
    const RandomChain& chain = *calls[k].chain;
    const size_t size =
        MarginalsSize(chain.length, chain.num_labels) +
        (chain.pair.empty() ? 0
                            : static_cast<size_t>(chain.length) *
                                  chain.num_labels * chain.num_labels);
    std::vector<double> expected(size), marginals(size);
    ForwardBackward fresh;
    const double value =
        fresh.Compute(chain.scores(), calls[k].mu, expected.data());
    EXPECT_EQ(reused.Compute(chain.scores(), calls[k].mu, marginals.data()),
              value);
    EXPECT_EQ(marginals, expected);
    EXPECT_EQ(reused.used_log_space(), fresh.used_log_space());
    log_space += fresh.used_log_space();
  }
  EXPECT_EQ(log_space, 2);  // the tiny table at μ = 1, twice
}

// A chain whose transitions are −∞ off a random set of allowed pairs (each
// label can start and follow at least one), with their lists.
struct ListedChain {
  RandomChain chain;
  std::vector<uint8_t> allowed;
  TransitionLists lists;
  ChainScores scores() const {
    ChainScores scores = chain.scores();
    scores.lists = &lists;
    return scores;
  }
};

ListedChain MakeListedChain(int T, int L, double share, std::mt19937* rng) {
  ListedChain listed{MakeChain(T, L, 2.0, rng), {}, {}};
  std::bernoulli_distribution keep(share);
  listed.allowed.assign(static_cast<size_t>(L) * L, 0);
  for (int a = 0; a < L; ++a) {
    listed.allowed[static_cast<size_t>(a) * L + (a + 1) % L] = 1;
    for (int b = 0; b < L; ++b) {
      if (keep(*rng)) listed.allowed[static_cast<size_t>(a) * L + b] = 1;
    }
  }
  for (size_t k = 0; k < listed.allowed.size(); ++k) {
    if (!listed.allowed[k]) listed.chain.transition[k] = -kInf;
  }
  listed.lists = TransitionLists::FromMask(listed.allowed.data(), L);
  return listed;
}

// The marginals' pair part gathered in the lists' order: ComputeListed's
// layout from Compute's.
std::vector<double> ListedLayout(const std::vector<double>& full, int T,
                                 const TransitionLists& lists) {
  const int L = lists.num_labels;
  const size_t cells = static_cast<size_t>(T) * L;
  std::vector<double> listed(full.begin(), full.begin() + cells);
  for (int a = 0; a < L; ++a) {
    for (int32_t k = lists.next_begin[a]; k < lists.next_begin[a + 1]; ++k) {
      listed.push_back(
          full[cells + static_cast<size_t>(a) * L + lists.next[k]]);
    }
  }
  listed.insert(listed.end(), full.end() - 2 * L, full.end());
  return listed;
}

// Few allowed transitions are read by their lists: the value and every
// marginal are the bits of the pass over all L² pairs with −∞ off the lists
// (what the transitions hold off them is not read), in the full layout and
// in the lists' order, with fresh and reused factors, as the lists change
// under the same object, and through the log-space fallback.
TEST(ForwardBackwardTest, ListedTransitionsGiveTheBitsOfTheFullTable) {
  std::mt19937 rng(7);
  const ListedChain sparse = MakeListedChain(9, 40, 0.05, &rng);
  ASSERT_TRUE(ForwardBackward::ReadsLists(sparse.scores()));
  ListedChain other = MakeListedChain(5, 40, 0.1, &rng);
  ListedChain same_scores = sparse;  // the same lists at another address
  ListedChain more = sparse;         // the same transitions, a pair more
  for (size_t k = 0; k < more.allowed.size(); ++k) {
    if (more.allowed[k]) continue;
    more.allowed[k] = 1;
    more.chain.transition[k] = 0.5;
    more.lists = TransitionLists::FromMask(more.allowed.data(), 40);
    break;
  }
  const ListedChain one = MakeListedChain(1, 40, 0.05, &rng);
  // A factor of e^−300 at μ = 1: the pass falls back to log space.
  ListedChain tiny = sparse;
  tiny.chain.transition[3 * 40 + tiny.lists.next[tiny.lists.next_begin[3]]] =
      -300;
  // Half the pairs allowed: the lists are given, the full table is read.
  const ListedChain dense = MakeListedChain(6, 12, 0.5, &rng);
  ASSERT_FALSE(ForwardBackward::ReadsLists(dense.scores()));
  const std::vector<const ListedChain*> calls = {
      &sparse, &sparse, &other, &sparse, &same_scores, &more,
      &sparse, &one,    &tiny,  &dense,  &sparse};
  ForwardBackward reused;
  int log_space = 0;
  for (size_t k = 0; k < calls.size(); ++k) {
    SCOPED_TRACE(testing::Message() << "call " << k);
    const ListedChain& listed = *calls[k];
    const int T = listed.chain.length;
    const int L = listed.chain.num_labels;
    std::vector<double> expected(MarginalsSize(T, L));
    ForwardBackward full;
    const double value =
        full.Compute(listed.chain.scores(), 1.0, expected.data());
    log_space += full.used_log_space();
    // Off the lists the transitions hold anything but −∞ (unless the full
    // table is read).
    ListedChain unmasked = listed;
    if (ForwardBackward::ReadsLists(listed.scores())) {
      for (size_t i = 0; i < unmasked.allowed.size(); ++i) {
        if (!unmasked.allowed[i]) unmasked.chain.transition[i] = 3.0 + i % 5;
      }
    }
    for (const ListedChain* given :
         std::vector<const ListedChain*>{&listed, &unmasked}) {
      std::vector<double> marginals(expected.size(), -1.0);
      ForwardBackward fresh;
      EXPECT_EQ(fresh.Compute(given->scores(), 1.0, marginals.data()), value);
      EXPECT_EQ(marginals, expected);
      EXPECT_EQ(fresh.used_log_space(), full.used_log_space());
      marginals.assign(expected.size(), -1.0);
      EXPECT_EQ(reused.Compute(given->scores(), 1.0, marginals.data()), value);
      EXPECT_EQ(marginals, expected);
      if (!ForwardBackward::ReadsLists(given->scores())) continue;
      std::vector<double> in_list_order(T * L + listed.lists.size() + 2 * L,
                                        -1.0);
      EXPECT_EQ(
          reused.ComputeListed(given->scores(), 1.0, in_list_order.data()),
          value);
      EXPECT_EQ(in_list_order, ListedLayout(expected, T, listed.lists));
    }
    const double* pair = expected.data() + T * L;
    for (size_t i = 0; i < listed.allowed.size(); ++i) {
      if (!listed.allowed[i]) EXPECT_EQ(pair[i], 0.0) << i;
    }
  }
  EXPECT_EQ(log_space, 1);  // `tiny`
}

TEST(ForwardBackwardTest, FactorsDownToTheLimitKeepTheScaledPass) {
  // Unary scores spread over 100 and transitions over 50: at μ = 1 factors
  // reach e^−100 and message entries ~e^−150 (above 1e-100 the checks
  // allow), and the scaled pass is kept; at μ = 0.25 factors of e^−400 send
  // the chain to log space.
  std::mt19937 rng(38);
  std::uniform_real_distribution<double> unary(-50, 50), transition(-25, 25);
  RandomChain chain = MakeChain(200, 3, 1.0, &rng);
  for (double& x : chain.unary) x = unary(rng);
  for (double& x : chain.transition) x = transition(rng);
  EXPECT_TRUE(ExpectMatchesLogSpace(chain.scores(), 1.0, 1e-300));
  EXPECT_FALSE(ExpectMatchesLogSpace(chain.scores(), 0.25));
  // Scores that need e^±1e5 factors at μ = 1e-3 but whose spread within
  // each table is small: the shifts keep everything in range.
  RandomChain wide = MakeChain(200, 6, 1e-3, &rng);
  for (double& x : wide.unary) x += 100;
  for (double& x : wide.transition) x -= 100;
  EXPECT_TRUE(ExpectMatchesLogSpace(wide.scores(), 1e-3));
}

}  // namespace
}  // namespace chaintag
