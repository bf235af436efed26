#include "models/chain_problem.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "base/step_helpers.h"
#include "gtest/gtest.h"
#include "models/chain_examples_testing.h"
#include "models/chain_scores_testing.h"
#include "models/transition_constraints.h"

namespace chaintag {
namespace {

using ::chaintag::chain_testing::RandomExamples;
using ::chaintag::chain_testing::Values;
constexpr uint64_t kBuckets = ::chaintag::chain_testing::kBuckets;

constexpr int kPairBuckets = 4;

// The models the tests cover: first order, first order with pair features
// (an L×L block per pair row), second order (with pair features), and
// first order over allowed transitions only (the gold labelings' pairs and
// some random others: SetAllowedTransitions).
enum class Model { kFirst, kFirstWithPairs, kSecond, kFirstAllowed };
constexpr Model kModels[] = {Model::kFirst, Model::kFirstWithPairs,
                             Model::kSecond, Model::kFirstAllowed};

int OrderOf(Model model) { return model == Model::kSecond ? 2 : 1; }

// A test problem's parts: with pair features also those, at order 2 a
// structure (IOB2 constraints over {O, B-X, I-X, B-Y} when L = 4, none
// otherwise).
struct TestChain {
  ChainLayout layout;
  std::vector<ChainExample> examples;
  std::shared_ptr<const SecondOrderStructure> structure;
  std::vector<uint8_t> allowed;  // L² (kFirstAllowed), else empty

  bool Allowed(const std::vector<int32_t>& y) const {
    for (size_t t = 1; !allowed.empty() && t < y.size(); ++t) {
      if (!allowed[y[t - 1] * layout.num_labels + y[t]]) return false;
    }
    return structure == nullptr ||
           structure->IsAllowed(y.data(), static_cast<int>(y.size()));
  }
  std::unique_ptr<ChainProblem> Problem(bool normalize) const {
    EXPECT_TRUE(ChainProblem::Validate(layout, examples, structure.get()).ok());
    auto problem =
        std::make_unique<ChainProblem>(layout, examples, normalize, structure);
    if (!allowed.empty()) {
      EXPECT_TRUE(problem->SetAllowedTransitions(allowed).ok());
    }
    return problem;
  }
};

// Random pair features over kPairBuckets rows at positions t ≥ 1 (some
// positions without any).
void AddPairFeatures(std::mt19937* rng, Values kind, ChainExample* example) {
  std::uniform_int_distribution<int> count(0, 2), bucket(0, kPairBuckets - 1);
  const int T = example->features.size();
  FeatureSequence& z = example->pair_features;
  z.offsets.push_back(0);  // position 0: no pair
  for (int t = 1; t < T; ++t) {
    std::vector<bool> used(kPairBuckets, false);
    for (int k = count(*rng); k > 0; --k) used[bucket(*rng)] = true;
    for (uint32_t b = 0; b < kPairBuckets; ++b) {
      if (!used[b]) continue;
      z.buckets.push_back(b);
      z.values.push_back(chain_testing::RandomValue(kind, rng));
    }
    z.offsets.push_back(static_cast<int32_t>(z.buckets.size()));
  }
}

TestChain MakeTestChain(int L, Model model, int n, std::mt19937* rng,
                        int max_length = 5, Values kind = Values::kReal) {
  TestChain chain;
  chain.layout = ChainLayout{L, kBuckets};
  chain.examples = RandomExamples(n, L, rng, max_length, kind);
  if (model == Model::kFirst) return chain;
  if (model == Model::kFirstAllowed) {
    const int squared = L * L;
    std::bernoulli_distribution coin(0.3);
    chain.allowed.assign(squared, 0);
    for (int k = 0; k < squared; ++k) chain.allowed[k] = coin(*rng);
    for (const ChainExample& example : chain.examples) {
      for (size_t t = 1; t < example.labels.size(); ++t) {
        chain.allowed[example.labels[t - 1] * L + example.labels[t]] = 1;
      }
    }
    return chain;
  }
  if (model == Model::kFirstWithPairs) {
    chain.layout.num_pair_rows = kPairBuckets;
    chain.layout.num_pairs = L * L;
    for (ChainExample& example : chain.examples) {
      AddPairFeatures(rng, kind, &example);
    }
    return chain;
  }
  TransitionConstraints constraints;
  if (L == 4) {
    constraints = TransitionConstraints({"O", "B-X", "I-X", "B-Y"}, IOB2);
  }
  std::bernoulli_distribution coin(0.5);
  std::uniform_int_distribution<int> label(0, L - 1);
  std::vector<LabelTrigram> trigrams;
  std::vector<LabelPair> pairs;
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      if (coin(*rng)) pairs.push_back({a, b});
      for (int c = 0; c < L; ++c) {
        if (coin(*rng)) trigrams.push_back({a, b, c});
      }
    }
  }
  // Reversed, so that weight order is not index order.
  std::reverse(trigrams.begin(), trigrams.end());
  absl::StatusOr<SecondOrderStructure> structure =
      SecondOrderStructure::Create(L, constraints, trigrams, pairs);
  EXPECT_TRUE(structure.ok()) << structure.status();
  chain.structure =
      std::make_shared<const SecondOrderStructure>(*std::move(structure));
  chain.layout.order = 2;
  chain.layout.num_pair_rows = kPairBuckets;
  chain.layout.num_pairs = static_cast<int>(pairs.size());
  chain.layout.num_trigrams = static_cast<int>(trigrams.size());
  for (ChainExample& example : chain.examples) {
    while (!chain.Allowed(example.labels)) {
      for (int32_t& y : example.labels) y = label(*rng);
    }
    AddPairFeatures(rng, kind, &example);
  }
  return chain;
}

// φ(x, y) written out densely, independently of ChainProblem.
std::vector<double> DenseFeatures(const TestChain& chain,
                                  const ChainExample& example,
                                  const std::vector<int32_t>& y) {
  const ChainLayout& layout = chain.layout;
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
  const FeatureSequence& z = example.pair_features;
  for (int t = 1; layout.num_pair_rows > 0 && t < f.size(); ++t) {
    // First order: every label pair has its column (a·L + b).
    const int p = chain.structure != nullptr
                      ? chain.structure->pair_index(y[t - 1], y[t])
                      : y[t - 1] * L + y[t];
    if (p < 0) continue;
    for (int k = z.offsets[t]; k < z.offsets[t + 1]; ++k) {
      phi[layout.pair_emission_offset() + z.buckets[k] * layout.num_pairs +
          p] += z.values[k];
    }
  }
  if (chain.structure == nullptr) return phi;
  const SecondOrderStructure& structure = *chain.structure;
  for (int t = 2; t < f.size(); ++t) {
    const int k = structure.trigram_index(y[t - 2], y[t - 1], y[t]);
    if (k >= 0) phi[layout.trigram_offset() + k] += 1;
  }
  return phi;
}

std::vector<double> DensePsi(const TestChain& chain,
                             const ChainExample& example,
                             const std::vector<int32_t>& y) {
  std::vector<double> psi = DenseFeatures(chain, example, example.labels);
  const std::vector<double> phi = DenseFeatures(chain, example, y);
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
  for (Model model : kModels) {
    for (int L = 1; L <= 4; ++L) {
      SCOPED_TRACE(testing::Message()
                   << "model " << static_cast<int>(model) << " L " << L);
      const TestChain chain = MakeTestChain(L, model, 8, &rng);
      const ChainLayout& layout = chain.layout;
      const std::vector<ChainExample>& examples = chain.examples;
      const std::unique_ptr<ChainProblem> owned = chain.Problem(normalize);
      const ChainProblem& problem = *owned;
      std::normal_distribution<double> normal(0, 1);
      std::vector<double> w(layout.dim());
      for (double& x : w) x = normal(rng);
      for (int i = 0; i < problem.NumExamples(); ++i) {
        const ChainExample& example = examples[i];
        const int T = example.labels.size();
        const double unit = normalize ? 1.0 / T : 1.0;
        double best_augmented = -1e300, best_score = -1e300;
        ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
          if (!chain.Allowed(y)) return;
          int wrong = 0;
          for (int t = 0; t < T; ++t) wrong += y[t] != example.labels[t];
          const double psi_dot = Dot(w, DensePsi(chain, example, y));
          EXPECT_NEAR(problem.Score(i, w.data(), y), psi_dot, 1e-9);
          EXPECT_DOUBLE_EQ(problem.Loss(i, y), wrong * unit);
          best_augmented = std::max(best_augmented, wrong * unit - psi_dot);
          best_score =
              std::max(best_score, Dot(w, DenseFeatures(chain, example, y)));
        });
        OracleResult result;
        problem.MaxOracle(i, w.data(), &result);
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
        EXPECT_NEAR(Dot(w, DenseFeatures(chain, example, decoded)), best_score,
                    1e-9);
        EXPECT_TRUE(chain.Allowed(result.corner));
        EXPECT_TRUE(chain.Allowed(decoded));
      }
    }
  }
}

