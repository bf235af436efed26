#include "tools/regpath_plot.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file_io.h"
#include "tools/svg_plot.h"

namespace chaintag {
namespace {

// The points' `values` (cumulative passes when null) against their λ.
PlotSeries Series(const std::string& label,
                  const std::vector<PathPoint>& points,
                  const std::vector<double>* values, bool dashed) {
  PlotSeries series;
  series.label = label;
  series.band = false;
  series.dashed = dashed;
  for (size_t j = 0; j < points.size(); ++j) {
    PlotPoint p;
    p.x = points[j].lambda;
    p.y = values != nullptr ? (*values)[j] : points[j].cumulative_passes;
    series.points.push_back(p);
  }
  return series;
}

// Two plots stacked in one SVG document: nested <svg> elements.
std::string StackSvgs(const std::string& top, const std::string& bottom,
                      int width, int height) {
  auto body = [](const std::string& svg) {
    const size_t begin = svg.find("<svg");
    return begin == std::string::npos ? svg : svg.substr(begin);
  };
  auto placed = [&](const std::string& svg, int y) {
    std::string inner = body(svg);
    inner.replace(0, 4, absl::StrFormat("<svg y=\"%d\"", y));
    return inner;
  };
  return absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                      "height=\"%d\">\n",
                      width, 2 * height),
      placed(top, 0), "\n", placed(bottom, height), "\n</svg>\n");
}

}  // namespace

std::string RegpathSvg(const RegpathRun& run) {
  const LambdaPath& path = run.result.path;
  PlotOptions score_options;
  score_options.title = absl::StrCat(run.name, ": ", path.score_name,
                                     " along the regularization path");
  score_options.x_label = "lambda";
  score_options.y_label = path.score_name;
  score_options.log_x = true;
  score_options.log_y = false;
  PlotOptions passes_options = score_options;
  passes_options.title = "cumulative effective passes";
  passes_options.y_label = "passes";
  passes_options.log_y = true;
  std::vector<PlotSeries> passes = {
      Series("path", path.points, nullptr, false)};
  if (!run.grid_cold.empty()) {
    passes.push_back(Series("grid, cold", run.grid_cold, nullptr, true));
    passes.push_back(Series("grid, warm", run.grid_warm, nullptr, true));
  }
  return StackSvgs(
      RenderSvgPlot({Series("path", path.points, &path.scores, false)},
                    score_options),
      RenderSvgPlot(passes, passes_options), score_options.width,
      score_options.height);
}

absl::Status WriteRegpathSvg(const RegpathRun& run, const std::string& path) {
  return WriteFileAtomically(path, RegpathSvg(run), "the regpath figure");
}

}  // namespace chaintag
