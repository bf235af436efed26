#include "models/second_order_forward_backward.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_scores_testing.h"
#include "models/second_order.h"
#include "models/second_order_testing.h"
#include "models/smoothing.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace {

using second_order_testing::BruteForce;
using second_order_testing::Chain;
using second_order_testing::ForConstrainedChains;
using second_order_testing::ForTinyChains;
using second_order_testing::kIob2Labels;
using second_order_testing::kIobesLabels;
using second_order_testing::kMinusInf;
using second_order_testing::RandomChain;
using second_order_testing::RandomStructure;
using second_order_testing::Unconstrained;

// Where each block of the marginals starts, in Chain::tables() order.
std::vector<size_t> BlockOffsets(const SecondOrderStructure& structure, int T) {
  const size_t L = structure.num_labels(), P = structure.num_pairs();
  const size_t unary = 0, pair = T * L, bigram = pair + T * P;
  const size_t start = bigram + L * L, end = start + L, trigram = end + L;
  return {unary, pair, bigram, start, end, trigram};
}

// μ·log Z over the valid labelings and the marginals, by enumeration.
double BruteForceSmoothing(const SecondOrderStructure& structure,
                           const Chain& chain,
                           const TransitionConstraints& constraints, double mu,
                           std::vector<double>* marginals) {
  const int T = chain.length, L = structure.num_labels();
  const int P = structure.num_pairs();
  const std::vector<ScoredLabeling> all =
      BruteForce(structure, chain, constraints);
  double top = kMinusInf;
  for (const ScoredLabeling& s : all) top = std::max(top, s.score / mu);
  double z = 0;
  for (const ScoredLabeling& s : all) z += std::exp(s.score / mu - top);
  const double log_z = top + std::log(z);
  marginals->assign(SecondOrderForwardBackward::MarginalsSize(structure, T),
                    0.0);
  const std::vector<size_t> at = BlockOffsets(structure, T);
  double* m = marginals->data();
  for (const ScoredLabeling& s : all) {
    const double p = std::exp(s.score / mu - log_z);
    const std::vector<int32_t>& y = s.labels;
    for (int t = 0; t < T; ++t) {
      m[at[0] + t * L + y[t]] += p;
      if (t >= 1) {
        const int32_t column = structure.pair_index(y[t - 1], y[t]);
        if (column >= 0) m[at[1] + t * P + column] += p;
        m[at[2] + y[t - 1] * L + y[t]] += p;
      }
      if (t >= 2) {
        const int32_t k = structure.trigram_index(y[t - 2], y[t - 1], y[t]);
        if (k >= 0) m[at[5] + k] += p;
      }
    }
    if (T > 0) {
      m[at[3] + y[0]] += p;
      m[at[4] + y[T - 1]] += p;
    }
  }
  return mu * log_z;
}

// Compute, with and without marginals, against the enumeration: the value
// to `tolerance` relative, each marginal to `tolerance` relative plus
// `absolute` (by default 0: the enumeration's zeros, forbidden pairs,
// trigrams and labels, exactly).
void ExpectSmoothingMatches(const SecondOrderStructure& structure,
                            const Chain& chain,
                            const TransitionConstraints& constraints, double mu,
                            double tolerance, double absolute = 0) {
  std::vector<double> expected;
  const double expected_value =
      BruteForceSmoothing(structure, chain, constraints, mu, &expected);
  SecondOrderForwardBackward fb;
  std::vector<double> marginals(expected.size(), -7.0);
  const double value =
      fb.Compute(structure, chain.scores(), mu, marginals.data());
  EXPECT_NEAR(value, expected_value, tolerance * std::abs(expected_value))
      << "mu " << mu;
  EXPECT_EQ(fb.Compute(structure, chain.scores(), mu, nullptr), value);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_GE(marginals[i], 0.0) << "entry " << i;
    EXPECT_LE(std::abs(marginals[i] - expected[i]),
              tolerance * expected[i] + absolute)
        << "entry " << i << ": " << marginals[i] << " vs " << expected[i]
        << " mu " << mu;
  }
}