void CheckBlockStateAlgebra(Model model, Values kind, bool normalize_loss);

TEST_P(ChainProblemTest, BlockStateAlgebraMatchesDenseVectors) {
  for (Model model : kModels) {
    for (Values kind : {Values::kReal, Values::kInteger, Values::kDyadic}) {
      SCOPED_TRACE(testing::Message() << "model " << static_cast<int>(model)
                                      << " values " << static_cast<int>(kind));
      CheckBlockStateAlgebra(model, kind, GetParam());
    }
  }
}

void CheckBlockStateAlgebra(Model model, Values kind, bool normalize_loss) {
  std::mt19937 rng(5);
  const int L = OrderOf(model) == 1 ? 3 : 4;
  const TestChain chain =
      MakeTestChain(L, model, 6, &rng, /*max_length=*/5, kind);
  const ChainLayout& layout = chain.layout;
  const std::vector<ChainExample>& examples = chain.examples;
  const std::unique_ptr<ChainProblem> owned = chain.Problem(normalize_loss);
  const ChainProblem& problem = *owned;
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
      // Corners are allowed labelings (kFirstAllowed draws again).
      do {
        for (int32_t& label_t : y) label_t = label(rng);
      } while (model == Model::kFirstAllowed && !chain.Allowed(y));
      const std::vector<double> psi = DensePsi(chain, example, y);
      OracleResult result;
      problem.MaxOracleWithStateDot(i, w.data(), state.data(), &result);
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
      // The updates write only inside the block's touched ranges, as do
      // their encodings (a mini-batch round merges by those ranges).
      {
        std::vector<CoordinateRange> ranges;
        problem.TouchedRanges(i, &ranges);
        std::vector<char> touched(layout.dim(), 0);
        for (const CoordinateRange& range : ranges) {
          std::fill_n(touched.begin() + range.begin, range.length, 1);
        }
        std::vector<double> scaled_only(layout.dim(), 0.0);
        problem.AddScaled(i, y, c, scaled_only.data());
        for (size_t j = 0; j < w.size(); ++j) {
          if (touched[j]) continue;
          ASSERT_EQ(moved[j], w[j]) << "coordinate " << j;
          ASSERT_EQ(scaled_only[j], 0.0) << "coordinate " << j;
        }
        // The encoded updates add the same, inside the touched ranges.
        BlockUpdate encoded_move, encoded_scaled;
        problem.EncodeCornerMinusState(i, y, state.data(), c, &encoded_move);
        problem.EncodeScaled(i, y, c, &encoded_scaled);
        std::vector<double> decoded = w;
        AddBlockUpdate(encoded_move, decoded.data());
        std::vector<double> decoded_scaled(layout.dim(), 0.0);
        AddBlockUpdate(encoded_scaled, decoded_scaled.data());
        for (size_t j = 0; j < w.size(); ++j) {
          ASSERT_NEAR(decoded[j], moved[j], 1e-12) << "coordinate " << j;
          ASSERT_NEAR(decoded_scaled[j], scaled_only[j], 1e-12)
              << "coordinate " << j;
        }
        // The same update in slices of w split at granularity slots (the
        // tail in the last), or anywhere: every coordinate gets the same
        // arithmetic, and each slice writes only its own coordinates.
        const int64_t granularity = RangeGranularity(problem);
        ASSERT_EQ(RangeGranularity(problem, 3), granularity);
        const int64_t slots = layout.dim() / granularity;
        for (int64_t at :
             {int64_t{0}, slots / 3 * granularity, slots / 2 * granularity,
              (slots - 1) * granularity, layout.dim() - 1,
              layout.transition_offset() + 1, layout.dim() / 2 + 1}) {
          const int64_t split = at / granularity;
          std::vector<double> sliced = w;
          problem.AddCornerMinusStateInSlice(i, y, state.data(), c, 0, at,
                                             sliced.data());
          for (int64_t j = at; j < layout.dim(); ++j) {
            ASSERT_EQ(sliced[j], w[j]) << "split at " << at << ", " << j;
          }
          problem.AddCornerMinusStateInSlice(i, y, state.data(), c, at,
                                             layout.dim(), sliced.data());
          for (int64_t j = 0; j < at; ++j) {
            ASSERT_EQ(sliced[j], moved[j]) << "split at " << at << ", " << j;
          }
          ASSERT_EQ(sliced, moved)
              << "split at " << at << " (slot " << split << ")";
        }
        for (const BlockUpdate* update : {&encoded_move, &encoded_scaled}) {
          for (size_t j = 0; j < update->targets.size(); ++j) {
            const int64_t length = update->VectorLength(update->vectors[j]);
            for (int64_t x = 0; x < length; ++x) {
              ASSERT_TRUE(touched[update->targets[j] + x]);
            }
          }
        }
      }
      std::vector<double> scaled = w;
      problem.AddScaled(i, y, c, scaled.data());
      for (size_t j = 0; j < w.size(); ++j) {
        ASSERT_NEAR(scaled[j], w[j] + c * psi[j], 1e-9);
      }
      // The active-set operations: several corners scored at once, the
      // distance between two corners, and an affine move of the state.
      Corner other(T);
      do {
        for (int32_t& label_t : other) label_t = label(rng);
      } while (model == Model::kFirstAllowed && !chain.Allowed(other));
      const std::vector<double> other_psi = DensePsi(chain, example, other);
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
      problem.MaxOracleWithStateDot(i, w.data(), state.data(), &separate);
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
      EXPECT_EQ(problem.CornerDistanceSquared(i, y, y), 0);
      // A pairwise step's change of w, from the positions that differ.
      std::vector<double> pairwise = w;
      problem.AddCornerDifference(i, y, other, c, pairwise.data());
      for (size_t j = 0; j < w.size(); ++j) {
        ASSERT_NEAR(pairwise[j], w[j] + c * (psi[j] - other_psi[j]), 1e-9)
            << "coordinate " << j;
      }
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
// A cache's corners and a state mixed from them touch a few of many labels
// a position: ScoreCorners then scores only those labels, and must give what
// the dense vectors give.
TEST_P(ChainProblemTest, CornerScoresFromAFewLabelsMatchBruteForce) {
  for (Model model : kModels) {
    SCOPED_TRACE(testing::Message() << "model " << static_cast<int>(model));
    std::mt19937 rng(17);
    const int L = OrderOf(model) == 1 ? 12 : 9;
    const TestChain chain = MakeTestChain(L, model, 8, &rng, /*max_length=*/7);
    const std::unique_ptr<ChainProblem> problem = chain.Problem(GetParam());
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> w(chain.layout.dim());
    for (double& x : w) x = normal(rng);
    for (int i = 0; i < problem->NumExamples(); ++i) {
      const ChainExample& example = chain.examples[i];
      OracleResult oracle;
      problem->MaxOracle(i, w.data(), &oracle);
      Corner decoded;
      problem->Decode(i, w.data(), &decoded);
      std::vector<double> state(problem->BlockStateSize(i));
      problem->InitBlockState(i, state.data());
      std::vector<double> v(chain.layout.dim(), 0.0);
      const std::vector<double> psi_oracle =
          DensePsi(chain, example, oracle.corner);
      const std::vector<double> psi_decoded = DensePsi(chain, example, decoded);
      problem->MixCorner(i, oracle.corner, 0.5, state.data());
      problem->MixCorner(i, decoded, 0.25, state.data());
      for (size_t j = 0; j < v.size(); ++j) {
        v[j] = 0.75 * 0.5 * psi_oracle[j] + 0.25 * psi_decoded[j];
      }
      const Corner* corners[] = {&oracle.corner, &decoded};
      double scores[2], state_dot = 0;
      problem->ScoreCorners(i, w.data(), state.data(), corners, 2, scores,
                            &state_dot);
      EXPECT_NEAR(scores[0], Dot(w, psi_oracle), 1e-9);
      EXPECT_NEAR(scores[1], Dot(w, psi_decoded), 1e-9);
      EXPECT_NEAR(state_dot, Dot(v, w), 1e-9);
      // The same as the scores from all labels' unary scores.
      double dense_scores[2];
      OracleResult fused;
      problem->ScoreCornersAndMaxOracle(i, w.data(), state.data(), corners, 2,
                                        dense_scores, &fused);
      EXPECT_NEAR(scores[0], dense_scores[0], 1e-12);
      EXPECT_NEAR(scores[1], dense_scores[1], 1e-12);
      EXPECT_NEAR(state_dot, fused.state_dot, 1e-12);
    }
  }
}

// ⟨v_i, w⟩ reads only the tail entries of the labelings a state mixes
// when they are few, and all of the tail when they are many: both must give
// the dense product. The labelings are the decoder's under random w, so
// that they are allowed at second order.
// A state mixed from a few labelings takes the sparse paths (a few labels
// a position, the tail entries they can form); one from many, the dense.
TEST_P(ChainProblemTest, StateAlgebraMatchesBruteForceForFewAndManyLabelings) {
  for (Model model : kModels) {
    const int L = OrderOf(model) == 1 ? 20 : 12;
    for (int mixed : {1, 3, 40}) {
      SCOPED_TRACE(testing::Message() << "model " << static_cast<int>(model)
                                      << ", " << mixed << " labelings");
      std::mt19937 rng(23);
      const TestChain chain =
          MakeTestChain(L, model, 6, &rng, /*max_length=*/7);
      const std::unique_ptr<ChainProblem> problem = chain.Problem(GetParam());
      std::normal_distribution<double> normal(0, 1);
      std::vector<double> w(chain.layout.dim()), u(chain.layout.dim());
      for (double& x : w) x = normal(rng);
      for (int i = 0; i < problem->NumExamples(); ++i) {
        const ChainExample& example = chain.examples[i];
        std::vector<double> state(problem->BlockStateSize(i));
        problem->InitBlockState(i, state.data());
        std::vector<double> v = DensePsi(chain, example, example.labels);
        // The state as a mixture: labelings and their weights.
        std::vector<Corner> labelings = {example.labels};
        std::vector<double> weights = {1.0};
        for (int k = 1; k <= mixed; ++k) {
          for (double& x : u) x = normal(rng);
          Corner y;
          problem->Decode(i, u.data(), &y);
          const double gamma = 1.0 / (k + 1);
          problem->MixCorner(i, y, gamma, state.data());
          for (double& weight : weights) weight *= 1 - gamma;
          labelings.push_back(y);
          weights.push_back(gamma);
          const std::vector<double> psi = DensePsi(chain, example, y);
          for (size_t j = 0; j < v.size(); ++j) {
            v[j] = (1 - gamma) * v[j] + gamma * psi[j];
          }
        }
        double state_dot = 0;
        problem->ScoreCorners(i, w.data(), state.data(), nullptr, 0, nullptr,
                              &state_dot);
        EXPECT_NEAR(state_dot, Dot(v, w), 1e-9);
        std::vector<double> scaled = state;
        problem->ScaleBlockState(i, 0.3, scaled.data());
        for (size_t k = 0; k < state.size(); ++k) {
          ASSERT_NEAR(scaled[k], 0.3 * state[k], 1e-15) << k;
        }
        // A labeling the state holds (the last mixed) and, most likely, one
        // it does not.
        for (double& x : u) x = normal(rng);
        Corner other;
        problem->Decode(i, u.data(), &other);
        for (const Corner& y : {other, example.labels}) {
          const std::vector<double> psi = DensePsi(chain, example, y);
          double distance = 0;
          for (size_t j = 0; j < v.size(); ++j) {
            distance += (v[j] - psi[j]) * (v[j] - psi[j]);
          }
          EXPECT_NEAR(problem->StateDistanceSquared(i, state.data(), y),
                      distance, 1e-9);
          std::vector<double> moved = w, mixture_moved = w;
          problem->AddCornerMinusState(i, y, state.data(), 0.7, moved.data());
          std::vector<const Corner*> pointers;
          for (const Corner& labeling : labelings)
            pointers.push_back(&labeling);
          problem->AddCornerMinusMixture(
              i, y, state.data(), pointers.data(), weights.data(),
              static_cast<int>(pointers.size()), 0.7, mixture_moved.data());
          for (size_t j = 0; j < w.size(); ++j) {
            ASSERT_NEAR(moved[j], w[j] + 0.7 * (psi[j] - v[j]), 1e-9) << j;
            ASSERT_NEAR(mixture_moved[j], moved[j], 1e-9) << j;
          }
        }
      }
    }
  }
}

// The Gram matrices are built at the first distance asked for: threads
// asking at once on a fresh problem get the distances that a problem asked
// from one thread gives, bit for bit.
TEST_P(ChainProblemTest, DistancesAskedConcurrentlyFirstMatchSerial) {
  for (Model model : kModels) {
    SCOPED_TRACE(static_cast<int>(model));
    std::mt19937 rng(29);
    const TestChain chain = MakeTestChain(6, model, 40, &rng, /*max_length=*/9);
    const std::unique_ptr<ChainProblem> serial = chain.Problem(GetParam());
    const std::unique_ptr<ChainProblem> fresh = chain.Problem(GetParam());
    const int n = serial->NumExamples();
    std::vector<std::vector<double>> states(n);
    std::vector<Corner> others(n);
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> u(chain.layout.dim());
    for (int i = 0; i < n; ++i) {
      states[i].resize(serial->BlockStateSize(i));
      serial->InitBlockState(i, states[i].data());
      for (double& x : u) x = normal(rng);
      serial->Decode(i, u.data(), &others[i]);
      serial->MixCorner(i, others[i], 0.4, states[i].data());
      for (double& x : u) x = normal(rng);
      serial->Decode(i, u.data(), &others[i]);
    }
    std::vector<double> expected(n), concurrent(n);
    for (int i = 0; i < n; ++i) {
      expected[i] =
          serial->StateDistanceSquared(i, states[i].data(), others[i]);
    }
    std::vector<std::thread> threads;
    for (int part = 0; part < 4; ++part) {
      threads.emplace_back([&, part] {
        for (int i = part; i < n; i += 4) {
          concurrent[i] =
              fresh->StateDistanceSquared(i, states[i].data(), others[i]);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(concurrent[i], expected[i]) << i;
    }
    EXPECT_GT(*std::max_element(expected.begin(), expected.end()), 0);
  }
}

// With step helpers lent to the thread, a many-label sentence's unary
// scores are computed in parts on the helpers: the oracles give the same
// bits as on one thread.
TEST_P(ChainProblemTest, UnaryScoresSplitOverStepHelpersGiveTheSameBits) {
  for (Model model : {Model::kFirst, Model::kFirstWithPairs}) {
    SCOPED_TRACE(static_cast<int>(model));
    std::mt19937 rng(31);
    const TestChain chain =
        MakeTestChain(130, model, 8, &rng, /*max_length=*/16);
    const std::unique_ptr<ChainProblem> problem = chain.Problem(GetParam());
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> w(chain.layout.dim());
    for (double& x : w) x = normal(rng);
    StepHelpers helpers(3);
    const int n = problem->NumExamples();
    // All split first: each call's scratch then holds another sentence's
    // scores, so a position the split missed would show.
    std::vector<OracleResult> split(n), alone(n);
    {
      StepHelpers::Lend lend(&helpers);
      for (int i = 0; i < n; ++i) problem->MaxOracle(i, w.data(), &split[i]);
    }
    for (int i = 0; i < n; ++i) problem->MaxOracle(i, w.data(), &alone[i]);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(split[i].corner, alone[i].corner) << i;
      EXPECT_EQ(split[i].score, alone[i].score) << i;
      EXPECT_EQ(split[i].loss, alone[i].loss) << i;
    }
  }
}

// Few allowed transitions (at most a quarter of the L² pairs, where the
// forward–backward reads them by their lists and writes the state's tail in
// their order, ForwardBackward::ComputeListed): the entropy-smoothed value,
// gradient and state dot are the brute-force ones over the allowed
// labelings.
TEST_P(ChainProblemTest, EntropyOverFewAllowedTransitionsMatchesBruteForce) {
  std::mt19937 rng(17);
  const int L = 10;
  TestChain chain = MakeTestChain(L, Model::kFirst, 5, &rng, 3);
  chain.allowed.assign(L * L, 0);
  for (int a = 0; a < L; ++a) chain.allowed[a * L + (a + 3) % L] = 1;
  for (const ChainExample& example : chain.examples) {
    for (size_t t = 1; t < example.labels.size(); ++t) {
      chain.allowed[example.labels[t - 1] * L + example.labels[t]] = 1;
    }
  }
  int pairs = 0;
  for (uint8_t allowed : chain.allowed) pairs += allowed;
  ASSERT_LE(4 * pairs, L * L);
  const std::unique_ptr<ChainProblem> problem = chain.Problem(GetParam());
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> w(chain.layout.dim());
  for (double& x : w) x = normal(rng);
  for (int i = 0; i < problem->NumExamples(); ++i) {
    const ChainExample& example = chain.examples[i];
    std::vector<double> h;
    std::vector<std::vector<double>> minus_psi;
    ForEachLabeling(example.labels.size(), L,
                    [&](const std::vector<int32_t>& y) {
                      if (!chain.Allowed(y)) return;
                      std::vector<double> psi = DensePsi(chain, example, y);
                      h.push_back(problem->Loss(i, y) - Dot(w, psi));
                      for (double& x : psi) x = -x;
                      minus_psi.push_back(psi);
                    });
    const double top = *std::max_element(h.begin(), h.end());
    for (const double mu : {0.5, 2.0}) {
      SCOPED_TRACE(testing::Message() << "example " << i << " μ " << mu);
      std::vector<double> q(h.size());
      double z = 0;
      for (size_t k = 0; k < h.size(); ++k) {
        q[k] = std::exp((h[k] - top) / mu);
        z += q[k];
      }
      std::vector<double> expected(chain.layout.dim(), 0.0);
      for (size_t k = 0; k < h.size(); ++k) {
        for (size_t j = 0; j < expected.size(); ++j) {
          expected[j] += q[k] / z * minus_psi[k][j];
        }
      }
      const Smoothing smoothing{Smoothing::Kind::kEntropy, mu, 1};
      std::vector<double> state(problem->BlockStateSize(i));
      double state_dot = 0;
      EXPECT_NEAR(problem->SmoothedOracleWithStateDot(i, w.data(), smoothing,
                                                      state.data(), &state_dot),
                  top + mu * std::log(z), 1e-9);
      EXPECT_NEAR(state_dot, problem->StateDot(i, state.data(), w.data()),
                  1e-9);
      std::vector<double> gradient(chain.layout.dim(), 0.0);
      problem->AddCornerMinusState(i, example.labels, state.data(), 1.0,
                                   gradient.data());
      for (size_t j = 0; j < expected.size(); ++j) {
        EXPECT_NEAR(gradient[j], expected[j], 1e-9) << "coordinate " << j;
      }
    }
  }
}

// From kPipelineLabels labels with listed transitions, a thread lent step
// helpers runs the max oracle as a pipeline (the helpers' unary scores
// feeding one thread's decoder): the same corners, scores, losses, state dots
// and corner scores, bit for bit, as one thread alone, with the loss and
// without (loss scale 0).
TEST_P(ChainProblemTest, PipelinedOracleGivesTheSameBits) {
  std::mt19937 rng(43);
  const TestChain chain = MakeTestChain(130, Model::kFirstAllowed, 12, &rng,
                                        /*max_length=*/40);
  int long_enough = 0;
  for (const ChainExample& example : chain.examples) {
    long_enough += example.labels.size() >= 8;
  }
  ASSERT_GE(long_enough, 6);
  const std::unique_ptr<ChainProblem> problem = chain.Problem(GetParam());
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> w(chain.layout.dim());
  for (double& x : w) x = normal(rng);
  const int n = problem->NumExamples();
  // A state and two corners per sentence: the gold labeling's state mixed
  // with another labeling's, which the oracle's state dot reads.
  std::vector<std::vector<double>> states(n);
  std::vector<Corner> others(n);
  for (int i = 0; i < n; ++i) {
    states[i].assign(problem->BlockStateSize(i), 0.0);
    problem->InitBlockState(i, states[i].data());
    OracleResult first;
    problem->MaxOracle(i, w.data(), &first);
    others[i] = first.corner;
    problem->ScaleBlockState(i, 0.75, states[i].data());
    problem->AddCornerToState(i, others[i], 0.25, states[i].data());
  }
  for (const double loss_scale : {1.0, 0.0}) {
    problem->set_loss_scale(loss_scale);
    for (const int threads : {2, 3}) {
      SCOPED_TRACE(testing::Message() << loss_scale << " " << threads);
      StepHelpers helpers(threads);
      std::vector<OracleResult> lent(n), alone(n);
      std::vector<double> lent_scores(2 * n), alone_scores(2 * n);
      auto run = [&](std::vector<OracleResult>* results,
                     std::vector<double>* scores) {
        for (int i = 0; i < n; ++i) {
          const Corner* corners[2] = {&problem->GoldCorner(i), &others[i]};
          problem->ScoreCornersAndMaxOracle(i, w.data(), states[i].data(),
                                            corners, 2, scores->data() + 2 * i,
                                            &(*results)[i]);
        }
      };
      {
        StepHelpers::Lend lend(&helpers);
        run(&lent, &lent_scores);
      }
      run(&alone, &alone_scores);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(lent[i].corner, alone[i].corner) << i;
        EXPECT_EQ(lent[i].score, alone[i].score) << i;
        EXPECT_EQ(lent[i].loss, alone[i].loss) << i;
        EXPECT_EQ(lent[i].state_dot, alone[i].state_dot) << i;
      }
      EXPECT_EQ(lent_scores, alone_scores);
    }
  }
}

// With loss scale 0, the entropy-smoothed oracle at mu = 1 is the CRF's
// negative log-likelihood log sum_y exp <w, phi(y)> - <w, phi(y_i)>, over
// the labelings the model allows, and its state gives the gradient
// E_p phi(y) - phi(y_i) under p(y) ~ exp <w, phi(y)>; the max oracle is
// plain decoding. Checked against every labeling, written out with phi
// alone (no loss, no psi).
TEST_P(ChainProblemTest, CrfLogLossAndGradientMatchBruteForce) {
  const bool normalize = GetParam();
  std::mt19937 rng(17);
  for (Model model : kModels) {
    const int model_order = OrderOf(model);
    for (int L = 1; L <= (model_order == 1 ? 3 : 4); ++L) {
      const TestChain chain = MakeTestChain(L, model, 5, &rng, 4);
      const std::unique_ptr<ChainProblem> problem = chain.Problem(normalize);
      problem->set_loss_scale(0);
      std::normal_distribution<double> normal(0, 1);
      std::vector<double> w(chain.layout.dim());
      for (double& x : w) x = normal(rng);
      for (int i = 0; i < problem->NumExamples(); ++i) {
        SCOPED_TRACE(testing::Message() << "model " << static_cast<int>(model)
                                        << " L " << L << " example " << i);
        const ChainExample& example = chain.examples[i];
        const int T = example.labels.size();
        std::vector<double> scores;
        std::vector<std::vector<double>> features;
        ForEachLabeling(T, L, [&](const std::vector<int32_t>& y) {
          if (!chain.Allowed(y)) return;
          features.push_back(DenseFeatures(chain, example, y));
          scores.push_back(Dot(w, features.back()));
          EXPECT_EQ(problem->Loss(i, y), 0);
        });
        const double top = *std::max_element(scores.begin(), scores.end());
        double z = 0;
        for (double score : scores) z += std::exp(score - top);
        const std::vector<double> gold =
            DenseFeatures(chain, example, example.labels);
        const double expected = top + std::log(z) - Dot(w, gold);
        std::vector<double> gradient(w.size(), 0.0);
        for (size_t k = 0; k < scores.size(); ++k) {
          const double p = std::exp(scores[k] - top) / z;
          for (size_t j = 0; j < w.size(); ++j) {
            gradient[j] += p * (features[k][j] - gold[j]);
          }
        }
        std::vector<double> state(problem->BlockStateSize(i));
        const double value = problem->SmoothedOracle(
            i, w.data(), Smoothing{Smoothing::Kind::kEntropy, 1.0, 1},
            state.data());
        EXPECT_NEAR(value, expected, 1e-9);
        // The duality gap's identity (solvers/duality_gap.h): f_i(w) plus
        // <w, v_i> is the entropy of p (its loss term is 0 here).
        double entropy = 0;
        for (double score : scores) {
          const double p = std::exp(score - top) / z;
          entropy -= p * std::log(p);
        }
        EXPECT_NEAR(value + problem->StateDot(i, state.data(), w.data()),
                    entropy, 1e-9);
        // The same from the oracle's own scores.
        std::vector<double> same_state(state.size());
        double state_dot = 0;
        EXPECT_EQ(problem->SmoothedOracleWithStateDot(
                      i, w.data(), Smoothing{Smoothing::Kind::kEntropy, 1.0, 1},
                      same_state.data(), &state_dot),
                  value);
        EXPECT_EQ(same_state, state);
        EXPECT_NEAR(value + state_dot, entropy, 1e-9);
        // w += c*grad f through the state (problem.h's contract).
        std::vector<double> from_state(w.size(), 0.0);
        problem->AddCornerMinusState(i, problem->GoldCorner(i), state.data(),
                                     1.0, from_state.data());
        for (size_t j = 0; j < w.size(); ++j) {
          EXPECT_NEAR(from_state[j], gradient[j], 1e-9) << "coordinate " << j;
        }
        OracleResult oracle;
        problem->MaxOracle(i, w.data(), &oracle);
        Corner decoded;
        problem->Decode(i, w.data(), &decoded);
        EXPECT_EQ(oracle.corner, decoded);
        EXPECT_EQ(oracle.loss, 0);
      }
    }
  }
}

TEST_P(ChainProblemTest, SmoothedOraclesMatchBruteForce) {
  const bool normalize = GetParam();
  std::mt19937 rng(5);
  for (Model model : kModels) {
    const int model_order = OrderOf(model);
    for (int L = 1; L <= (model_order == 1 ? 3 : 4); ++L) {
      const TestChain chain = MakeTestChain(L, model, 6, &rng, 4);
      const ChainLayout& layout = chain.layout;
      const std::vector<ChainExample>& examples = chain.examples;
      const std::unique_ptr<ChainProblem> owned = chain.Problem(normalize);
      const ChainProblem& problem = *owned;
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
          if (!chain.Allowed(y)) return;
          std::vector<double> psi = DensePsi(chain, example, y);
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
                           << "model " << static_cast<int>(model) << " L " << L
                           << " example " << i << " μ " << mu << " K " << top_k
                           << " kind " << static_cast<int>(kind));
              const Smoothing smoothing{kind, mu, top_k};
              std::vector<double> state(problem.BlockStateSize(i));
              const double value =
                  problem.SmoothedOracle(i, w.data(), smoothing, state.data());
              const bool l2 = kind == Smoothing::Kind::kTopKL2;
              EXPECT_NEAR(value, l2 ? expected_l2 : expected_entropy, 1e-9);
              // With the state's dot product from the oracle's scores: the
              // loss-augmented scores are put back before it is taken.
              std::vector<double> same_state(state.size());
              double state_dot = 0;
              EXPECT_EQ(
                  problem.SmoothedOracleWithStateDot(
                      i, w.data(), smoothing, same_state.data(), &state_dot),
                  value);
              EXPECT_EQ(same_state, state);
              EXPECT_NEAR(state_dot,
                          problem.StateDot(i, state.data(), w.data()), 1e-9);
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
                EXPECT_NEAR(gradient[j], expected[j], 1e-9)
                    << "coordinate " << j;
              }
            }
          }
        }
        // μ → 0 recovers the max oracle, and kNone is the max oracle.
        OracleResult result;
        problem.MaxOracle(i, w.data(), &result);
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
            problem.SmoothedOracle(i, moved.data(), entropy,
                                   moved_state.data()),
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
}

