// BcfwBlockSteps on small multiclass SVMs: a plain FW step against its
// hand-computed result, and every step rule as an exact ascent step of the
// dual that keeps w = sum_i v_i/(lambda n) and alpha on the simplex.

#include "solvers/bcfw_block_steps.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "solvers/bcfw_shared.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

double Dual(const BcfwShared& shared) {
  return shared.ell -
         0.5 * shared.lambda * SquaredNorm(shared.w.data(), shared.dim);
}

// One example x = 1, two classes, gold 0, lambda = 0.5: the oracle's
// corner y = 1 has psi = (1, -1) and loss 1, so w_s = psi/lambda = (2, -2),
// the block gap is 1 and the curvature lambda*||w_s||^2 = 4: the exact
// step is 1/4, which lands on the optimum w = (1/2, -1/2), l = 1/4.
TEST(BcfwBlockStepsTest, PlainFwStepByHand) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  SolverConfig config;
  config.set_lambda(0.5);
  BcfwShared shared(config, problem);
  shared.Initialize();
  BcfwBlockSteps steps(&shared);
  BcfwBlockOracle oracle;
  steps.ComputeBlockOracle(0, &oracle);
  EXPECT_EQ(oracle.oracle.corner, Corner{1});
  steps.ApplyBlockStep(0, &oracle);
  ASSERT_EQ(shared.w.size(), 2u);
  EXPECT_NEAR(shared.w[0], 0.5, 1e-15);
  EXPECT_NEAR(shared.w[1], -0.5, 1e-15);
  EXPECT_NEAR(shared.ell, 0.25, 1e-15);
  EXPECT_NEAR(shared.block_gap[0], 1.0, 1e-15);
  EXPECT_EQ(shared.oracle_calls, 1);
  EXPECT_EQ(shared.steps, 1);
  // At the optimum the next step does not move.
  steps.ComputeBlockOracle(0, &oracle);
  steps.ApplyBlockStep(0, &oracle);
  EXPECT_NEAR(shared.w[0], 0.5, 1e-15);
  EXPECT_NEAR(shared.block_gap[0], 0.0, 1e-15);
}

TEST(BcfwBlockStepsTest, EveryRuleIsAnAscentStepThatKeepsTheBookkeeping) {
  MulticlassProblem problem = RandomMulticlassProblem(12, 3, 4, 6);
  problem.set_offset_states(true);
  struct Rule {
    std::string name;
    SolverConfig::Step step;
    bool cache;
  };
  for (const Rule& rule : {Rule{"bcfw", SolverConfig::FW, false},
                           Rule{"bcfw", SolverConfig::FW, true},
                           Rule{"bcfw", SolverConfig::PAIRWISE, false},
                           Rule{"bcfw", SolverConfig::AWAY, true},
                           Rule{"bcfw", SolverConfig::BEST, false},
                           Rule{"active_set_bcfw", SolverConfig::FW, false}}) {
    SCOPED_TRACE(rule.name + " step " + std::to_string(rule.step) + " cache " +
                 std::to_string(rule.cache));
    SolverConfig config;
    config.set_name(rule.name);
    config.set_lambda(0.05);
    config.mutable_bcfw()->set_step(rule.step);
    config.mutable_bcfw()->set_cache(rule.cache);
    BcfwShared shared(config, problem);
    shared.Initialize();
    BcfwBlockSteps steps(&shared);
    BcfwBlockOracle oracle;
    double dual = Dual(shared);
    for (int j = 0; j < 200; ++j) {
      const int i = steps.NextBlock(j % shared.n, shared.order);
      steps.ComputeBlockOracle(i, &oracle);
      steps.ApplyBlockStep(i, &oracle);
      const double next = Dual(shared);
      EXPECT_GE(next, dual - 1e-12) << "step " << j;
      dual = next;
    }
    EXPECT_EQ(shared.steps, 200);
    EXPECT_LT(
        MaxWeightError(problem, shared.w.data(), shared.states.Dense().data(),
                       shared.states.offsets().data(), shared.lambda),
        1e-12);
    if (shared.track_alpha) {
      for (const CornerStore& store : shared.corners) {
        EXPECT_NEAR(store.AlphaSum(), 1.0, 1e-12);
      }
    }
    // A dual value never exceeds the optimum (weak duality); 200 steps on
    // 12 blocks make most of the way there.
    const double optimum = ReferencePrimal(problem, 0.05);
    EXPECT_LE(dual, optimum + 1e-12);
    EXPECT_GT(dual, 0.75 * optimum);
  }
}

}  // namespace
}  // namespace chaintag
