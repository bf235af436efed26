#include "tools/regpath_plot.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

RegpathRun TwoPointRun() {
  RegpathRun run;
  run.name = "tiny";
  run.result.path.score_name = "dev_F1";
  run.result.path.best = 0;
  PathPoint point;
  point.lambda = 4;
  point.cumulative_passes = 3;
  run.result.path.points.push_back(point);
  point.lambda = 1;
  point.cumulative_passes = 9;
  run.result.path.points.push_back(point);
  run.result.path.scores = {80, 70};
  return run;
}

TEST(RegpathPlotTest, StacksTheScoreAndThePasses) {
  const std::string svg = RegpathSvg(TwoPointRun());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("height=\"1080\""));
  EXPECT_THAT(svg, HasSubstr("<svg y=\"540\""));
  EXPECT_THAT(svg, HasSubstr("tiny: dev_F1 along the regularization path"));
  EXPECT_THAT(svg, HasSubstr("cumulative effective passes"));
  // The score and the path's passes; no grid.
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_EQ(Count(svg, "grid, cold"), 0);
}

TEST(RegpathPlotTest, GridsAreDashedCurvesOfThePasses) {
  RegpathRun run = TwoPointRun();
  run.grid_cold = run.result.path.points;
  run.grid_warm = run.result.path.points;
  const std::string svg = RegpathSvg(run);
  EXPECT_EQ(Count(svg, "<polyline"), 4);
  EXPECT_THAT(svg, HasSubstr("grid, cold"));
  EXPECT_THAT(svg, HasSubstr("grid, warm"));
}

TEST(RegpathPlotTest, UnwritablePathIsAnError) {
  EXPECT_FALSE(WriteRegpathSvg(TwoPointRun(), "/no/such/dir/x.svg").ok());
}

}  // namespace
}  // namespace chaintag