INSTANTIATE_TEST_SUITE_P(NormalizedAndNot, ChainProblemTest, ::testing::Bool());

// Restricted to the labels each row is seen with, a problem's free
// coordinates are the (row, gold label) pairs of the training positions,
// then every pair-row and tail coordinate; unrestricted, none are listed.
TEST(ObservedStatesTest, FreeCoordinatesAreTheRowsGoldLabels) {
  std::mt19937 rng(29);
  for (Model model : kModels) {
    SCOPED_TRACE(testing::Message() << "model " << static_cast<int>(model));
    const TestChain chain = MakeTestChain(4, model, 6, &rng);
    const std::unique_ptr<ChainProblem> problem = chain.Problem(true);
    std::vector<int64_t> free = {-1};
    EXPECT_FALSE(problem->FreeCoordinates(&free));
    EXPECT_EQ(free, std::vector<int64_t>{-1});
    ASSERT_TRUE(problem->RestrictEmissionsToObservedLabels().ok());
    const ChainLayout& layout = chain.layout;
    std::vector<bool> expected(layout.dim(), false);
    for (const ChainExample& example : chain.examples) {
      const FeatureSequence& f = example.features;
      for (int t = 0; t < f.size(); ++t) {
        for (int32_t k = f.offsets[t]; k < f.offsets[t + 1]; ++k) {
          expected[f.buckets[k] * layout.num_labels + example.labels[t]] = true;
        }
      }
    }
    for (int64_t j = layout.emission_size(); j < layout.dim(); ++j) {
      expected[j] = true;
    }
    std::vector<int64_t> listed;
    for (int64_t j = 0; j < layout.dim(); ++j) {
      if (expected[j]) listed.push_back(j);
    }
    ASSERT_TRUE(problem->FreeCoordinates(&free));
    EXPECT_EQ(free, listed);
    EXPECT_TRUE(problem->FreeCoordinates(nullptr));
    EXPECT_LT(static_cast<int64_t>(free.size()), layout.dim());
  }
}

