#include "tools/svg_plot.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

// True when every tag is closed in order: a minimal well-formedness check
// (the renderer writes no comments, CDATA or '>' inside attribute values).
bool TagsBalanced(const std::string& xml, std::string* error) {
  std::vector<std::string> open;
  size_t pos = 0;
  while ((pos = xml.find('<', pos)) != std::string::npos) {
    const size_t end = xml.find('>', pos);
    if (end == std::string::npos) {
      *error = "unterminated tag";
      return false;
    }
    std::string tag = xml.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty()) {
      *error = "empty tag";
      return false;
    }
    if (tag[0] == '?') continue;  // XML declaration
    const bool closing = tag[0] == '/';
    const bool self_closing = tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \t\n/"));
    if (closing) {
      if (open.empty() || open.back() != name) {
        *error = "unexpected </" + name + ">";
        return false;
      }
      open.pop_back();
    } else if (!self_closing) {
      open.push_back(name);
    }
  }
  if (!open.empty()) {
    *error = "unclosed <" + open.back() + ">";
    return false;
  }
  return true;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

PlotSeries MakeSeries(const std::string& label, std::vector<double> xs,
                      std::vector<double> ys) {
  PlotSeries s;
  s.label = label;
  for (size_t i = 0; i < xs.size(); ++i) {
    s.points.push_back({xs[i], ys[i], ys[i] / 2, ys[i] * 2});
  }
  return s;
}

TEST(LogAxisTicksTest, DecadesCoverTheRange) {
  double lo = 0, hi = 0;
  std::vector<AxisTick> ticks = LogAxisTicks(3e-4, 2.0, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 1e-4);
  EXPECT_DOUBLE_EQ(hi, 10);
  ASSERT_EQ(ticks.size(), 6u);
  const double expected[] = {1e-4, 1e-3, 1e-2, 1e-1, 1, 10};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(ticks[i].value, expected[i], 1e-15);
  EXPECT_EQ(ticks[0].label, "1e-4");
  EXPECT_EQ(ticks[1].label, "0.001");
  EXPECT_EQ(ticks[4].label, "1");
  EXPECT_EQ(ticks[5].label, "10");
}

TEST(LogAxisTicksTest, ExactPowersStayOnTheirDecade) {
  double lo = 0, hi = 0;
  LogAxisTicks(1e-3, 1e-1, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 1e-3);
  EXPECT_DOUBLE_EQ(hi, 1e-1);
}

TEST(LogAxisTicksTest, NarrowRangeGetsIntermediateTicks) {
  double lo = 0, hi = 0;
  std::vector<AxisTick> ticks = LogAxisTicks(0.3, 0.7, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 0.1);
  EXPECT_DOUBLE_EQ(hi, 1);
  ASSERT_EQ(ticks.size(), 4u);  // 0.1 0.2 0.5 1
  EXPECT_EQ(ticks[1].label, "0.2");
  EXPECT_EQ(ticks[2].label, "0.5");
}

TEST(LogAxisTicksTest, ManyDecadesAreThinned) {
  double lo = 0, hi = 0;
  std::vector<AxisTick> ticks = LogAxisTicks(1e-12, 1e8, &lo, &hi);
  EXPECT_LE(ticks.size(), 11u);
  EXPECT_GE(ticks.size(), 5u);
}

TEST(AxisScaleTest, LogTicksAreEvenlySpacedInPixels) {
  AxisScale axis;
  axis.log = true;
  axis.lo = 1e-4;
  axis.hi = 10;
  axis.pixel_lo = 500;
  axis.pixel_hi = 0;
  EXPECT_DOUBLE_EQ(axis.ToPixel(1e-4), 500);
  EXPECT_DOUBLE_EQ(axis.ToPixel(10), 0);
  EXPECT_NEAR(axis.ToPixel(1e-3), 400, 1e-9);
  EXPECT_NEAR(axis.ToPixel(1), 100, 1e-9);
  EXPECT_NEAR(axis.ToPixel(std::sqrt(10.0) * 1e-4), 450, 1e-9);
}

