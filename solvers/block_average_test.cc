// BlockAverage against the definition of BCFW's weighted average: after K
// steps, w_avg = sum_s s*w^(s) / sum_s s, with w = sum_i v_i/(lambda n) and
// l_avg likewise; the same bits whatever the thread count, and across
// ranks that each hold a shard of the blocks; the sums held sparsely are
// a dense sum's bits, and go densely where that is smaller.

#include "solvers/block_average.h"

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "base/thread_communicator.h"
#include "gtest/gtest.h"
#include "solvers/block_states.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/problem.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

constexpr double kLambda = 0.3;

// Random FW-like steps on random blocks, with the folds BCFW makes; returns
// the definition's average point and l. `ell` is the iterate's l at the end.
struct Steps {
  std::vector<double> expected_average;
  double expected_ell = 0;
  double ell = 0;
  int64_t steps = 0;
};

// With `dense_sums`, also the sums as a dense array would hold them (every
// entry of a block's state added at each fold).
Steps RunSteps(const MulticlassProblem& problem, BlockStates* states,
               BlockAverage* average,
               std::vector<double>* dense_sums = nullptr) {
  const int n = problem.NumExamples();
  const int64_t dim = problem.Dim();
  std::mt19937 engine(9);
  Steps result;
  result.expected_average.assign(dim, 0.0);
  double weight_sum = 0, ell_weighted = 0;
  for (int64_t s = 1; s <= 25; ++s) {
    const int i = static_cast<int>(engine() % n);
    const Corner y = {static_cast<int32_t>(engine() % problem.num_classes())};
    const double gamma = 0.1 + 0.05 * static_cast<double>(engine() % 10);
    if (dense_sums != nullptr) {
      const int64_t first = average->averaged_through()[i] + 1;
      double weight = 0;
      for (int64_t r = first; r <= s - 1; ++r) weight += static_cast<double>(r);
      if (weight != 0) {
        const double* state = states->Read(i);
        for (int64_t k = 0; k < states->Size(i); ++k) {
          (*dense_sums)[states->offsets()[i] + k] += weight * state[k];
        }
      }
    }
    average->Fold(i, s - 1);
    const double delta_ell = gamma * (problem.Loss(i, y) / n - 0.01 * i);
    average->AddEllChange(s, delta_ell);
    result.ell += delta_ell;
    problem.MixCorner(i, y, gamma, states->Open(i));
    states->Close(i);
    // The definition: w^(s) from every block's state, weighted by s.
    std::vector<double> w(dim, 0.0);
    for (int b = 0; b < n; ++b) {
      problem.AddCornerMinusState(b, problem.GoldCorner(b), states->Read(b),
                                  -1.0 / (kLambda * n), w.data());
    }
    for (int64_t j = 0; j < dim; ++j) {
      result.expected_average[j] += static_cast<double>(s) * w[j];
    }
    ell_weighted += static_cast<double>(s) * result.ell;
    weight_sum += static_cast<double>(s);
    result.steps = s;
  }
  for (double& x : result.expected_average) x /= weight_sum;
  result.expected_ell = ell_weighted / weight_sum;
  return result;
}

TEST(BlockAverageTest, MatchesTheDefinitionOnAnyThreadCount) {
  MulticlassProblem problem = RandomMulticlassProblem(7, 3, 4, 4);
  problem.set_offset_states(true);  // a gold state that is not zero
  BlockStates states;
  states.Initialize(problem);
  BlockAverage average(problem, states);
  average.Initialize();
  const Steps steps = RunSteps(problem, &states, &average);
  EXPECT_NEAR(average.Ell(steps.ell, steps.steps), steps.expected_ell, 1e-12);
  std::vector<double> one(problem.Dim());
  ASSERT_TRUE(
      average.Form(steps.steps, kLambda, 1, 1, BlockDistribution(), one.data())
          .ok());
  for (int64_t j = 0; j < problem.Dim(); ++j) {
    EXPECT_NEAR(one[j], steps.expected_average[j], 1e-12) << j;
  }
  // Forming writes nothing: twice, and on 3 threads, the same bits.
  std::vector<double> again(problem.Dim(), 7.0), three(problem.Dim());
  ASSERT_TRUE(
      average
          .Form(steps.steps, kLambda, 1, 1, BlockDistribution(), again.data())
          .ok());
  ASSERT_TRUE(
      average
          .Form(steps.steps, kLambda, 1, 3, BlockDistribution(), three.data())
          .ok());
  EXPECT_EQ(again, one);
  EXPECT_EQ(three, one);
}

