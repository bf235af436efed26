#include "models/gram_matrices.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "features/feature_sequence.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

// A sequence of `length` positions, each with up to `per_position` distinct
// ascending ids below `ids` (few ids, so positions share many), with
// values from {0.5, 1, 2, 3} or none (all 1).
FeatureSequence RandomSequence(std::mt19937* random, int length,
                               int per_position, uint32_t ids,
                               bool with_values) {
  FeatureSequence f;
  for (int t = 0; t < length; ++t) {
    std::vector<uint32_t> row;
    const int count = 1 + static_cast<int>((*random)() % per_position);
    for (int k = 0; k < count; ++k) row.push_back((*random)() % ids);
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    for (uint32_t id : row) {
      f.buckets.push_back(id);
      if (with_values) {
        const float choices[] = {0.5f, 1.0f, 2.0f, 3.0f};
        f.values.push_back(choices[(*random)() % 4]);
      }
    }
    f.offsets.push_back(static_cast<int32_t>(f.buckets.size()));
  }
  return f;
}

// ⟨x_a, x_b⟩ through dense vectors.
double DenseDot(const FeatureSequence& f, int a, int b, uint32_t ids) {
  std::vector<double> xa(ids, 0.0), xb(ids, 0.0);
  for (int32_t k = f.offsets[a]; k < f.offsets[a + 1]; ++k) {
    xa[f.buckets[k]] += f.value(k);
  }
  for (int32_t k = f.offsets[b]; k < f.offsets[b + 1]; ++k) {
    xb[f.buckets[k]] += f.value(k);
  }
  double dot = 0;
  for (uint32_t id = 0; id < ids; ++id) dot += xa[id] * xb[id];
  return dot;
}

// Σ_{a,b} ⟨x_a, x_b⟩·⟨d_a, d_b⟩, brute force.
double BruteNormSquared(const FeatureSequence& f, int width,
                        const std::vector<double>& d, uint32_t ids) {
  double norm = 0;
  for (int a = 0; a < f.size(); ++a) {
    for (int b = 0; b < f.size(); ++b) {
      double dot = 0;
      for (int k = 0; k < width; ++k)
        dot += d[a * width + k] * d[b * width + k];
      norm += DenseDot(f, a, b, ids) * dot;
    }
  }
  return norm;
}

TEST(GramMatricesTest, EntriesAreTheInnerProductsOfThePositions) {
  std::mt19937 random(7);
  constexpr uint32_t kIds = 12;
  std::vector<FeatureSequence> sequences;
  for (int i = 0; i < 6; ++i) {
    sequences.push_back(RandomSequence(&random, 1 + i * 3, 6, kIds, i % 2));
  }
  std::vector<const FeatureSequence*> pointers;
  for (const FeatureSequence& f : sequences) pointers.push_back(&f);
  const GramMatrices gram(pointers);
  for (size_t i = 0; i < sequences.size(); ++i) {
    const FeatureSequence& f = sequences[i];
    const int T = f.size();
    // d = e_a (width 1) reads G[a][a]; d = e_a + e_b reads
    // G[a][a] + G[b][b] + 2·G[a][b]. The entries are sums of products of
    // small dyadic numbers, so exact.
    for (int a = 0; a < T; ++a) {
      std::vector<double> d(T, 0.0);
      d[a] = 1;
      EXPECT_EQ(gram.NormSquared(static_cast<int>(i), 1, d.data()),
                DenseDot(f, a, a, kIds));
      for (int b = a + 1; b < T; ++b) {
        d[b] = 1;
        EXPECT_EQ(gram.NormSquared(static_cast<int>(i), 1, d.data()),
                  DenseDot(f, a, a, kIds) + DenseDot(f, b, b, kIds) +
                      2 * DenseDot(f, a, b, kIds))
            << "sequence " << i << ", positions " << a << ", " << b;
        d[b] = 0;
      }
    }
  }
}

TEST(GramMatricesTest, NormSquaredMatchesBruteForce) {
  std::mt19937 random(11);
  constexpr uint32_t kIds = 40;
  constexpr int kWidth = 3;
  std::vector<FeatureSequence> sequences;
  for (int i = 0; i < 5; ++i) {
    sequences.push_back(RandomSequence(&random, 2 + 4 * i, 10, kIds, true));
  }
  std::vector<const FeatureSequence*> pointers;
  for (const FeatureSequence& f : sequences) pointers.push_back(&f);
  const GramMatrices gram(pointers);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (size_t i = 0; i < sequences.size(); ++i) {
    std::vector<double> d(sequences[i].size() * kWidth);
    for (double& x : d) x = uniform(random);
    const double expected = BruteNormSquared(sequences[i], kWidth, d, kIds);
    EXPECT_NEAR(gram.NormSquared(static_cast<int>(i), kWidth, d.data()),
                expected, 1e-12 * std::max(1.0, expected));
  }
}

