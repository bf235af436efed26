#include "models/chain_problem.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "models/chain_examples_testing.h"
#include "models/chain_scores_testing.h"

namespace chaintag {
namespace {

using ::chaintag::chain_testing::RandomExamples;
using ::chaintag::chain_testing::Values;
constexpr uint64_t kBuckets = ::chaintag::chain_testing::kBuckets;

// φ(x, y) written out densely, independently of ChainProblem.
std::vector<double> DenseFeatures(const ChainLayout& layout,
                                  const ChainExample& example,
                                  const std::vector<int32_t>& y) {
  std::vector<double> phi(layout.dim(), 0.0);
  const int L = layout.num_labels;
  const FeatureSequence& f = example.features;
  for (int t = 0; t < f.size(); ++t) {
    for (int k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
      phi[f.buckets[k] * L + y[t]] += f.values[k];
    }
    if (t > 0) phi[layout.transition_offset() + y[t - 1] * L + y[t]] += 1;
  }
  phi[layout.start_offset() + y.front()] += 1;
  phi[layout.end_offset() + y.back()] += 1;
  return phi;
}

std::vector<double> DensePsi(const ChainLayout& layout,
                             const ChainExample& example,
                             const std::vector<int32_t>& y) {
  std::vector<double> psi = DenseFeatures(layout, example, example.labels);
  const std::vector<double> phi = DenseFeatures(layout, example, y);
  for (size_t j = 0; j < psi.size(); ++j) psi[j] -= phi[j];
  return psi;
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t j = 0; j < a.size(); ++j) sum += a[j] * b[j];
  return sum;
}

class ChainProblemTest : public ::testing::TestWithParam<bool> {};

TEST_P(ChainProblemTest, OraclesMatchBruteForce) {
  const bool normalize = GetParam();
  std::mt19937 rng(3);
  for (int L = 1; L <= 4; ++L) {
    const ChainLayout layout{L, kBuckets};
    std::vector<ChainExample> examples = RandomExamples(8, L, &rng);
    ASSERT_TRUE(ChainProblem::Validate(layout, examples).ok());
    ChainProblem problem(layout, examples, normalize);
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> w(layout.dim());
    for (double& x : w) x = normal(rng);
    for (int i = 0; i < problem.NumExamples(); ++i) {
      const ChainExample& example = examples[i];
      const int T = example.labels.size();
      const double unit = normalize ? 1.0 / T : 1.0;
      double best_augmented = -1e300, best_score = -1e300;
      ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
        int wrong = 0;
        for (int t = 0; t < T; ++t) wrong += y[t] != example.labels[t];
        const double psi_dot = Dot(w, DensePsi(layout, example, y));
        EXPECT_NEAR(problem.Score(i, w.data(), y), psi_dot, 1e-9);
        EXPECT_DOUBLE_EQ(problem.Loss(i, y), wrong * unit);
        best_augmented = std::max(best_augmented, wrong * unit - psi_dot);
        best_score =
            std::max(best_score, Dot(w, DenseFeatures(layout, example, y)));
      });
      OracleResult result;
      problem.MaxOracle(i, w.data(), nullptr, &result);
      EXPECT_NEAR(result.loss - result.score, best_augmented, 1e-9);
      // The same oracle at w = scale·v, without forming w.
      const double scale = 0.37;
      std::vector<double> v = w;
      for (double& x : v) x /= scale;
      OracleResult scaled;
      problem.MaxOracleScaled(i, v.data(), scale, &scaled);
      EXPECT_NEAR(scaled.loss - scaled.score, best_augmented, 1e-9);
      EXPECT_NEAR(scaled.score, problem.Score(i, w.data(), scaled.corner),
                  1e-9);
      EXPECT_DOUBLE_EQ(result.loss, problem.Loss(i, result.corner));
      EXPECT_NEAR(result.score, problem.Score(i, w.data(), result.corner),
                  1e-9);
      Corner decoded;
      problem.Decode(i, w.data(), &decoded);
      EXPECT_NEAR(Dot(w, DenseFeatures(layout, example, decoded)), best_score,
                  1e-9);
    }
  }
}

void CheckBlockStateAlgebra(Values kind, bool normalize_loss);

TEST_P(ChainProblemTest, BlockStateAlgebraMatchesDenseVectors) {
  for (Values kind : {Values::kReal, Values::kInteger, Values::kDyadic}) {
    SCOPED_TRACE(static_cast<int>(kind));
    CheckBlockStateAlgebra(kind, GetParam());
  }
}

