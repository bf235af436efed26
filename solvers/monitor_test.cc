#include "solvers/monitor.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(MonitorTest, LogsOneJsonRecordPerPassAndEvaluatesOnSchedule) {
  const std::string path = TempPath("monitor.jsonl");
  std::vector<int> evaluated_at;
  {
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    ASSERT_TRUE(monitor.OpenLog(path).ok());
    int pass = 0;
    monitor.SetEvaluator(
        "test_F1", 3,
        [&](absl::Span<const double> w) -> absl::StatusOr<double> {
          evaluated_at.push_back(pass);
          return w[0] * 10;
        });
    const std::vector<double> w = {4.5};
    for (pass = 1; pass <= 7; ++pass) {
      PassRecord record;
      record.set_solver("test");
      record.set_pass(pass);
      record.set_dual(0.5 * pass);
      if (pass == 6) {
        record.set_primal(4);
        record.set_gap(1);
        record.set_gap_exact(true);
      }
      ASSERT_TRUE(monitor.Record(record, w, /*final_pass=*/pass == 7).ok());
    }
    EXPECT_EQ(monitor.records().size(), 7u);
  }
  // Every third pass and the final one.
  EXPECT_EQ(evaluated_at, (std::vector<int>{3, 6, 7}));

  std::ifstream in(path);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    ++count;
    PassRecord record;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(line, &record).ok())
        << line;
    EXPECT_EQ(record.pass(), count);
    EXPECT_DOUBLE_EQ(record.dual(), 0.5 * count);
    EXPECT_EQ(record.has_eval_score(), count == 3 || count == 6 || count == 7);
    if (record.has_eval_score()) {
      EXPECT_DOUBLE_EQ(record.eval_score(), 45);
      EXPECT_EQ(record.eval_metric(), "test_F1");
    }
    EXPECT_EQ(record.has_gap(), count == 6);
  }
  EXPECT_EQ(count, 7);
}

TEST(MonitorTest, EvaluatorErrorsPropagate) {
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetEvaluator("x", 1, [](absl::Span<const double>) {
    return absl::StatusOr<double>(absl::InternalError("boom"));
  });
  PassRecord record;
  record.set_pass(1);
  const std::vector<double> w = {0};
  EXPECT_EQ(monitor.Record(record, w, false).code(),
            absl::StatusCode::kInternal);
}

TEST(MonitorTest, UnwritableLogIsAnError) {
  Monitor monitor;
  absl::Status status = monitor.OpenLog("/nonexistent-dir/log.jsonl");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent-dir/log.jsonl"),
            std::string::npos);
}

}  // namespace
}  // namespace chaintag