TEST(LinearAxisTicksTest, NiceSteps) {
  double lo = 0, hi = 0;
  std::vector<AxisTick> ticks = LinearAxisTicks(0, 47, 8, &lo, &hi);
  EXPECT_DOUBLE_EQ(lo, 0);
  EXPECT_DOUBLE_EQ(hi, 50);
  ASSERT_EQ(ticks.size(), 6u);  // 47/8 rounds up to a step of 10
  EXPECT_EQ(ticks[1].label, "10");
  ticks = LinearAxisTicks(0.12, 0.87, 5, &lo, &hi);
  EXPECT_NEAR(lo, 0.0, 1e-12);
  EXPECT_NEAR(hi, 1.0, 1e-12);
  EXPECT_EQ(ticks[1].label, "0.2");
}

TEST(LinearAxisTicksTest, DegenerateRange) {
  double lo = 0, hi = 0;
  std::vector<AxisTick> ticks = LinearAxisTicks(3, 3, 5, &lo, &hi);
  EXPECT_LT(lo, 3);
  EXPECT_GT(hi, 3);
  EXPECT_FALSE(ticks.empty());
}

TEST(RenderSvgPlotTest, WellFormedWithLinesBandsAndLegend) {
  PlotSeries a =
      MakeSeries("bcfw <uniform> & co", {0, 1, 2, 3}, {1, 0.1, 0.01, 0.001});
  PlotSeries b = MakeSeries("fw", {0, 1, 2, 3}, {2, 1, 0.5, 0.2});
  b.dashed = true;
  b.band = false;
  PlotOptions options;
  options.title = "gap vs passes";
  options.x_label = "effective passes";
  options.y_label = "duality gap";
  const std::string svg = RenderSvgPlot({a, b}, options);
  std::string error;
  EXPECT_TRUE(TagsBalanced(svg, &error)) << error << "\n" << svg;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(Count(svg, "<polygon class=\"band\""), 1u);
  EXPECT_EQ(Count(svg, "<polyline class=\"line\""), 2u);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find("bcfw &lt;uniform&gt; &amp; co"), std::string::npos);
  EXPECT_NE(svg.find(">gap vs passes<"), std::string::npos);
  EXPECT_NE(svg.find(">1e-4<"), std::string::npos);  // band reaches 5e-4
}

TEST(RenderSvgPlotTest, BandPolygonTracesMaxForwardAndMinBack) {
  PlotSeries s;
  s.points = {{1, 1, 0.5, 2}, {2, 1, 0.5, 2}};
  PlotOptions options;
  options.log_y = false;
  const std::string svg = RenderSvgPlot({s}, options);
  const size_t start = svg.find("<polygon class=\"band\" points=\"");
  ASSERT_NE(start, std::string::npos);
  const size_t begin = svg.find('"', svg.find("points=", start)) + 1;
  const std::string points = svg.substr(begin, svg.find('"', begin) - begin);
  // Four vertices: (x1,max) (x2,max) (x2,min) (x1,min).
  EXPECT_EQ(Count(points, ","), 4u);
  EXPECT_EQ(Count(points, " "), 3u);
}

TEST(RenderSvgPlotTest, NonPositiveAndNanSkippedOnLogAxis) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  PlotSeries s =
      MakeSeries("gaps", {0, 1, 2, 3, 4, 5}, {1, 0, nan, 0.1, -1, 0.01});
  s.points[1].y_min = s.points[1].y_max = 0;
  s.points[4].y_min = -2;
  const std::string svg = RenderSvgPlot({s}, PlotOptions());
  std::string error;
  EXPECT_TRUE(TagsBalanced(svg, &error)) << error;
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  // Only isolated drawable points remain: no segment has two points.
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
  EXPECT_EQ(Count(svg, "<circle"), 3u);
}

TEST(RenderSvgPlotTest, EmptySeriesAndNoSeries) {
  PlotSeries empty;
  empty.label = "nothing";
  for (const auto& series :
       {std::vector<PlotSeries>{}, std::vector<PlotSeries>{empty}}) {
    const std::string svg = RenderSvgPlot(series, PlotOptions());
    std::string error;
    EXPECT_TRUE(TagsBalanced(svg, &error)) << error;
    EXPECT_NE(svg.find("no data"), std::string::npos);
  }
}

}  // namespace
}  // namespace chaintag