void CheckBlockStateAlgebra(Values kind, bool normalize_loss) {
  std::mt19937 rng(5);
  const int L = 3;
  const ChainLayout layout{L, kBuckets};
  std::vector<ChainExample> examples =
      RandomExamples(6, L, &rng, /*max_length=*/5, kind);
  ChainProblem problem(layout, examples, normalize_loss);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> w(layout.dim());
  for (double& x : w) x = normal(rng);
  for (int i = 0; i < problem.NumExamples(); ++i) {
    const ChainExample& example = examples[i];
    const int T = example.labels.size();
    std::vector<double> state(problem.BlockStateSize(i));
    problem.InitBlockState(i, state.data());
    std::vector<double> v(layout.dim(), 0.0);  // dense v_i = Σ β ψ_i(y)
    std::uniform_int_distribution<int> label(0, L - 1);
    for (int step = 0; step < 20; ++step) {
      Corner y(T);
      for (int32_t& label_t : y) label_t = label(rng);
      const std::vector<double> psi = DensePsi(layout, example, y);
      OracleResult result;
      problem.MaxOracle(i, w.data(), state.data(), &result);
      EXPECT_NEAR(result.state_dot, Dot(v, w), 1e-9);
      double distance = 0;
      for (size_t j = 0; j < v.size(); ++j) {
        distance += (v[j] - psi[j]) * (v[j] - psi[j]);
      }
      EXPECT_NEAR(problem.StateDistanceSquared(i, state.data(), y), distance,
                  1e-9);
      std::vector<double> moved = w;
      const double c = normal(rng);
      problem.AddCornerMinusState(i, y, state.data(), c, moved.data());
      for (size_t j = 0; j < w.size(); ++j) {
        ASSERT_NEAR(moved[j], w[j] + c * (psi[j] - v[j]), 1e-9);
      }
      std::vector<double> scaled = w;
      problem.AddScaled(i, y, c, scaled.data());
      for (size_t j = 0; j < w.size(); ++j) {
        ASSERT_NEAR(scaled[j], w[j] + c * psi[j], 1e-9);
      }
      // The active-set operations: several corners scored at once, the
      // distance between two corners, and an affine move of the state.
      Corner other(T);
      for (int32_t& label_t : other) label_t = label(rng);
      const std::vector<double> other_psi = DensePsi(layout, example, other);
      const Corner* corners[] = {&y, &other, &example.labels};
      double scores[3], state_dot = 0;
      problem.ScoreCorners(i, w.data(), state.data(), corners, 3, scores,
                           &state_dot);
      EXPECT_NEAR(scores[0], Dot(w, psi), 1e-9);
      EXPECT_NEAR(scores[1], Dot(w, other_psi), 1e-9);
      EXPECT_NEAR(scores[2], 0, 1e-12);
      EXPECT_NEAR(state_dot, Dot(v, w), 1e-9);
      // The fused call gives the same scores and the same oracle.
      double fused_scores[3];
      OracleResult fused, separate;
      problem.ScoreCornersAndMaxOracle(i, w.data(), state.data(), corners, 3,
                                       fused_scores, &fused);
      problem.MaxOracle(i, w.data(), state.data(), &separate);
      for (int k = 0; k < 3; ++k) EXPECT_EQ(fused_scores[k], scores[k]);
      EXPECT_EQ(fused.corner, separate.corner);
      EXPECT_EQ(fused.loss, separate.loss);
      EXPECT_EQ(fused.score, separate.score);
      EXPECT_EQ(fused.state_dot, separate.state_dot);
      double corner_distance = 0;
      for (size_t j = 0; j < psi.size(); ++j) {
        corner_distance += (psi[j] - other_psi[j]) * (psi[j] - other_psi[j]);
      }
      EXPECT_NEAR(problem.CornerDistanceSquared(i, y, other), corner_distance,
                  1e-9);
      EXPECT_EQ(problem.GoldCorner(i), example.labels);
      const double gamma = uniform(rng);
      if (step % 2 == 0) {
        problem.MixCorner(i, y, gamma, state.data());
        for (size_t j = 0; j < v.size(); ++j) {
          v[j] = (1 - gamma) * v[j] + gamma * psi[j];
        }
      } else {
        // v ← (1 − γ)v + γψ(y) written as scale-and-add on the state.
        for (double& x : state) x *= 1 - gamma;
        problem.AddCornerToState(i, y, gamma, state.data());
        problem.AddCornerToState(i, other, 0.25 * gamma, state.data());
        problem.AddCornerToState(i, y, -0.25 * gamma, state.data());
        for (size_t j = 0; j < v.size(); ++j) {
          v[j] = (1 - gamma) * v[j] + gamma * psi[j] +
                 0.25 * gamma * (other_psi[j] - psi[j]);
        }
      }
    }
  }
}