// A small chain of each kind, as a problem restricted to the labels each
// attribute is seen with (and its free coordinates) and unrestricted.
struct ObservedChain {
  Model model;
  TestChain chain;
  std::unique_ptr<ChainProblem> unrestricted;
  std::unique_ptr<ChainProblem> problem;
  std::vector<int64_t> free;
};

ObservedChain MakeObservedChain(Model model, std::mt19937* rng) {
  ObservedChain observed;
  observed.model = model;
  const int L = OrderOf(model) == 1 ? 6 : 4;
  observed.chain = MakeTestChain(L, model, 6, rng, /*max_length=*/7);
  observed.unrestricted = observed.chain.Problem(true);
  observed.problem = observed.chain.Problem(true);
  EXPECT_TRUE(observed.problem->RestrictEmissionsToObservedLabels().ok());
  observed.problem->FreeCoordinates(&observed.free);
  return observed;
}

// body(observed, rng) for a chain of each kind (MakeObservedChain), all
// drawn from one generator seeded `seed`, which body draws from too.
template <typename Body>
void ForEachObservedChain(uint32_t seed, const Body& body) {
  std::mt19937 rng(seed);
  for (Model model : kModels) {
    SCOPED_TRACE(testing::Message() << "model " << static_cast<int>(model));
    const ObservedChain observed = MakeObservedChain(model, &rng);
    ASSERT_FALSE(observed.free.empty());
    body(observed, rng);
  }
}

