#include "pipeline/lambda_path.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

// A path of three breakpoints: λ∞ infinite (a problem without loss), a
// zero segment end (ε-approximate for every smaller λ), the second chosen.
LambdaPath ThreePointPath() {
  LambdaPath path;
  path.score_name = "dev_letter_error";
  path.lower_is_better = true;
  path.best = 1;
  PathPoint point;
  point.index = 0;
  point.lambda = std::numeric_limits<double>::infinity();
  point.lambda_end = 4573.0630983032406;
  point.gap = 0.090000000000000122;
  point.stop_reason = "initialization";
  path.points.push_back(point);
  point.index = 1;
  point.lambda = 4573.0630983032406;
  point.lambda_end = 0.1;
  point.gap = 0.0123838567576674;
  point.gap_exact = true;
  point.inner_passes = 1;
  point.cumulative_passes = 5;
  point.seconds = 0.019623984000000001;
  point.stop_reason = "gap_tolerance";
  path.points.push_back(point);
  point.index = 2;
  point.lambda = 0.1;
  point.lambda_end = 0;
  point.inner_passes = 3;
  point.cumulative_passes = 8;
  path.points.push_back(point);
  path.scores = {70.697674418604649, 20.65, 21.0};
  return path;
}

TEST(LambdaPathRecordTest, HoldsEveryPointAndScore) {
  const LambdaPath path = ThreePointPath();
  const LambdaPathRecord record = PathRecord(path);
  EXPECT_EQ(record.score_name(), "dev_letter_error");
  EXPECT_TRUE(record.lower_is_better());
  EXPECT_EQ(record.best(), 1);
  ASSERT_EQ(record.points_size(), 3);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(record.points(j).index(), path.points[j].index);
    EXPECT_EQ(record.points(j).lambda(), path.points[j].lambda);
    EXPECT_EQ(record.points(j).lambda_end(), path.points[j].lambda_end);
    EXPECT_EQ(record.points(j).gap_exact(), path.points[j].gap_exact);
    EXPECT_EQ(record.points(j).inner_passes(), path.points[j].inner_passes);
    EXPECT_EQ(record.points(j).stop_reason(), path.points[j].stop_reason);
    EXPECT_EQ(record.points(j).score(), path.scores[j]);
  }
  // A grid point has no score.
  EXPECT_FALSE(PointRecord(path.points[0]).has_score());
}

TEST(LambdaPathRecordTest, JsonRoundTripsToTheSamePoints) {
  const LambdaPathRecord record = PathRecord(ThreePointPath());
  absl::StatusOr<std::string> json = RecordToJson(record);
  ASSERT_TRUE(json.ok()) << json.status();
  // The .proto's names, zeros and false included, one field a line.
  EXPECT_THAT(*json, HasSubstr("\"lambda_end\": 0,\n"));
  EXPECT_THAT(*json, HasSubstr("\"index\": 0,\n"));
  EXPECT_THAT(*json, HasSubstr("\"gap_exact\": false,\n"));
  EXPECT_THAT(*json, HasSubstr("\"score_name\": \"dev_letter_error\""));
  EXPECT_THAT(*json, HasSubstr("\"lambda\": \"Infinity\""));
  EXPECT_EQ(json->back(), '\n');

  LambdaPathRecord parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &parsed).ok());
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(parsed, record))
      << parsed.DebugString();
}

TEST(LambdaPathRecordTest, RegpathRecordRoundTrips) {
  const LambdaPath path = ThreePointPath();
  RegpathRecord record;
  *record.mutable_path() = PathRecord(path);
  for (const PathPoint& point : path.points) {
    *record.add_grid_cold() = PointRecord(point);
  }
  *record.add_grid_warm() = PointRecord(path.points[2]);
  absl::StatusOr<std::string> json = RecordToJson(record);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"grid_warm\": ["));
  RegpathRecord parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &parsed).ok());
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(parsed, record));
  EXPECT_EQ(parsed.grid_cold_size(), 3);
  EXPECT_EQ(parsed.grid_warm(0).cumulative_passes(), 8);
}

TEST(LambdaPathTableTest, MarksTheChosenRow) {
  const std::string table = FormatPathTable(ThreePointPath());
  EXPECT_THAT(table, HasSubstr("dev_letter_error"));
  EXPECT_THAT(table, HasSubstr("20.65  <- chosen\n"));
}

}  // namespace
}  // namespace chaintag