// The smoothed oracles against their definitions over all labelings:
// values, gradients (dense, from the returned state), μ → 0 and the touched
// coordinates.
TEST_P(ChainProblemTest, SmoothedOraclesMatchBruteForce) {
  const bool normalize = GetParam();
  std::mt19937 rng(5);
  for (int L = 1; L <= 3; ++L) {
    const ChainLayout layout{L, kBuckets};
    std::vector<ChainExample> examples = RandomExamples(6, L, &rng, 4);
    ChainProblem problem(layout, examples, normalize);
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> w(layout.dim());
    for (double& x : w) x = normal(rng);
    for (int i = 0; i < problem.NumExamples(); ++i) {
      const ChainExample& example = examples[i];
      const int T = example.labels.size();
      // h(y) = L(y) − ⟨w, ψ(y)⟩ and −ψ(y) for every labeling.
      std::vector<double> h;
      std::vector<std::vector<double>> minus_psi;
      ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
        std::vector<double> psi = DensePsi(layout, example, y);
        h.push_back(problem.Loss(i, y) - Dot(w, psi));
        for (double& x : psi) x = -x;
        minus_psi.push_back(psi);
      });
      const int count = static_cast<int>(h.size());
      std::vector<int> order(count);
      for (int k = 0; k < count; ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return h[a] > h[b]; });
      for (const double mu : {0.3, 2.0}) {
        for (const int top_k : {1, 2, 5}) {
          // The expected value and distribution q over labelings.
          std::vector<double> q(count, 0.0);
          double expected_l2 = 0;
          {
            const int k = std::min(top_k, count);
            double prefix = 0, tau = 0;
            for (int j = 0; j < k; ++j) {
              prefix += h[order[j]] / mu;
              const double candidate = (prefix - 1) / (j + 1);
              if (h[order[j]] / mu - candidate > 0) tau = candidate;
            }
            double norm = 0;
            for (int j = 0; j < k; ++j) {
              q[order[j]] = std::max(0.0, h[order[j]] / mu - tau);
              expected_l2 += q[order[j]] * h[order[j]];
              norm += q[order[j]] * q[order[j]];
            }
            expected_l2 -= 0.5 * mu * norm;
          }
          std::vector<double> entropy_q(count);
          double z = 0;
          for (int k = 0; k < count; ++k) {
            entropy_q[k] = std::exp((h[k] - h[order[0]]) / mu);
            z += entropy_q[k];
          }
          for (double& p : entropy_q) p /= z;
          const double expected_entropy = h[order[0]] + mu * std::log(z);

          for (const Smoothing::Kind kind :
               {Smoothing::Kind::kTopKL2, Smoothing::Kind::kEntropy}) {
            SCOPED_TRACE(testing::Message()
                         << "L " << L << " example " << i << " μ " << mu
                         << " K " << top_k << " kind "
                         << static_cast<int>(kind));
            const Smoothing smoothing{kind, mu, top_k};
            std::vector<double> state(problem.BlockStateSize(i));
            const double value =
                problem.SmoothedOracle(i, w.data(), smoothing, state.data());
            const bool l2 = kind == Smoothing::Kind::kTopKL2;
            EXPECT_NEAR(value, l2 ? expected_l2 : expected_entropy, 1e-9);
            // ∇f = −E_q ψ, applied as AddCornerMinusState(gold, state, 1).
            std::vector<double> gradient(layout.dim(), 0.0);
            problem.AddCornerMinusState(i, example.labels, state.data(), 1.0,
                                        gradient.data());
            std::vector<double> expected(layout.dim(), 0.0);
            for (int k = 0; k < count; ++k) {
              const double weight = l2 ? q[k] : entropy_q[k];
              for (size_t j = 0; j < expected.size(); ++j) {
                expected[j] += weight * minus_psi[k][j];
              }
            }
            for (size_t j = 0; j < expected.size(); ++j) {
              EXPECT_NEAR(gradient[j], expected[j], 1e-9) << "coordinate " << j;
            }
          }
        }
      }
      // μ → 0 recovers the max oracle, and kNone is the max oracle.
      OracleResult result;
      problem.MaxOracle(i, w.data(), nullptr, &result);
      std::vector<double> state(problem.BlockStateSize(i));
      for (const Smoothing& smoothing :
           {Smoothing{Smoothing::Kind::kNone, 0, 1},
            Smoothing{Smoothing::Kind::kTopKL2, 1e-9, 5},
            Smoothing{Smoothing::Kind::kEntropy, 1e-9, 1}}) {
        EXPECT_NEAR(
            problem.SmoothedOracle(i, w.data(), smoothing, state.data()),
            result.loss - result.score, 1e-7);
      }
      // Coordinates outside the touched ranges change nothing.
      std::vector<CoordinateRange> ranges;
      problem.TouchedRanges(i, &ranges);
      std::vector<bool> touched(layout.dim(), false);
      for (const CoordinateRange& range : ranges) {
        for (int64_t j = range.begin; j < range.begin + range.length; ++j) {
          touched[j] = true;
        }
      }
      std::vector<double> moved = w;
      for (int64_t j = 0; j < layout.dim(); ++j) {
        if (!touched[j]) moved[j] += 10 * normal(rng);
      }
      const Smoothing entropy{Smoothing::Kind::kEntropy, 0.5, 1};
      std::vector<double> moved_state(problem.BlockStateSize(i));
      EXPECT_DOUBLE_EQ(
          problem.SmoothedOracle(i, moved.data(), entropy, moved_state.data()),
          problem.SmoothedOracle(i, w.data(), entropy, state.data()));
      std::vector<double> gradient(layout.dim(), 0.0);
      problem.AddCornerMinusState(i, example.labels, state.data(), 1.0,
                                  gradient.data());
      for (int64_t j = 0; j < layout.dim(); ++j) {
        if (!touched[j]) EXPECT_EQ(gradient[j], 0.0) << "coordinate " << j;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(NormalizedAndNot, ChainProblemTest, ::testing::Bool());

}  // namespace
}  // namespace chaintag