TEST(BlockAverageTest, RanksChainTheirShardsToTheSameBits) {
  MulticlassProblem problem = RandomMulticlassProblem(6, 2, 3, 8);
  BlockStates states;
  states.Initialize(problem);
  BlockAverage average(problem, states);
  average.Initialize();
  const Steps steps = RunSteps(problem, &states, &average);
  std::vector<double> one(problem.Dim());
  ASSERT_TRUE(
      average.Form(steps.steps, kLambda, 1, 1, BlockDistribution(), one.data())
          .ok());
  // Two ranks with the same sums (every rank folds every block), blocks
  // [0, 2) and [2, 6).
  ThreadHub hub(2);
  std::vector<std::vector<double>> results(2,
                                           std::vector<double>(problem.Dim()));
  std::vector<absl::Status> statuses(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      ThreadCommunicator communicator(&hub, rank);
      BlockDistribution distribution;
      distribution.communicator = &communicator;
      distribution.shard = rank == 0 ? BlockShard{0, 2} : BlockShard{2, 6};
      statuses[rank] = average.Form(steps.steps, kLambda, 1, 1, distribution,
                                    results[rank].data());
    });
  }
  for (std::thread& rank : ranks) rank.join();
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(statuses[rank].ok()) << statuses[rank];
    EXPECT_EQ(results[rank], one) << "rank " << rank;
  }
}

// Twelve classes: a block's state is nonzero on the rows of the classes its
// labelings took, so most of each sum is never touched.
TEST(BlockAverageTest, SparseSumsHoldTheDenseSumsBits) {
  MulticlassProblem problem = RandomMulticlassProblem(5, 3, 12, 6);
  BlockStates states;
  states.Initialize(problem);
  BlockAverage average(problem, states);
  average.Initialize();
  std::vector<double> dense_sums(states.TotalSize(), 0.0);
  const Steps steps = RunSteps(problem, &states, &average, &dense_sums);
  EXPECT_EQ(average.DenseSums(), dense_sums);
  // At most the 25 steps' classes (2 rows of 3 of 12 a step) plus indices.
  EXPECT_GT(average.HeldSize(), 0);
  EXPECT_LT(average.HeldSize(), states.TotalSize() / 2);
  std::vector<double> one(problem.Dim());
  ASSERT_TRUE(
      average.Form(steps.steps, kLambda, 1, 1, BlockDistribution(), one.data())
          .ok());
  for (int64_t j = 0; j < problem.Dim(); ++j) {
    EXPECT_NEAR(one[j], steps.expected_average[j], 1e-12) << j;
  }

  // A checkpoint's round trip through the sums' entries forms the same
  // bits.
  const RealEntries entries = average.AllSumEntries();
  EXPECT_EQ(entries.size, states.TotalSize());
  std::vector<double> expanded(states.TotalSize(), 0.0);
  for (size_t e = 0; e < entries.positions.size(); ++e) {
    EXPECT_NE(entries.values[e], 0.0);
    expanded[entries.positions[e]] = entries.values[e];
  }
  EXPECT_EQ(expanded, dense_sums);
  BlockAverage restored(problem, states);
  restored.Initialize();
  ASSERT_TRUE(restored.SetAllSumEntries(entries).ok());
  *restored.mutable_averaged_through() = average.averaged_through();
  *restored.mutable_ell_accumulator() = average.ell_accumulator();
  EXPECT_EQ(restored.HeldSize(), average.HeldSize());
  std::vector<double> again(problem.Dim());
  ASSERT_TRUE(
      restored
          .Form(steps.steps, kLambda, 1, 2, BlockDistribution(), again.data())
          .ok());
  EXPECT_EQ(again, one);
  RealEntries wrong = entries;
  wrong.size = 3;
  EXPECT_FALSE(restored.SetAllSumEntries(wrong).ok());
}

// Offset states are nonzero everywhere: a folded block's sum is held
// densely (its size, no indices), the others hold nothing.
TEST(BlockAverageTest, ABlockWithNoZerosIsSummedDensely) {
  MulticlassProblem problem = RandomMulticlassProblem(3, 2, 4, 1);
  problem.set_offset_states(true);
  BlockStates states;
  states.Initialize(problem);
  BlockAverage average(problem, states);
  average.Initialize();
  EXPECT_EQ(average.HeldSize(), 0);
  average.Fold(1, 3);  // weight 1 + 2 + 3
  const std::vector<int64_t>& offsets = states.offsets();
  EXPECT_EQ(average.HeldSize(), offsets[2] - offsets[1]);
  const std::vector<double> sums = average.DenseSums();
  const std::vector<double> dense = states.Dense();
  for (int64_t k = 0; k < offsets.back(); ++k) {
    const bool in_block = k >= offsets[1] && k < offsets[2];
    EXPECT_EQ(sums[k], in_block ? 6.0 * dense[k] : 0.0) << k;
  }
}

}  // namespace
}  // namespace chaintag