// Summed at the free coordinates alone, a gradient is the dense one's at
// them, bit for bit, whole or in slices of the free list cut anywhere; it
// matches Problem's default through a vector of all of w, and unrestricted
// it is AddCornerMinusStateInSlice.
TEST(ObservedStatesTest, GradientsAtTheFreeCoordinatesAreTheDenseOnes) {
  std::normal_distribution<double> normal(0, 1);
  ForEachObservedChain(
      31, [&](const ObservedChain& observed, std::mt19937& rng) {
        const auto& [model, chain, unrestricted, problem, free] = observed;
        const int L = chain.layout.num_labels;
        const int64_t size = static_cast<int64_t>(free.size());
        const int64_t dim = chain.layout.dim();
        std::uniform_int_distribution<int> label(0, L - 1);
        for (int i = 0; i < problem->NumExamples(); ++i) {
          // A state mixing the gold labeling and two others.
          std::vector<double> state(problem->BlockStateSize(i));
          problem->InitBlockState(i, state.data());
          for (double gamma : {0.5, 0.25}) {
            Corner y(chain.examples[i].labels.size());
            do {
              for (int32_t& label_t : y) label_t = label(rng);
            } while (model == Model::kFirstAllowed && !chain.Allowed(y));
            problem->MixCorner(i, y, gamma, state.data());
          }
          const Corner& gold = problem->GoldCorner(i);
          const double c = normal(rng);
          std::vector<double> dense(dim, 0.0);
          problem->AddCornerMinusState(i, gold, state.data(), c, dense.data());
          std::vector<double> expected(size);
          for (int64_t k = 0; k < size; ++k) expected[k] = dense[free[k]];
          std::vector<double> whole(size, 0.0);
          problem->AddCornerMinusStateAtFree(i, gold, state.data(), c, 0, size,
                                             whole.data());
          ASSERT_EQ(whole, expected);
          std::vector<double> by_default(size, 0.0);
          problem->Problem::AddCornerMinusStateAtFree(
              i, gold, state.data(), c, 0, size, by_default.data());
          ASSERT_EQ(by_default, expected);
          for (int64_t split : {int64_t{1}, size / 3, size / 2, size - 1}) {
            std::vector<double> sliced(size, 0.0);
            problem->AddCornerMinusStateAtFree(i, gold, state.data(), c, split,
                                               size, sliced.data());
            problem->AddCornerMinusStateAtFree(i, gold, state.data(), c, 0,
                                               split, sliced.data());
            ASSERT_EQ(sliced, expected) << "split at " << split;
          }
          std::vector<double> in_slice(dim, 0.0), at_free(dim, 0.0);
          unrestricted->AddCornerMinusStateInSlice(i, gold, state.data(), c, 0,
                                                   dim / 2, in_slice.data());
          unrestricted->AddCornerMinusStateAtFree(i, gold, state.data(), c, 0,
                                                  dim / 2, at_free.data());
          ASSERT_EQ(at_free, in_slice);
        }
      });
}

