#include "solvers/pass_driver.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

constexpr int kExamples = 4;

// Steps whose every pass makes kExamples oracle calls and whose gap after
// pass k is gaps[k - 1] (when the driver asks for it); records what the
// driver asked.
class ScriptedSteps : public PassSteps {
 public:
  explicit ScriptedSteps(std::vector<double> gaps) : gaps_(std::move(gaps)) {}

  absl::Status RunSteps(int pass, PassDriver*) override {
    oracle_calls_ += kExamples * calls_per_example;
    if (pass == fail_at) return absl::InternalError("diverged");
    return absl::OkStatus();
  }
  absl::StatusOr<PassEnd> EndPass(const PassEndRequest& request,
                                  PassRecord* record) override {
    requests.push_back(request);
    PassEnd end;
    const double gap = gaps_[request.pass - 1];
    if (request.gap_check_due && with_dual) {
      end.certificate = DualityGap{1 + gap, 1, gap};
    } else if (request.gap_check_due) {
      end.primal = 1 + gap;
    } else {
      record->set_dual(1);
    }
    end.estimate_converged = request.pass == estimate_converges_at;
    return end;
  }
  absl::Span<const double> Point() override {
    ++points_formed;
    return point_;
  }
  int64_t OracleCalls() const override { return oracle_calls_; }

  std::vector<PassEndRequest> requests;
  int points_formed = 0;
  bool with_dual = true;
  int calls_per_example = 1;
  int estimate_converges_at = -1;
  int fail_at = -1;

 private:
  std::vector<double> gaps_;
  std::vector<double> point_ = {0.5};
  int64_t oracle_calls_ = 0;
};

SolverConfig Config(int max_passes, int gap_check, double tolerance) {
  SolverConfig config;
  config.set_max_passes(max_passes);
  config.set_gap_check(gap_check);
  config.set_gap_tolerance(tolerance);
  return config;
}

TEST(PassDriverTest, CadenceBudgetAndSummary) {
  const SolverConfig config = Config(7, 3, 1e-3);
  ScriptedSteps steps(std::vector<double>(7, 0.5));
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  PassDriver driver(config, "scripted", 0.25, kExamples, 10, &monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok()) << summary.status();
  // Every 3rd pass and the last (final_gap).
  std::vector<int> checked;
  for (const PassEndRequest& request : steps.requests) {
    if (request.gap_check_due) checked.push_back(request.pass);
    EXPECT_EQ(request.last_pass, request.pass == 7);
  }
  EXPECT_EQ(checked, (std::vector<int>{3, 6, 7}));
  EXPECT_EQ(summary->stop_reason(), "max_passes");
  EXPECT_EQ(summary->passes(), 7);
  EXPECT_EQ(summary->oracle_calls(), 7 * kExamples);
  EXPECT_EQ(summary->solver(), "scripted");
  EXPECT_DOUBLE_EQ(summary->lambda(), 0.25);
  EXPECT_EQ(summary->num_examples(), kExamples);
  EXPECT_EQ(summary->dim(), 10);
  EXPECT_DOUBLE_EQ(summary->gap(), 0.5);
  EXPECT_DOUBLE_EQ(summary->primal(), 1.5);
  ASSERT_EQ(monitor.records().size(), 7u);
  const PassRecord& third = monitor.records()[2];
  EXPECT_EQ(third.pass(), 3);
  EXPECT_TRUE(third.gap_exact());
  EXPECT_DOUBLE_EQ(third.gap(), 0.5);
  EXPECT_EQ(third.oracle_calls(), 3 * kExamples);
  EXPECT_DOUBLE_EQ(third.effective_passes(), 3.0);
  EXPECT_FALSE(monitor.records()[1].has_gap());
  // No evaluator: the point is never formed.
  EXPECT_EQ(steps.points_formed, 0);
}

TEST(PassDriverTest, StopsOnTheFirstCertifiedGap) {
  const SolverConfig config = Config(100, 2, 0.1);
  ScriptedSteps steps({1, 0.5, 0.3, 0.2, 0.05, 0.01, 0.01, 0.01});
  PassDriver driver(config, "scripted", 1, kExamples, 1, nullptr);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  // Pass 5's gap is small but unchecked; pass 6 certifies it.
  EXPECT_EQ(summary->passes(), 6);
  EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
  EXPECT_DOUBLE_EQ(summary->gap(), 0.01);
}

// The certificate is DualityGap{1 + gap, 1, gap}: the primal is 1 + gap, so
// a relative tolerance of 0.25 holds once gap <= 1/3.
TEST(PassDriverTest, RelativeToleranceStopsOnGapOverPrimal) {
  SolverConfig config = Config(100, 1, 0);
  config.set_relative_gap_tolerance(0.25);
  ScriptedSteps steps({1, 0.5, 0.34, 0.3, 0.01});
  PassDriver driver(config, "scripted", 1, kExamples, 1, nullptr);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  // 0.34 > 0.25 · 1.34 = 0.335; 0.3 <= 0.25 · 1.3 = 0.325.
  EXPECT_EQ(summary->passes(), 4);
  EXPECT_EQ(summary->stop_reason(), "relative_gap_tolerance");
  EXPECT_DOUBLE_EQ(summary->gap(), 0.3);
}

