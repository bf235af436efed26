// BcfwRounds on a small multiclass SVM: a round is an ascent step of the
// dual that keeps w = sum_i v_i/(lambda n), moves tau distinct blocks, and
// gives the same bits on any thread count.

#include "solvers/bcfw_rounds.h"

#include <vector>

#include "gtest/gtest.h"
#include "solvers/bcfw_block_steps.h"
#include "solvers/bcfw_shared.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

struct Rounds {
  std::vector<double> w;
  std::vector<double> duals;
  double weight_error = 0;
};

Rounds RunRounds(const MulticlassProblem& problem, SolverConfig::Step step,
                 int threads) {
  SolverConfig config;
  config.set_lambda(0.05);
  config.set_minibatch(4);
  config.set_num_threads(threads);
  config.mutable_bcfw()->set_step(step);
  config.set_sampling(SolverConfig::GAP);
  BcfwShared shared(config, problem);
  shared.Initialize();
  BcfwBlockSteps steps(&shared);
  BcfwRounds rounds(&shared, &steps);
  Rounds result;
  for (int pass = 0; pass < 15; ++pass) {
    for (int j = 0; j < shared.n; j += 4) {
      EXPECT_TRUE(rounds.RunRound(j, std::min(4, shared.n - j)).ok());
      result.duals.push_back(shared.ell -
                             0.5 * shared.lambda *
                                 SquaredNorm(shared.w.data(), shared.dim));
    }
  }
  EXPECT_EQ(shared.steps, 15 * shared.n);
  result.w = shared.w;
  result.weight_error =
      MaxWeightError(problem, shared.w.data(), shared.states.Dense().data(),
                     shared.states.offsets().data(), shared.lambda);
  return result;
}

TEST(BcfwRoundsTest, AscentOnAnyThreadCountToTheBit) {
  MulticlassProblem problem = RandomMulticlassProblem(18, 3, 4, 12);
  problem.set_offset_states(true);
  for (SolverConfig::Step step : {SolverConfig::FW, SolverConfig::PAIRWISE}) {
    SCOPED_TRACE(step);
    const Rounds one = RunRounds(problem, step, 1);
    double previous = 0;  // the dual at w = 0, alpha on the gold labelings
    for (double dual : one.duals) {
      EXPECT_GE(dual, previous - 1e-12);
      previous = dual;
    }
    EXPECT_LT(one.weight_error, 1e-12);
    // Weak duality, and most of the way there.
    const double optimum = ReferencePrimal(problem, 0.05);
    EXPECT_LE(one.duals.back(), optimum + 1e-12);
    EXPECT_GT(one.duals.back(), 0.75 * optimum);
    const Rounds three = RunRounds(problem, step, 3);
    EXPECT_EQ(three.w, one.w);
    EXPECT_EQ(three.duals, one.duals);
  }
}

}  // namespace
}  // namespace chaintag