// A block's ranges at the free coordinates are the free entries of its
// ranges in all of w, parts of one partition (two blocks' ranges equal or
// disjoint), empty rows left out; unrestricted they are TouchedRanges.
TEST(ObservedStatesTest, TouchedRangesAtFreeAreTheFreeEntriesOfTheDenseOnes) {
  ForEachObservedChain(41, [&](const ObservedChain& observed, std::mt19937&) {
    const auto& [model, chain, unrestricted, problem, free] = observed;
    const int64_t size = static_cast<int64_t>(free.size());
    std::map<int64_t, int64_t> partition;  // begin -> length, every block's
    for (int i = 0; i < problem->NumExamples(); ++i) {
      std::vector<CoordinateRange> dense, at_free;
      problem->TouchedRanges(i, &dense);
      problem->TouchedRangesAtFree(i, &at_free);
      std::vector<char> expected(size, 0), covered(size, 0);
      for (const CoordinateRange& range : dense) {
        for (int64_t k = 0; k < size; ++k) {
          if (free[k] >= range.begin && free[k] < range.begin + range.length) {
            expected[k] = 1;
          }
        }
      }
      for (const CoordinateRange& range : at_free) {
        ASSERT_GT(range.length, 0);
        ASSERT_GE(range.begin, 0);
        ASSERT_LE(range.begin + range.length, size);
        auto [at, inserted] = partition.emplace(range.begin, range.length);
        ASSERT_EQ(at->second, range.length) << "at " << range.begin;
        for (int64_t k = range.begin; k < range.begin + range.length; ++k) {
          covered[k] = 1;
        }
      }
      ASSERT_EQ(covered, expected) << "example " << i;
      std::vector<CoordinateRange> plain, plain_at_free;
      unrestricted->TouchedRanges(i, &plain);
      unrestricted->TouchedRangesAtFree(i, &plain_at_free);
      ASSERT_EQ(plain_at_free.size(), plain.size());
      for (size_t r = 0; r < plain.size(); ++r) {
        ASSERT_EQ(plain_at_free[r].begin, plain[r].begin);
        ASSERT_EQ(plain_at_free[r].length, plain[r].length);
      }
    }
    int64_t end = 0;
    for (const auto& [begin, length] : partition) {
      ASSERT_GE(begin, end) << "ranges overlap at " << begin;
      end = begin + length;
    }
  });
}

// The smoothed oracles at the free coordinates alone read the emission rows
// at their free labels: value, state and state dot are the bits of the
// oracle at the dense point with 0 elsewhere, for every chain kind and
// smoothing, by ChainProblem's reading and by Problem's default; without
// free coordinates free_w is w.
TEST(ObservedStatesTest, OraclesAtTheFreeCoordinatesAreTheDenseOnes) {
  std::normal_distribution<double> normal(0, 1);
  ForEachObservedChain(37, [&](const ObservedChain& observed,
                               std::mt19937& rng) {
    const auto& [model, chain, unrestricted, problem, free] = observed;
    std::vector<double> free_w(free.size()), dense(chain.layout.dim(), 0.0);
    for (size_t k = 0; k < free.size(); ++k) {
      free_w[k] = normal(rng);
      dense[free[k]] = free_w[k];
    }
    for (int i = 0; i < problem->NumExamples(); ++i) {
      for (const Smoothing& smoothing :
           {Smoothing{Smoothing::Kind::kEntropy, 1.0, 1},
            Smoothing{Smoothing::Kind::kTopKL2, 0.5, 3},
            Smoothing{Smoothing::Kind::kNone, 0, 1}}) {
        SCOPED_TRACE(testing::Message() << "example " << i << " kind "
                                        << static_cast<int>(smoothing.kind));
        const size_t size = problem->BlockStateSize(i);
        std::vector<double> expected(size), state(size), by_default(size);
        double expected_dot = 0, dot = 0, default_dot = 0;
        const double value = problem->SmoothedOracleWithStateDot(
            i, dense.data(), smoothing, expected.data(), &expected_dot);
        EXPECT_EQ(problem->SmoothedOracleWithStateDotAtFree(
                      i, free_w.data(), smoothing, state.data(), &dot),
                  value);
        EXPECT_EQ(state, expected);
        EXPECT_EQ(dot, expected_dot);
        EXPECT_EQ(
            problem->Problem::SmoothedOracleWithStateDotAtFree(
                i, free_w.data(), smoothing, by_default.data(), &default_dot),
            value);
        EXPECT_EQ(by_default, expected);
        EXPECT_EQ(default_dot, expected_dot);
        std::vector<double> whole(size), at_free(size);
        double whole_dot = 0, at_free_dot = 0;
        EXPECT_EQ(unrestricted->SmoothedOracleWithStateDotAtFree(
                      i, dense.data(), smoothing, at_free.data(), &at_free_dot),
                  unrestricted->SmoothedOracleWithStateDot(
                      i, dense.data(), smoothing, whole.data(), &whole_dot));
        EXPECT_EQ(at_free, whole);
        EXPECT_EQ(at_free_dot, whole_dot);
      }
    }
  });
}

