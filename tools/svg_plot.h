// A small SVG line-plot renderer for solver comparisons: series of (x, y)
// points, each with an optional min–max band, on linear or log axes, with
// ticks, grid, legend and title. Enough for the "Minding the gaps" style
// gap-vs-passes pictures without a plotting dependency.
//
// Points whose coordinates cannot be drawn (NaN, infinite, or ≤ 0 on a log
// axis) are skipped: a line is broken there rather than the plot failing.
//
// Thread-safety: pure functions over their arguments; safe from any thread.

#ifndef CHAINTAG_TOOLS_SVG_PLOT_H_
#define CHAINTAG_TOOLS_SVG_PLOT_H_

#include <string>
#include <vector>

namespace chaintag {

struct PlotPoint {
  double x = 0;
  double y = 0;
  // The band around y (e.g. min and max over seeds); used when the series
  // has `band` set.
  double y_min = 0;
  double y_max = 0;
};

struct PlotSeries {
  std::string label;  // legend text; empty = not in the legend
  std::vector<PlotPoint> points;
  bool dashed = false;
  bool band = true;     // fill between y_min and y_max
  bool markers = true;  // a dot at every point (sparse curves stay visible)
  // Index into the palette; -1 = the series' position. Lets two series of
  // one run (e.g. exact and estimated gaps) share a colour.
  int color = -1;
};

struct PlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = true;
  int width = 900;
  int height = 540;
};

struct AxisTick {
  double value = 0;
  std::string label;
};

// Maps data values to pixels along one axis. On a log axis `lo` and `hi`
// are data values (> 0) and the mapping is linear in log10.
struct AxisScale {
  double lo = 0;
  double hi = 1;
  bool log = false;
  double pixel_lo = 0;  // pixel of `lo`
  double pixel_hi = 1;  // pixel of `hi`
  double ToPixel(double value) const;
};

// Ticks at powers of ten covering [lo, hi] (0 < lo ≤ hi); `*axis_lo` and
// `*axis_hi` get the enclosing decades. With at most two decades the
// 2× and 5× multiples are added; with many, every k-th decade is kept.
std::vector<AxisTick> LogAxisTicks(double lo, double hi, double* axis_lo,
                                   double* axis_hi);

// Ticks at 1/2/5 × 10^k steps covering [lo, hi], about `target` of them;
// `*axis_lo` and `*axis_hi` get the rounded-out range.
std::vector<AxisTick> LinearAxisTicks(double lo, double hi, int target,
                                      double* axis_lo, double* axis_hi);

// The whole SVG document. Never fails: no drawable data gives empty axes
// with a "no data" note.
std::string RenderSvgPlot(const std::vector<PlotSeries>& series,
                          const PlotOptions& options);

}  // namespace chaintag

#endif  // CHAINTAG_TOOLS_SVG_PLOT_H_