TEST(PassDriverTest, AbsoluteToleranceIsNamedWhenBothHold) {
  SolverConfig config = Config(100, 1, 0.4);
  config.set_relative_gap_tolerance(0.5);
  ScriptedSteps steps({1, 0.3});
  PassDriver driver(config, "scripted", 1, kExamples, 1, nullptr);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  // Pass 1: 1 <= 0.5 · 2 by the relative rule alone.
  EXPECT_EQ(summary->passes(), 1);
  EXPECT_EQ(summary->stop_reason(), "relative_gap_tolerance");
  // 0.3 is within both 0.4 and 0.5 · 1.3.
  ScriptedSteps both({0.3});
  PassDriver second(config, "scripted", 1, kExamples, 1, nullptr);
  summary = second.Run(&both);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->passes(), 1);
  EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
}

TEST(PassDriverTest, RelativeToleranceOnlyOnCheckedPassesAndCapped) {
  SolverConfig config = Config(6, 5, 0);
  config.set_relative_gap_tolerance(0.1);
  // Within 10% from pass 2 on, but checked at pass 5 only (and the last).
  ScriptedSteps steps({1, 0.01, 0.01, 0.01, 0.5, 0.01});
  PassDriver driver(config, "scripted", 1, kExamples, 1, nullptr);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->passes(), 6);
  EXPECT_EQ(summary->stop_reason(), "relative_gap_tolerance");
  // The cap ends a run the certificate does not.
  ScriptedSteps far({1, 1, 1, 1, 1, 1});
  PassDriver capped(config, "scripted", 1, kExamples, 1, nullptr);
  summary = capped.Run(&far);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->passes(), 6);
  EXPECT_EQ(summary->stop_reason(), "max_passes");
}

TEST(PassDriverTest, HeuristicStopEvaluatesTheFormedPoint) {
  SolverConfig config = Config(100, 50, 1e-9);
  ScriptedSteps steps(std::vector<double>(10, 1));
  steps.estimate_converges_at = 4;
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  std::vector<double> evaluated;
  monitor.SetEvaluator("score", 1000, [&](absl::Span<const double> w) {
    evaluated.assign(w.begin(), w.end());
    return absl::StatusOr<double>(w.size());
  });
  PassDriver driver(config, "scripted", 1, kExamples, 1, &monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->passes(), 4);
  EXPECT_EQ(summary->stop_reason(), "gap_estimate");
  EXPECT_FALSE(summary->has_gap());
  // The final record is evaluated on the point, formed for it.
  EXPECT_EQ(evaluated, std::vector<double>{0.5});
  EXPECT_EQ(steps.points_formed, 1);
  EXPECT_TRUE(monitor.records().back().has_eval_score());
}

TEST(PassDriverTest, EvaluationCadenceIsPassedToTheSteps) {
  const SolverConfig config = Config(6, 10, 1e-9);
  ScriptedSteps steps(std::vector<double>(6, 1));
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetEvaluator("score", 4, [](absl::Span<const double>) {
    return absl::StatusOr<double>(1.0);
  });
  PassDriver driver(config, "scripted", 1, kExamples, 1, &monitor);
  ASSERT_TRUE(driver.Run(&steps).ok());
  std::vector<int> due;
  for (const PassEndRequest& request : steps.requests) {
    if (request.evaluation_due) due.push_back(request.pass);
  }
  EXPECT_EQ(due, (std::vector<int>{4, 6}));
  EXPECT_EQ(steps.points_formed, 2);
}