// The projection of a dense vector of all of w on the free coordinates.
std::vector<double> AtFree(const std::vector<double>& dense,
                           const std::vector<int64_t>& free) {
  std::vector<double> projected(free.size());
  for (size_t k = 0; k < free.size(); ++k) projected[k] = dense[free[k]];
  return projected;
}

void ExpectNear(const std::vector<double>& actual,
                const std::vector<double>& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t k = 0; k < actual.size(); ++k) {
    ASSERT_NEAR(actual[k], expected[k], 1e-9) << what << " at " << k;
  }
}

// With the free coordinates made the space, every operation is the
// unrestricted problem's at the point with 0 elsewhere, projected on the
// free coordinates: the oracles, scores and decoding read the same scores;
// AddScaled, AddCornerDifference, AddCornerMinusState (whole, in slices,
// as a mixture, encoded) write the projection of the dense change; the
// distances are the projected vectors' norms, written out densely here.
TEST(FreeSpaceTest, OperationsAreTheProjectedDenseOnes) {
  std::normal_distribution<double> normal(0, 1);
  ForEachObservedChain(43, [&](const ObservedChain& observed,
                               std::mt19937& rng) {
    const auto& [model, chain, unrestricted, restricted, free] = observed;
    std::unique_ptr<ChainProblem> space = chain.Problem(true);
    EXPECT_FALSE(space->MakeFreeCoordinatesTheSpace().ok());
    ASSERT_TRUE(space->RestrictEmissionsToObservedLabels().ok());
    ASSERT_TRUE(space->MakeFreeCoordinatesTheSpace().ok());
    const int64_t size = static_cast<int64_t>(free.size());
    ASSERT_EQ(space->Dim(), size);
    EXPECT_FALSE(space->FreeCoordinates(nullptr));
    const int L = chain.layout.num_labels;
    const int64_t dim = chain.layout.dim();
    std::vector<double> free_w(size), dense(dim, 0.0);
    for (int64_t k = 0; k < size; ++k) {
      free_w[k] = normal(rng);
      dense[free[k]] = free_w[k];
    }
    std::uniform_int_distribution<int> label(0, L - 1);
    auto draw = [&](int T) {
      Corner y(T);
      do {
        for (int32_t& label_t : y) label_t = label(rng);
      } while (!chain.Allowed(y));
      return y;
    };
    for (int i = 0; i < space->NumExamples(); ++i) {
      SCOPED_TRACE(testing::Message() << "example " << i);
      const ChainExample& example = chain.examples[i];
      const int T = example.labels.size();
      const Corner a = draw(T), b = draw(T);
      const Corner* corners[] = {&a, &b};
      std::vector<double> state(space->BlockStateSize(i));
      space->InitBlockState(i, state.data());
      space->MixCorner(i, a, 0.25, state.data());
      space->MixCorner(i, b, 0.25, state.data());
      // The same state as weights on labelings.
      const Corner* mixture[] = {&example.labels, &a, &b};
      const double mixture_weights[] = {0.5625, 0.1875, 0.25};

      OracleResult got, expected;
      space->MaxOracleWithStateDot(i, free_w.data(), state.data(), &got);
      unrestricted->MaxOracleWithStateDot(i, dense.data(), state.data(),
                                          &expected);
      EXPECT_EQ(got.corner, expected.corner);
      EXPECT_NEAR(got.score, expected.score, 1e-9);
      EXPECT_NEAR(got.loss, expected.loss, 1e-12);
      EXPECT_NEAR(got.state_dot, expected.state_dot, 1e-9);
      space->MaxOracleScaled(i, free_w.data(), 0.5, &got);
      unrestricted->MaxOracleScaled(i, dense.data(), 0.5, &expected);
      EXPECT_EQ(got.corner, expected.corner);
      EXPECT_NEAR(got.score, expected.score, 1e-9);
      Corner decoded, decoded_dense;
      space->Decode(i, free_w.data(), &decoded);
      unrestricted->Decode(i, dense.data(), &decoded_dense);
      EXPECT_EQ(decoded, decoded_dense);
      double scores[2], dense_scores[2], dot = 0, dense_dot = 0;
      space->ScoreCorners(i, free_w.data(), state.data(), corners, 2, scores,
                          &dot);
      unrestricted->ScoreCorners(i, dense.data(), state.data(), corners, 2,
                                 dense_scores, &dense_dot);
      EXPECT_NEAR(scores[0], dense_scores[0], 1e-9);
      EXPECT_NEAR(scores[1], dense_scores[1], 1e-9);
      EXPECT_NEAR(dot, dense_dot, 1e-9);
      const Smoothing entropy{Smoothing::Kind::kEntropy, 1.0, 1};
      std::vector<double> smoothed(state.size()), smoothed_free(state.size());
      double smoothed_dot = 0, free_dot = 0;
      EXPECT_NEAR(
          space->SmoothedOracleWithStateDot(i, free_w.data(), entropy,
                                            smoothed.data(), &smoothed_dot),
          restricted->SmoothedOracleWithStateDotAtFree(
              i, free_w.data(), entropy, smoothed_free.data(), &free_dot),
          1e-9);
      ExpectNear(smoothed, smoothed_free, "smoothed state");
      EXPECT_NEAR(smoothed_dot, free_dot, 1e-9);

      const double c = normal(rng);
      auto change = [&](auto apply_free, auto apply_dense, const char* what) {
        std::vector<double> got_w(size, 0.0), dense_w(dim, 0.0);
        apply_free(got_w.data());
        apply_dense(dense_w.data());
        ExpectNear(got_w, AtFree(dense_w, free), what);
      };
      change([&](double* w) { space->AddScaled(i, a, c, w); },
             [&](double* w) { unrestricted->AddScaled(i, a, c, w); },
             "AddScaled");
      change(
          [&](double* w) { space->AddCornerDifference(i, a, b, c, w); },
          [&](double* w) { unrestricted->AddCornerDifference(i, a, b, c, w); },
          "AddCornerDifference");
      change(
          [&](double* w) {
            space->AddCornerMinusState(i, b, state.data(), c, w);
          },
          [&](double* w) {
            unrestricted->AddCornerMinusState(i, b, state.data(), c, w);
          },
          "AddCornerMinusState");
      change(
          [&](double* w) {
            space->AddCornerMinusMixture(i, b, state.data(), mixture,
                                         mixture_weights, 3, c, w);
          },
          [&](double* w) {
            unrestricted->AddCornerMinusState(i, b, state.data(), c, w);
          },
          "AddCornerMinusMixture");
      change(
          [&](double* w) {
            space->AddCornerMinusStateInSlice(i, b, state.data(), c, size / 3,
                                              size, w);
            space->AddCornerMinusStateInSlice(i, b, state.data(), c, 0,
                                              size / 3, w);
          },
          [&](double* w) {
            unrestricted->AddCornerMinusState(i, b, state.data(), c, w);
          },
          "AddCornerMinusStateInSlice");
      change(
          [&](double* w) {
            BlockUpdate update;
            space->EncodeCornerMinusState(i, b, state.data(), c, &update);
            space->EncodeScaled(i, a, c, &update);
            AddBlockUpdate(update, w);
          },
          [&](double* w) {
            unrestricted->AddCornerMinusState(i, b, state.data(), c, w);
            unrestricted->AddScaled(i, a, c, w);
          },
          "encoded");

      // Distances of the projected vectors, from φ written out densely.
      const std::vector<double> psi_a =
          AtFree(DensePsi(chain, example, a), free);
      const std::vector<double> psi_b =
          AtFree(DensePsi(chain, example, b), free);
      double corner_distance = 0, state_distance = 0;
      for (int64_t k = 0; k < size; ++k) {
        corner_distance += (psi_a[k] - psi_b[k]) * (psi_a[k] - psi_b[k]);
        // v_i = Σ mixture_weights ψ, ψ(gold) = 0.
        const double v = 0.1875 * psi_a[k] + 0.25 * psi_b[k];
        state_distance += (v - psi_b[k]) * (v - psi_b[k]);
      }
      EXPECT_NEAR(space->CornerDistanceSquared(i, a, b), corner_distance, 1e-9);
      EXPECT_NEAR(space->StateDistanceSquared(i, state.data(), b),
                  state_distance, 1e-9);

      std::vector<CoordinateRange> ranges, at_free;
      space->TouchedRanges(i, &ranges);
      restricted->TouchedRangesAtFree(i, &at_free);
      ASSERT_EQ(ranges.size(), at_free.size());
      for (size_t r = 0; r < ranges.size(); ++r) {
        EXPECT_EQ(ranges[r].begin, at_free[r].begin);
        EXPECT_EQ(ranges[r].length, at_free[r].length);
      }
    }
  });
}

