#include "tools/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace chaintag {
namespace {

// Matplotlib's "tab10": distinguishable, and what readers of the papers'
// figures are used to.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                    "#bcbd22", "#17becf"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// Font metrics are unknown to an SVG writer; this average width of a
// 12px sans-serif character only sizes the legend column.
constexpr double kCharWidth = 7.0;

// Markers on the frame (data at the axis limits) are drawn whole.
constexpr double kClipMargin = 4.0;

bool Drawable(double value, bool log) {
  return std::isfinite(value) && (!log || value > 0);
}

std::string EscapeXml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double value) { return absl::StrFormat("%.2f", value); }

std::string LogTickLabel(int mantissa, int exponent) {
  if (exponent >= -3 && exponent <= 4) {
    return absl::StrFormat("%g", mantissa * std::pow(10.0, exponent));
  }
  return absl::StrCat(mantissa, "e", exponent);
}

// Chooses ticks and the padded range for one axis from its data range.
std::vector<AxisTick> AxisFor(double lo, double hi, bool log, int target,
                              double* axis_lo, double* axis_hi) {
  if (log) return LogAxisTicks(lo, hi, axis_lo, axis_hi);
  return LinearAxisTicks(lo, hi, target, axis_lo, axis_hi);
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double value) {
    lo = std::min(lo, value);
    hi = std::max(hi, value);
  }
  bool empty() const { return lo > hi; }
};

}  // namespace

double AxisScale::ToPixel(double value) const {
  double a = lo, b = hi, v = value;
  if (log) {
    a = std::log10(lo);
    b = std::log10(hi);
    v = std::log10(value);
  }
  if (b == a) return (pixel_lo + pixel_hi) / 2;
  return pixel_lo + (v - a) / (b - a) * (pixel_hi - pixel_lo);
}

std::vector<AxisTick> LogAxisTicks(double lo, double hi, double* axis_lo,
                                   double* axis_hi) {
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi >= lo) || !std::isfinite(hi)) hi = lo;
  // The small slack keeps exact powers of ten (whose log10 may come out a
  // hair off) on their own decade.
  int e_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int e_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (e_hi <= e_lo) e_hi = e_lo + 1;
  *axis_lo = std::pow(10.0, e_lo);
  *axis_hi = std::pow(10.0, e_hi);
  const int decades = e_hi - e_lo;
  std::vector<AxisTick> ticks;
  const int step = decades > 10 ? (decades + 7) / 8 : 1;
  for (int e = e_lo; e <= e_hi; ++e) {
    if ((e - e_lo) % step == 0) {
      ticks.push_back({std::pow(10.0, e), LogTickLabel(1, e)});
    }
    if (decades <= 2 && e < e_hi) {
      for (int m : {2, 5}) {
        ticks.push_back({m * std::pow(10.0, e), LogTickLabel(m, e)});
      }
    }
  }
  return ticks;
}

std::vector<AxisTick> LinearAxisTicks(double lo, double hi, int target,
                                      double* axis_lo, double* axis_hi) {
  if (!std::isfinite(lo)) lo = 0;
  if (!std::isfinite(hi) || hi < lo) hi = lo;
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  target = std::max(target, 2);
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  const double first = std::floor(lo / step + 1e-9);
  const double last = std::ceil(hi / step - 1e-9);
  *axis_lo = first * step;
  *axis_hi = last * step;
  std::vector<AxisTick> ticks;
  for (double k = first; k <= last; k += 1) {
    double value = k * step;
    if (std::abs(value) < step * 1e-9) value = 0;  // no "-0"
    ticks.push_back({value, absl::StrFormat("%g", value)});
  }
  return ticks;
}