TEST(SecondOrderForwardBackwardTest, MatchesBruteForceOnRandomTinyChains) {
  ForTinyChains({21, 22, 23}, 120, /*integer_too=*/false,
                [](const SecondOrderStructure& structure, const Chain& chain,
                   const TransitionConstraints& constraints) {
                  for (double mu : {0.1, 0.5, 1.0, 3.0, 100.0}) {
                    ExpectSmoothingMatches(structure, chain, constraints, mu,
                                           1e-12);
                  }
                });
}

// μ = 1e-3 against scores of size 10: factors down to e^−20000, so the
// blocks' sums of products underflow and fall back to log-sum-exp. The
// marginals' condition number is ~|score|/μ ~ 1e5, so both computations
// agree to ~1e5 ulps.
TEST(SecondOrderForwardBackwardTest, SmallMuMatchesBruteForce) {
  std::mt19937 rng(24);
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  for (int trial = 0; trial < 60; ++trial) {
    const int T = 1 + trial % 5, L = 4;
    const SecondOrderStructure structure =
        trial % 2 == 0 ? Unconstrained(L, &rng, 0.4)
                       : RandomStructure(L, iob2, 0.4, 0.4, &rng);
    const TransitionConstraints& constraints =
        trial % 2 == 0 ? TransitionConstraints() : iob2;
    const Chain chain = RandomChain(structure, T, &rng, false, 10);
    for (double mu : {1e-3, 1e-2}) {
      SCOPED_TRACE(testing::Message() << "trial " << trial);
      ExpectSmoothingMatches(structure, chain, constraints, mu, 1e-10, 1e-300);
    }
  }
}

TEST(SecondOrderForwardBackwardTest, ConstrainedMatchesBruteForce) {
  ForConstrainedChains(
      25, 40,
      [](const SecondOrderStructure& structure, const Chain& chain,
         const TransitionConstraints& constraints) {
        for (double mu : {0.2, 1.0, 1e3}) {
          ExpectSmoothingMatches(structure, chain, constraints, mu, 1e-12);
        }
      });
}

TEST(SecondOrderForwardBackwardTest, GradientOfTheValueIsTheMarginals) {
  std::mt19937 rng(26);
  const TransitionConstraints iob2(kIob2Labels, IOB2);
  SecondOrderForwardBackward fb;
  const double h = 1e-5;
  for (int trial = 0; trial < 24; ++trial) {
    const int T = 1 + trial % 5;
    const SecondOrderStructure structure =
        trial % 2 == 0 ? Unconstrained(3, &rng, 0.5)
                       : RandomStructure(4, iob2, 0.5, 0.5, &rng);
    const double mu = 0.4 + trial % 3;
    Chain chain = RandomChain(structure, T, &rng, false, 1.5);
    std::vector<double> marginals(
        SecondOrderForwardBackward::MarginalsSize(structure, T));
    fb.Compute(structure, chain.scores(), mu, marginals.data());
    const std::vector<size_t> offsets = BlockOffsets(structure, T);
    const std::vector<std::vector<double>*> tables = chain.tables();
    for (size_t block = 0; block < tables.size(); ++block) {
      std::vector<double>& values = *tables[block];
      // A few entries of each table, including the first and the last.
      for (size_t i = 0; i < values.size(); i += 1 + values.size() / 4) {
        for (size_t entry : {i, values.size() - 1}) {
          const double saved = values[entry];
          values[entry] = saved + h;
          const double plus =
              fb.Compute(structure, chain.scores(), mu, nullptr);
          values[entry] = saved - h;
          const double minus =
              fb.Compute(structure, chain.scores(), mu, nullptr);
          values[entry] = saved;
          EXPECT_NEAR((plus - minus) / (2 * h),
                      marginals[offsets[block] + entry], 1e-7)
              << "trial " << trial << " block " << block << " entry " << entry;
        }
      }
    }
  }
}

