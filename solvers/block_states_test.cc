// BlockStates against dense states changed by the same steps: the same
// bits read back (a -0 too), sparse where the states are, dense where they
// are not, and a thread's copy never stale.

#include "solvers/block_states.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/problem.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

// Bitwise equality (EXPECT_EQ on doubles takes -0 for +0).
bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Random FW steps on `states` and on a dense copy of them.
void MixRandomly(const MulticlassProblem& problem, int steps,
                 BlockStates* states, std::vector<double>* dense) {
  std::mt19937 engine(3);
  const std::vector<int64_t>& offsets = states->offsets();
  for (int s = 0; s < steps; ++s) {
    const int i = static_cast<int>(engine() % problem.NumExamples());
    const Corner y = {static_cast<int32_t>(engine() % problem.num_classes())};
    const double gamma = 0.1 + 0.05 * static_cast<double>(engine() % 10);
    problem.MixCorner(i, y, gamma, states->Open(i));
    states->Close(i);
    problem.MixCorner(i, y, gamma, dense->data() + offsets[i]);
  }
}

std::vector<double> GoldDense(const Problem& problem,
                              const std::vector<int64_t>& offsets) {
  std::vector<double> dense(offsets.back(), 0.0);
  for (int i = 0; i < problem.NumExamples(); ++i) {
    problem.InitBlockState(i, dense.data() + offsets[i]);
  }
  return dense;
}

// Twelve classes: a state is nonzero on the rows of the classes its steps
// took.
TEST(BlockStatesTest, SparseStatesReadBackTheDenseBits) {
  MulticlassProblem problem = RandomMulticlassProblem(6, 3, 12, 4);
  BlockStates states;
  states.Initialize(problem);
  EXPECT_EQ(states.TotalSize(), BlockStateOffsets(problem).back());
  std::vector<double> dense = GoldDense(problem, states.offsets());
  EXPECT_EQ(states.HeldSize(), 0);  // gold states are zero here
  MixRandomly(problem, 20, &states, &dense);
  EXPECT_TRUE(SameBits(states.Dense(), dense));
  for (int i = 0; i < states.NumBlocks(); ++i) {
    const double* read = states.Read(i);
    for (int64_t k = 0; k < states.Size(i); ++k) {
      EXPECT_EQ(read[k], dense[states.offsets()[i] + k]) << i << " " << k;
    }
  }
  EXPECT_GT(states.HeldSize(), 0);
  EXPECT_LT(states.HeldSize(), states.TotalSize() / 2);

  // A -0 written is a -0 read; a +0 is not held.
  double* state = states.Open(2);
  state[1] = -0.0;
  states.Close(2);
  states.Read(3);  // this thread's copy moves to another block
  EXPECT_TRUE(std::signbit(states.Read(2)[1]));

  // The entries' round trip (a checkpoint's): every entry but +0, at its
  // place in the dense layout, the -0 too.
  const RealEntries entries = states.AllEntries();
  EXPECT_EQ(entries.size, states.TotalSize());
  const std::vector<double> all = states.Dense();
  int64_t held = 0;
  for (double x : all) held += !(x == 0 && !std::signbit(x));
  EXPECT_EQ(static_cast<int64_t>(entries.positions.size()), held);
  for (size_t e = 0; e < entries.positions.size(); ++e) {
    EXPECT_TRUE(SameBits({all[entries.positions[e]]}, {entries.values[e]}));
  }
  BlockStates restored;
  restored.Initialize(problem);
  ASSERT_TRUE(restored.SetAllEntries(entries).ok());
  EXPECT_TRUE(SameBits(restored.Dense(), all));
  EXPECT_EQ(restored.HeldSize(), states.HeldSize());

  // Refused, and nothing changed: a wrong size, positions out of order.
  RealEntries wrong = entries;
  wrong.size = 5;
  EXPECT_FALSE(restored.SetAllEntries(wrong).ok());
  wrong = entries;
  ASSERT_GE(wrong.positions.size(), 2u);
  std::swap(wrong.positions[0], wrong.positions[1]);
  EXPECT_FALSE(restored.SetAllEntries(wrong).ok());
  EXPECT_TRUE(SameBits(restored.Dense(), all));
}

// Offset states have no zeros: every block is held densely.
TEST(BlockStatesTest, StatesWithoutZerosAreHeldDensely) {
  MulticlassProblem problem = RandomMulticlassProblem(4, 2, 3, 5);
  problem.set_offset_states(true);
  BlockStates states;
  states.Initialize(problem);
  EXPECT_EQ(states.HeldSize(), states.TotalSize());
  std::vector<double> dense = GoldDense(problem, states.offsets());
  MixRandomly(problem, 12, &states, &dense);
  EXPECT_TRUE(SameBits(states.Dense(), dense));
  EXPECT_EQ(states.HeldSize(), states.TotalSize());
}

// A thread's copy follows changes made on another thread, and never passes
// for another object's block.
TEST(BlockStatesTest, ACopyIsNeverStale) {
  MulticlassProblem problem = RandomMulticlassProblem(3, 3, 12, 6);
  BlockStates a, b;
  a.Initialize(problem);
  b.Initialize(problem);
  const std::vector<double> zero(a.Size(0), 0.0);
  EXPECT_EQ(std::vector<double>(a.Read(0), a.Read(0) + a.Size(0)), zero);
  std::thread writer([&] {
    problem.MixCorner(0, {5}, 0.5, a.Open(0));
    a.Close(0);
  });
  writer.join();
  std::vector<double> expected(a.Size(0), 0.0);
  problem.MixCorner(0, {5}, 0.5, expected.data());
  EXPECT_EQ(std::vector<double>(a.Read(0), a.Read(0) + a.Size(0)), expected);
  // b's block 0 is still its gold state.
  EXPECT_EQ(std::vector<double>(b.Read(0), b.Read(0) + b.Size(0)), zero);
}

}  // namespace
}  // namespace chaintag
