#include "solvers/solver.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/parallel.h"
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
  config.set_lambda(0.5);  // given: wins (CheckSolverSettings refuses both)
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
  EXPECT_TRUE(CheckSolverSettings(config).ok());
  config.set_c(1);
  EXPECT_TRUE(CheckSolverSettings(config).ok());
  config.set_lambda(1e-3);
  EXPECT_EQ(CheckSolverSettings(config).code(),
            absl::StatusCode::kInvalidArgument);
  config.clear_lambda();
  config.set_c2(1);
  EXPECT_EQ(CheckSolverSettings(config).code(),
            absl::StatusCode::kInvalidArgument);
  config.clear_c2();
  config.set_c(-1);
  EXPECT_EQ(CheckSolverSettings(config).code(),
            absl::StatusCode::kInvalidArgument);
}

// NaN and infinity are refused by name rather than read as an unset field
// (NaN > 0 is false), and so are negative budgets and thread counts
// outside [1, 256].
TEST(ResolveLambdaTest, RefusesNonFiniteNumbersAndBadThreadCounts) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  using Setter = void (SolverConfig::*)(double);
  const std::pair<const char*, Setter> fields[] = {
      {"lambda", &SolverConfig::set_lambda},
      {"c", &SolverConfig::set_c},
      {"c2", &SolverConfig::set_c2},
      {"c1", &SolverConfig::set_c1},
      {"l1", &SolverConfig::set_l1},
      {"gap_tolerance", &SolverConfig::set_gap_tolerance},
      {"relative_gap_tolerance", &SolverConfig::set_relative_gap_tolerance},
      {"max_seconds", &SolverConfig::set_max_seconds}};
  for (const auto& [name, set] : fields) {
    for (double value : {nan, inf, -inf}) {
      SolverConfig config;
      (config.*set)(value);
      const absl::Status status = CheckSolverSettings(config);
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
          << name << " " << value;
      EXPECT_NE(status.message().find(absl::StrCat("solver.", name, " ")),
                std::string::npos)
          << status;
    }
  }
  SolverConfig config;
  config.set_max_seconds(-1);
  EXPECT_EQ(CheckSolverSettings(config).code(),
            absl::StatusCode::kInvalidArgument);
  for (int threads : {0, -1, kMaxThreads + 1, 100000}) {
    config = SolverConfig();
    config.set_num_threads(threads);
    EXPECT_EQ(CheckSolverSettings(config).code(),
              absl::StatusCode::kInvalidArgument)
        << threads;
  }
  for (int threads : {1, kMaxThreads}) {
    config.set_num_threads(threads);
    EXPECT_TRUE(CheckSolverSettings(config).ok()) << threads;
  }
}

TEST(ResolveL1Test, C1IsPerSum) {
  SolverConfig config;
  EXPECT_DOUBLE_EQ(ResolveL1(config, 100), 0);
  config.set_c1(2);  // CRFsuite's -p c1=2
  EXPECT_DOUBLE_EQ(ResolveL1(config, 100), 0.02);
  EXPECT_TRUE(CheckSolverSettings(config).ok());
  config.set_l1(0.5);
  EXPECT_DOUBLE_EQ(ResolveL1(config, 100), 0.5);
  EXPECT_EQ(CheckSolverSettings(config).code(),
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