TEST(SecondOrderForwardBackwardTest, EmptyChainScoresZero) {
  std::mt19937 rng(27);
  const SecondOrderStructure structure = Unconstrained(3, &rng);
  const Chain chain = RandomChain(structure, 0, &rng, false);
  SecondOrderForwardBackward fb;
  std::vector<double> marginals(
      SecondOrderForwardBackward::MarginalsSize(structure, 0), -1.0);
  EXPECT_EQ(marginals.size(), 9 + 6 + structure.num_trigrams());
  EXPECT_EQ(fb.Compute(structure, chain.scores(), 0.5, marginals.data()), 0.0);
  EXPECT_EQ(marginals, std::vector<double>(marginals.size(), 0.0));
}

// Without trigram or pair weights the model is first order: long chains,
// tiny μ, against ForwardBackward (with the constraints as −∞ scores).
TEST(SecondOrderForwardBackwardTest, FirstOrderModelMatchesForwardBackward) {
  std::mt19937 rng(28);
  const TransitionConstraints constraints(kIobesLabels, IOBES);
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(5, constraints, {}, {});
  ASSERT_TRUE(structure.ok());
  SecondOrderForwardBackward fb;
  ForwardBackward first_order;
  ConstrainedScoresBuffer buffer;
  for (int T : {1, 2, 3, 40, 300}) {
    for (double mu : {1e-3, 1.0, 1e3}) {
      const Chain chain = RandomChain(*structure, T, &rng, false, 10);
      const ChainScores plain = {T,
                                 5,
                                 chain.unary.data(),
                                 chain.transition.data(),
                                 chain.start.data(),
                                 chain.end.data()};
      absl::StatusOr<ChainScores> constrained =
          constraints.Apply(plain, &buffer);
      ASSERT_TRUE(constrained.ok());
      std::vector<double> marginals(
          SecondOrderForwardBackward::MarginalsSize(*structure, T));
      std::vector<double> expected(T * 5 + 25 + 10);
      const double value =
          fb.Compute(*structure, chain.scores(), mu, marginals.data());
      const double expected_value =
          first_order.ComputeInLogSpace(*constrained, mu, expected.data());
      SCOPED_TRACE(testing::Message() << "T " << T << " mu " << mu);
      EXPECT_NEAR(value, expected_value, 1e-12 * std::abs(expected_value));
      // Same layout but for the empty pair block (no pairs).
      const double tolerance = mu < 1 ? 1e-9 : 1e-11;
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_NEAR(marginals[i], expected[i], tolerance * expected[i] + 1e-300)
            << "entry " << i;
      }
    }
  }
}

// 21 labels: rows of 21 edges padded to 24, against brute force on a short
// chain with trigrams and against ForwardBackward on a long first-order one.
TEST(SecondOrderForwardBackwardTest, WideBlocksMatch) {
  std::mt19937 rng(29);
  const SecondOrderStructure structure = Unconstrained(21, &rng, 0.05);
  ExpectSmoothingMatches(structure, RandomChain(structure, 3, &rng, false),
                         TransitionConstraints(), 0.7, 1e-12);
  absl::StatusOr<SecondOrderStructure> first_order =
      SecondOrderStructure::Create(21, TransitionConstraints(), {}, {});
  ASSERT_TRUE(first_order.ok());
  const int T = 40;
  const Chain chain = RandomChain(*first_order, T, &rng, false);
  const ChainScores plain = {T,
                             21,
                             chain.unary.data(),
                             chain.transition.data(),
                             chain.start.data(),
                             chain.end.data()};
  SecondOrderForwardBackward fb;
  ForwardBackward reference;
  std::vector<double> marginals(
      SecondOrderForwardBackward::MarginalsSize(*first_order, T));
  std::vector<double> expected(marginals.size());
  EXPECT_NEAR(fb.Compute(*first_order, chain.scores(), 0.5, marginals.data()),
              reference.ComputeInLogSpace(plain, 0.5, expected.data()), 1e-10);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(marginals[i], expected[i], 1e-11 * expected[i] + 1e-300)
        << "entry " << i;
  }
}

}  // namespace
}  // namespace chaintag