// At many labels the free space's oracles read the rows as the dense
// problem's do: a corner's few labels found in each row (ScoreCorners),
// the unary scores split over step helpers (a scaled oracle) and computed
// by them while one thread decodes (the pipelined oracle), all giving the
// unrestricted problem's results at the point with 0 elsewhere.
TEST(FreeSpaceTest, ManyLabelsOraclesAreTheDenseOnesLentOrAlone) {
  std::mt19937 rng(47);
  const TestChain chain = MakeTestChain(130, Model::kFirstAllowed, 12, &rng,
                                        /*max_length=*/40);
  const std::unique_ptr<ChainProblem> dense_problem = chain.Problem(true);
  const std::unique_ptr<ChainProblem> space = chain.Problem(true);
  ASSERT_TRUE(space->RestrictEmissionsToObservedLabels().ok());
  std::vector<int64_t> free;
  ASSERT_TRUE(space->FreeCoordinates(&free));
  ASSERT_TRUE(space->MakeFreeCoordinatesTheSpace().ok());
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> free_w(free.size()), dense(chain.layout.dim(), 0.0);
  for (size_t k = 0; k < free.size(); ++k) {
    free_w[k] = normal(rng);
    dense[free[k]] = free_w[k];
  }
  const int n = space->NumExamples();
  std::vector<std::vector<double>> states(n);
  std::vector<Corner> others(n);
  for (int i = 0; i < n; ++i) {
    states[i].assign(space->BlockStateSize(i), 0.0);
    space->InitBlockState(i, states[i].data());
    OracleResult first;
    dense_problem->MaxOracle(i, dense.data(), &first);
    others[i] = first.corner;
    space->MixCorner(i, others[i], 0.25, states[i].data());
  }
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    StepHelpers helpers(threads);
    for (int i = 0; i < n; ++i) {
      const Corner* corners[2] = {&space->GoldCorner(i), &others[i]};
      double scores[2], dense_scores[2];
      OracleResult got, expected;
      {
        StepHelpers::Lend lend(&helpers);
        space->ScoreCornersAndMaxOracle(i, free_w.data(), states[i].data(),
                                        corners, 2, scores, &got);
      }
      dense_problem->ScoreCornersAndMaxOracle(i, dense.data(), states[i].data(),
                                              corners, 2, dense_scores,
                                              &expected);
      EXPECT_EQ(got.corner, expected.corner) << i;
      EXPECT_NEAR(got.score, expected.score, 1e-9) << i;
      EXPECT_NEAR(got.state_dot, expected.state_dot, 1e-9) << i;
      EXPECT_NEAR(scores[1], dense_scores[1], 1e-9) << i;
      double few[1], dense_few[1], dot = 0, dense_dot = 0;
      space->ScoreCorners(i, free_w.data(), states[i].data(), corners + 1, 1,
                          few, &dot);
      dense_problem->ScoreCorners(i, dense.data(), states[i].data(),
                                  corners + 1, 1, dense_few, &dense_dot);
      EXPECT_NEAR(few[0], dense_few[0], 1e-9) << i;
      EXPECT_NEAR(dot, dense_dot, 1e-9) << i;
      {
        StepHelpers::Lend lend(&helpers);
        space->MaxOracleScaled(i, free_w.data(), 0.5, &got);
      }
      dense_problem->MaxOracleScaled(i, dense.data(), 0.5, &expected);
      EXPECT_EQ(got.corner, expected.corner) << i;
      EXPECT_NEAR(got.score, expected.score, 1e-9) << i;
    }
  }
  // Rows of many free labels: a changed label is found by a search, a
  // short row scanned; the distances and the change are the projections'.
  for (int i = 0; i < n; ++i) {
    const ChainExample& example = chain.examples[i];
    const std::vector<double> psi =
        AtFree(DensePsi(chain, example, others[i]), free);
    double corner = 0, state = 0;
    for (double x : psi) {
      corner += x * x;
      state += (0.25 * x - x) * (0.25 * x - x);  // v_i = ψ(others)/4
    }
    EXPECT_NEAR(space->CornerDistanceSquared(i, others[i], example.labels),
                corner, 1e-9 * (1 + corner));
    EXPECT_NEAR(space->StateDistanceSquared(i, states[i].data(), others[i]),
                state, 1e-9 * (1 + state));
    std::vector<double> got(free.size(), 0.0), changed(dense.size(), 0.0);
    space->AddCornerMinusState(i, example.labels, states[i].data(), 0.5,
                               got.data());
    dense_problem->AddCornerMinusState(i, example.labels, states[i].data(), 0.5,
                                       changed.data());
    ExpectNear(got, AtFree(changed, free), "AddCornerMinusState");
  }
}

// A state over allowed transitions holds S + 2L tail entries, not L² + 2L;
// the setter refuses a wrong size, a forbidden gold pair and second order.
TEST(AllowedTransitionsTest, StateTailHoldsTheAllowedPairsOnly) {
  std::mt19937 rng(11);
  const int L = 5;
  TestChain chain = MakeTestChain(L, Model::kFirstAllowed, 4, &rng);
  int allowed = 0;
  for (uint8_t a : chain.allowed) allowed += a;
  ASSERT_LT(allowed, L * L);
  const std::unique_ptr<ChainProblem> problem = chain.Problem(true);
  const TestChain plain_chain = [&] {
    TestChain plain = chain;
    plain.allowed.clear();
    return plain;
  }();
  const std::unique_ptr<ChainProblem> plain = plain_chain.Problem(true);
  for (int i = 0; i < problem->NumExamples(); ++i) {
    EXPECT_EQ(plain->BlockStateSize(i) - problem->BlockStateSize(i),
              L * L - allowed);
  }
  std::unique_ptr<ChainProblem> other = plain_chain.Problem(true);
  EXPECT_FALSE(other->SetAllowedTransitions(std::vector<uint8_t>(3, 1)).ok());
  EXPECT_FALSE(
      other->SetAllowedTransitions(std::vector<uint8_t>(L * L, 0)).ok());
  const TestChain second = MakeTestChain(4, Model::kSecond, 2, &rng);
  EXPECT_FALSE(second.Problem(true)
                   ->SetAllowedTransitions(std::vector<uint8_t>(16, 1))
                   .ok());
  // A labeling with a forbidden pair is not a corner.
  const ChainExample& example = chain.examples[0];
  for (int a = 0; a < L; ++a) {
    for (int b = 0; b < L; ++b) {
      if (chain.allowed[a * L + b]) continue;
      Corner y(example.labels.size(), a);
      if (y.size() >= 2) {
        y[1] = b;
        EXPECT_FALSE(problem->IsCorner(0, y));
      }
    }
  }
}

}  // namespace
}  // namespace chaintag