std::string RenderSvgPlot(const std::vector<PlotSeries>& series,
                          const PlotOptions& options) {
  // Data ranges over what can be drawn.
  Range x_range, y_range;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      if (!Drawable(p.x, options.log_x)) continue;
      bool any = false;
      if (Drawable(p.y, options.log_y)) {
        y_range.Add(p.y);
        any = true;
      }
      if (s.band && Drawable(p.y_min, options.log_y) &&
          Drawable(p.y_max, options.log_y)) {
        y_range.Add(p.y_min);
        y_range.Add(p.y_max);
        any = true;
      }
      if (any) x_range.Add(p.x);
    }
  }
  const bool no_data = x_range.empty() || y_range.empty();
  if (no_data) {
    x_range = Range();
    y_range = Range();
    x_range.Add(options.log_x ? 1 : 0);
    x_range.Add(options.log_x ? 10 : 1);
    y_range.Add(options.log_y ? 1e-3 : 0);
    y_range.Add(1);
  }

  // Passes and seconds read best from 0 unless the data sit far from it.
  if (!options.log_x && x_range.lo > 0 && x_range.lo <= 0.5 * x_range.hi) {
    x_range.lo = 0;
  }

  // Layout: legend in a column right of the plot so it never hides data.
  size_t longest_label = 0;
  for (const PlotSeries& s : series) {
    longest_label = std::max(longest_label, s.label.size());
  }
  const double left = 80, top = options.title.empty() ? 20 : 44, bottom = 56;
  const double right =
      longest_label == 0 ? 24 : 24 + 36 + kCharWidth * longest_label;
  // A long legend widens the picture rather than squeezing the data.
  const double width = std::max<double>(options.width, left + right + 560);
  const double height = std::max<double>(options.height, top + bottom + 150);

  AxisScale x_axis, y_axis;
  std::vector<AxisTick> x_ticks =
      AxisFor(x_range.lo, x_range.hi, options.log_x, 8, &x_axis.lo, &x_axis.hi);
  std::vector<AxisTick> y_ticks =
      AxisFor(y_range.lo, y_range.hi, options.log_y, 6, &y_axis.lo, &y_axis.hi);
  x_axis.log = options.log_x;
  x_axis.pixel_lo = left;
  x_axis.pixel_hi = width - right;
  y_axis.log = options.log_y;
  y_axis.pixel_lo = height - bottom;
  y_axis.pixel_hi = top;

  std::string svg = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
      "<defs><clipPath id=\"plot-area\"><rect x=\"%s\" y=\"%s\" "
      "width=\"%s\" height=\"%s\"/></clipPath></defs>\n",
      static_cast<int>(width), static_cast<int>(height),
      static_cast<int>(width), static_cast<int>(height),
      static_cast<int>(width), static_cast<int>(height),
      Num(left - kClipMargin), Num(top - kClipMargin),
      Num(x_axis.pixel_hi - left + 2 * kClipMargin),
      Num(y_axis.pixel_lo - top + 2 * kClipMargin));

  // Grid and tick labels.
  svg += "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (const AxisTick& t : x_ticks) {
    const double px = x_axis.ToPixel(t.value);
    absl::StrAppend(&svg, "<line x1=\"", Num(px), "\" y1=\"", Num(top),
                    "\" x2=\"", Num(px), "\" y2=\"", Num(y_axis.pixel_lo),
                    "\"/>\n");
  }
  for (const AxisTick& t : y_ticks) {
    const double py = y_axis.ToPixel(t.value);
    absl::StrAppend(&svg, "<line x1=\"", Num(left), "\" y1=\"", Num(py),
                    "\" x2=\"", Num(x_axis.pixel_hi), "\" y2=\"", Num(py),
                    "\"/>\n");
  }
  svg += "</g>\n<g fill=\"#333333\">\n";
  for (const AxisTick& t : x_ticks) {
    absl::StrAppend(&svg, "<text x=\"", Num(x_axis.ToPixel(t.value)), "\" y=\"",
                    Num(y_axis.pixel_lo + 18), "\" text-anchor=\"middle\">",
                    EscapeXml(t.label), "</text>\n");
  }
  for (const AxisTick& t : y_ticks) {
    absl::StrAppend(&svg, "<text x=\"", Num(left - 8), "\" y=\"",
                    Num(y_axis.ToPixel(t.value) + 4), "\" text-anchor=\"end\">",
                    EscapeXml(t.label), "</text>\n");
  }
  svg += "</g>\n";

  // Bands first, so every line stays on top of every band.
  auto color_of = [](const PlotSeries& s, int index) {
    const int c = s.color >= 0 ? s.color : index;
    return kPalette[c % kPaletteSize];
  };
  svg += "<g clip-path=\"url(#plot-area)\">\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    if (!s.band) continue;
    // One polygon per run of drawable points: upper edge forward, lower
    // edge back.
    std::vector<const PlotPoint*> run;
    auto flush = [&]() {
      if (run.size() >= 2) {
        std::string points;
        for (const PlotPoint* p : run) {
          absl::StrAppend(&points, Num(x_axis.ToPixel(p->x)), ",",
                          Num(y_axis.ToPixel(p->y_max)), " ");
        }
        for (auto it = run.rbegin(); it != run.rend(); ++it) {
          absl::StrAppend(&points, Num(x_axis.ToPixel((*it)->x)), ",",
                          Num(y_axis.ToPixel((*it)->y_min)), " ");
        }
        points.pop_back();
        absl::StrAppend(&svg, "<polygon class=\"band\" points=\"", points,
                        "\" fill=\"", color_of(s, i),
                        "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n");
      }
      run.clear();
    };
    for (const PlotPoint& p : s.points) {
      if (Drawable(p.x, options.log_x) && Drawable(p.y_min, options.log_y) &&
          Drawable(p.y_max, options.log_y)) {
        run.push_back(&p);
      } else {
        flush();
      }
    }
    flush();
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    const std::string color = color_of(s, i);
    const std::string dash =
        s.dashed ? " stroke-dasharray=\"6,4\" stroke-opacity=\"0.8\"" : "";
    std::string points;
    int count = 0;
    auto flush = [&]() {
      if (count >= 2) {
        points.pop_back();
        absl::StrAppend(&svg, "<polyline class=\"line\" points=\"", points,
                        "\" fill=\"none\" stroke=\"", color,
                        "\" stroke-width=\"2\"", dash, "/>\n");
      }
      points.clear();
      count = 0;
    };
    for (const PlotPoint& p : s.points) {
      if (Drawable(p.x, options.log_x) && Drawable(p.y, options.log_y)) {
        const double px = x_axis.ToPixel(p.x), py = y_axis.ToPixel(p.y);
        absl::StrAppend(&points, Num(px), ",", Num(py), " ");
        ++count;
        if (s.markers) {
          absl::StrAppend(&svg, "<circle cx=\"", Num(px), "\" cy=\"", Num(py),
                          "\" r=\"", s.dashed ? "1.5" : "2.5", "\" fill=\"",
                          color, "\"/>\n");
        }
      } else {
        flush();
      }
    }
    flush();
  }
  svg += "</g>\n";

  // Frame, labels, title, legend.
  absl::StrAppend(&svg, "<rect x=\"", Num(left), "\" y=\"", Num(top),
                  "\" width=\"", Num(x_axis.pixel_hi - left), "\" height=\"",
                  Num(y_axis.pixel_lo - top),
                  "\" fill=\"none\" stroke=\"#333333\"/>\n");
  if (no_data) {
    absl::StrAppend(
        &svg, "<text x=\"", Num((left + x_axis.pixel_hi) / 2), "\" y=\"",
        Num((top + y_axis.pixel_lo) / 2),
        "\" text-anchor=\"middle\" fill=\"#999999\">no data</text>\n");
  }
  if (!options.x_label.empty()) {
    absl::StrAppend(&svg, "<text x=\"", Num((left + x_axis.pixel_hi) / 2),
                    "\" y=\"", Num(height - 14),
                    "\" text-anchor=\"middle\" font-size=\"13\">",
                    EscapeXml(options.x_label), "</text>\n");
  }
  if (!options.y_label.empty()) {
    const double cy = (top + y_axis.pixel_lo) / 2;
    absl::StrAppend(&svg, "<text x=\"18\" y=\"", Num(cy),
                    "\" text-anchor=\"middle\" font-size=\"13\" "
                    "transform=\"rotate(-90 18 ",
                    Num(cy), ")\">", EscapeXml(options.y_label), "</text>\n");
  }
  if (!options.title.empty()) {
    absl::StrAppend(&svg, "<text x=\"", Num(width / 2),
                    "\" y=\"26\" text-anchor=\"middle\" font-size=\"15\" "
                    "font-weight=\"bold\">",
                    EscapeXml(options.title), "</text>\n");
  }
  double legend_y = top + 12;
  const double legend_x = x_axis.pixel_hi + 16;
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    if (s.label.empty()) continue;
    absl::StrAppend(&svg, "<line x1=\"", Num(legend_x), "\" y1=\"",
                    Num(legend_y), "\" x2=\"", Num(legend_x + 26), "\" y2=\"",
                    Num(legend_y), "\" stroke=\"", color_of(s, i),
                    "\" stroke-width=\"2\"",
                    s.dashed ? " stroke-dasharray=\"6,4\"" : "", "/>\n",
                    "<text x=\"", Num(legend_x + 32), "\" y=\"",
                    Num(legend_y + 4), "\">", EscapeXml(s.label), "</text>\n");
    legend_y += 20;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace chaintag