// States of a few labels out of many: NormSquared sums over the nonzero
// entries only, and must give the bits of the full loops (the triangle
// row by row, each dot over every entry in order), here with the Gram
// entries exact (dyadic values) so that the reference can recompute them.
TEST(GramMatricesTest, SparseDifferencesGiveTheFullLoopsBits) {
  std::mt19937 random(13);
  constexpr uint32_t kIds = 30;
  constexpr int kWidth = 40;
  std::vector<FeatureSequence> sequences;
  for (int i = 0; i < 8; ++i) {
    sequences.push_back(RandomSequence(&random, 1 + 3 * i, 6, kIds, true));
  }
  std::vector<const FeatureSequence*> pointers;
  for (const FeatureSequence& f : sequences) pointers.push_back(&f);
  const GramMatrices gram(pointers);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::uniform_int_distribution<int> label(0, kWidth - 1);
  for (int few : {1, 3, 12, kWidth}) {
    for (size_t i = 0; i < sequences.size(); ++i) {
      const FeatureSequence& f = sequences[i];
      const int T = f.size();
      std::vector<double> d(static_cast<size_t>(T) * kWidth, 0.0);
      for (int t = 0; t < T; ++t) {
        for (int j = 0; j < few; ++j)
          d[t * kWidth + label(random)] = uniform(random);
      }
      double full = 0;
      for (int a = 0; a < T; ++a) {
        double diagonal = 0;
        for (int k = 0; k < kWidth; ++k) {
          diagonal += d[a * kWidth + k] * d[a * kWidth + k];
        }
        full += DenseDot(f, a, a, kIds) * diagonal;
        for (int b = a + 1; b < T; ++b) {
          const double g = DenseDot(f, a, b, kIds);
          if (g == 0) continue;
          double dot = 0;
          for (int k = 0; k < kWidth; ++k) {
            dot += d[a * kWidth + k] * d[b * kWidth + k];
          }
          full += 2 * g * dot;
        }
      }
      EXPECT_EQ(gram.NormSquared(static_cast<int>(i), kWidth, d.data()), full)
          << "few " << few << " sequence " << i;
      EXPECT_NEAR(full, BruteNormSquared(f, kWidth, d, kIds),
                  1e-12 * std::max(1.0, full));
    }
  }
}

TEST(GramMatricesTest, ThreadCountDoesNotChangeAnyBit) {
  std::mt19937 random(3);
  std::vector<FeatureSequence> sequences;
  for (int i = 0; i < 50; ++i) {
    // Values with many mantissa bits, so that the order of the sums shows.
    FeatureSequence f = RandomSequence(&random, 1 + i % 17, 8, 30, false);
    std::uniform_real_distribution<float> uniform(0.1f, 2.0f);
    f.values.resize(f.buckets.size());
    for (float& v : f.values) v = uniform(random);
    sequences.push_back(f);
  }
  std::vector<const FeatureSequence*> pointers;
  for (const FeatureSequence& f : sequences) pointers.push_back(&f);
  const GramMatrices one(pointers, 1);
  for (int threads : {2, 3, 8}) {
    const GramMatrices many(pointers, threads);
    EXPECT_EQ(many.bytes(), one.bytes());
    for (size_t i = 0; i < sequences.size(); ++i) {
      std::vector<double> d(sequences[i].size() * 2);
      for (size_t k = 0; k < d.size(); ++k) d[k] = 1.0 / (k + 3);
      EXPECT_EQ(many.NormSquared(static_cast<int>(i), 2, d.data()),
                one.NormSquared(static_cast<int>(i), 2, d.data()))
          << threads << " threads, sequence " << i;
    }
  }
}

TEST(GramMatricesTest, KeepsTheNarrowestExactType) {
  std::mt19937 random(5);
  const FeatureSequence binary = RandomSequence(&random, 6, 4, 10, false);
  FeatureSequence halves = binary;
  halves.values.assign(halves.buckets.size(), 0.5f);
  FeatureSequence thirds = binary;
  thirds.values.assign(thirds.buckets.size(), 1.0f / 3);
  const int64_t entries = 6 * 7 / 2;
  EXPECT_EQ(GramMatrices({&binary}).bytes(), entries * 2);  // uint16
  EXPECT_EQ(GramMatrices({&halves}).bytes(), entries * 4);  // float
  EXPECT_EQ(GramMatrices({&thirds}).bytes(), entries * 8);  // double
}

}  // namespace
}  // namespace chaintag
