#include "solvers/solver.h"

#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(ResolveLambdaTest, PerSumFormsScaleWithTheData) {
  SolverConfig config;
  EXPECT_DOUBLE_EQ(ResolveLambda(config, 200), 1.0 / 200);
  config.set_c(4);  // CRF++'s -c 4
  EXPECT_DOUBLE_EQ(ResolveLambda(config, 200), 1.0 / 800);
  EXPECT_DOUBLE_EQ(ResolveLambda(config, 2000), 1.0 / 8000);
  config.clear_c();
  config.set_c2(1);  // CRFsuite's default
  EXPECT_DOUBLE_EQ(ResolveLambda(config, 200), 0.01);
  config.set_lambda(0.5);  // given: wins (CheckLambdaForms refuses both)
  EXPECT_DOUBLE_EQ(ResolveLambda(config, 200), 0.5);
}

TEST(ResolveLambdaTest, RuleSaysHowLambdaWasChosen) {
  SolverConfig config;
  EXPECT_EQ(LambdaRule(config, 100), "lambda = 1/n (C = 1), n = 100");
  config.set_c(0.1);
  EXPECT_EQ(LambdaRule(config, 1000),
            "lambda = 1/(C·n), C = 0.1 (CRF++'s -c), n = 1000");
  config.clear_c();
  config.set_c2(5);
  EXPECT_EQ(LambdaRule(config, 10),
            "lambda = 2·c2/n, c2 = 5 (CRFsuite's c2), n = 10");
  config.set_c2(0);
  config.set_lambda(1e-3);
  EXPECT_EQ(LambdaRule(config, 10), "lambda given");
}

TEST(ResolveLambdaTest, OneFormAtATime) {
  SolverConfig config;
  EXPECT_TRUE(CheckLambdaForms(config).ok());
  config.set_c(1);
  EXPECT_TRUE(CheckLambdaForms(config).ok());
  config.set_lambda(1e-3);
  EXPECT_EQ(CheckLambdaForms(config).code(),
            absl::StatusCode::kInvalidArgument);
  config.clear_lambda();
  config.set_c2(1);
  EXPECT_EQ(CheckLambdaForms(config).code(),
            absl::StatusCode::kInvalidArgument);
  config.clear_c2();
  config.set_c(-1);
  EXPECT_EQ(CheckLambdaForms(config).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ResolveL1Test, C1IsPerSum) {
  SolverConfig config;
  EXPECT_DOUBLE_EQ(ResolveL1(config, 100), 0);
  config.set_c1(2);  // CRFsuite's -p c1=2
  EXPECT_DOUBLE_EQ(ResolveL1(config, 100), 0.02);
  EXPECT_TRUE(CheckLambdaForms(config).ok());
  config.set_l1(0.5);
  EXPECT_DOUBLE_EQ(ResolveL1(config, 100), 0.5);
  EXPECT_EQ(CheckLambdaForms(config).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GapWithinToleranceTest, AbsoluteThenRelative) {
  SolverConfig config;
  config.set_gap_tolerance(0.01);
  EXPECT_EQ(GapWithinTolerance(config, 0.01, 1), GapStop::kAbsolute);
  EXPECT_EQ(GapWithinTolerance(config, 0.05, 1), GapStop::kNone);
  config.set_relative_gap_tolerance(0.1);
  EXPECT_EQ(GapWithinTolerance(config, 0.05, 1), GapStop::kRelative);
  EXPECT_EQ(GapWithinTolerance(config, 0.05, 0.4), GapStop::kNone);
}

}  // namespace
}  // namespace chaintag