TEST(PassDriverTest, EvaluationsAreLeftOutOfTheTrainingClock) {
  // Scripted steps take microseconds; each of the three evaluations sleeps
  // 0.2 s, so a clock that counted them would pass 0.6 s.
  const SolverConfig config = Config(3, 10, 1e-9);
  ScriptedSteps steps(std::vector<double>(3, 1));
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetEvaluator("score", 1, [](absl::Span<const double>) {
    absl::SleepFor(absl::Milliseconds(200));
    return absl::StatusOr<double>(1.0);
  });
  PassDriver driver(config, "scripted", 1, kExamples, 1, &monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(monitor.records().size(), 3u);
  // Each record counts the evaluations made before it.
  for (int k = 0; k < 3; ++k) {
    EXPECT_GE(monitor.records()[k].evaluation_seconds(), 0.2 * k - 1e-3);
    EXPECT_LT(monitor.records()[k].seconds(), 0.2);
  }
  EXPECT_LT(summary->seconds(), 0.2);
}

TEST(PassDriverTest, PrimalOnlySolversAndOracleCallBudget) {
  const SolverConfig config = Config(5, 1, 1e-9);
  ScriptedSteps steps(std::vector<double>(5, 0.25));
  steps.with_dual = false;
  steps.calls_per_example = 2;  // an SVRG epoch: 2n calls
  PassDriver driver(config, "scripted", 1, kExamples, 1, nullptr);
  driver.CountBudgetInOracleCalls();
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  // 5 passes' worth of calls: 3 epochs (6 passes of calls, the last one
  // crossing the budget).
  EXPECT_EQ(summary->passes(), 3);
  EXPECT_EQ(summary->oracle_calls(), 6 * kExamples);
  EXPECT_FALSE(summary->has_gap());
  EXPECT_DOUBLE_EQ(summary->primal(), 1.25);
  EXPECT_EQ(summary->stop_reason(), "max_passes");
}

TEST(PassDriverTest, StartCertificateWithinToleranceIsPassZero) {
  class Optimal : public ScriptedSteps {
   public:
    Optimal() : ScriptedSteps({}) {}
    std::optional<DualityGap> StartCertificate() override {
      return DualityGap{2, 2, 0};
    }
  };
  Optimal steps;
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  PassDriver driver(Config(10, 1, 1e-3), "fw", 1, kExamples, 1, &monitor);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->passes(), 0);
  EXPECT_EQ(summary->stop_reason(), "gap_tolerance");
  ASSERT_EQ(monitor.records().size(), 1u);
  EXPECT_EQ(monitor.records()[0].pass(), 0);
  EXPECT_TRUE(steps.requests.empty());
}

TEST(PassDriverTest, TimeBudgetStopsAfterThePass) {
  SolverConfig config = Config(1000, 1000, 1e-9);
  config.set_max_seconds(1e-9);
  ScriptedSteps steps(std::vector<double>(1000, 1));
  PassDriver driver(config, "scripted", 1, kExamples, 1, nullptr);
  EXPECT_TRUE(driver.Expired(0));
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->passes(), 1);
  EXPECT_EQ(summary->stop_reason(), "max_seconds");
  // The last pass ends certified (final_gap).
  EXPECT_TRUE(steps.requests[0].last_pass);
  EXPECT_TRUE(steps.requests[0].gap_check_due);
  EXPECT_TRUE(summary->has_gap());
}

TEST(PassDriverTest, AnInterruptEndsTheRunCertifiedAndASecondSkipsTheGap) {
  for (int signals : {1, 2}) {
    ClearInterruptRequests();
    PassDriver driver(Config(100, 50, 1e-9), "scripted", 1, kExamples, 1,
                      nullptr);
    class Interrupting : public ScriptedSteps {
     public:
      Interrupting(int signals)
          : ScriptedSteps(std::vector<double>(100, 1)), signals_(signals) {}
      absl::Status RunSteps(int pass, PassDriver* driver) override {
        if (pass == 3) {
          for (int k = 0; k < signals_; ++k) RequestInterrupt(2);
        }
        EXPECT_EQ(driver->Expired(0), pass >= 3);
        return ScriptedSteps::RunSteps(pass, driver);
      }

     private:
      int signals_;
    };
    Interrupting interrupting(signals);
    absl::StatusOr<TrainingSummary> summary = driver.Run(&interrupting);
    ClearInterruptRequests();
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(summary->stop_reason(), "interrupted");
    EXPECT_EQ(summary->passes(), 3);
    EXPECT_EQ(summary->has_gap(), signals == 1);
    EXPECT_TRUE(interrupting.requests.back().last_pass);
  }
}

TEST(PassDriverTest, StepErrorsEndTheRun) {
  ScriptedSteps steps(std::vector<double>(5, 1));
  steps.fail_at = 2;
  PassDriver driver(Config(5, 1, 1e-9), "scripted", 1, kExamples, 1, nullptr);
  absl::StatusOr<TrainingSummary> summary = driver.Run(&steps);
  EXPECT_EQ(summary.status().message(), "diverged");
  EXPECT_EQ(steps.requests.size(), 1u);
}

TEST(PassDriverTest, StopReasonNames) {
  EXPECT_EQ(StopReasonName(StopReason::kMaxPasses), "max_passes");
  EXPECT_EQ(StopReasonName(StopReason::kMaxSeconds), "max_seconds");
  EXPECT_EQ(StopReasonName(StopReason::kGapTolerance), "gap_tolerance");
  EXPECT_EQ(StopReasonName(StopReason::kRelativeGap), "relative_gap_tolerance");
  EXPECT_EQ(StopReasonName(StopReason::kGapEstimate), "gap_estimate");
}

}  // namespace
}  // namespace chaintag
