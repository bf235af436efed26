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

namespace {

// One picture being drawn: the layout (margins, axes) decided once, then
// the SVG written layer by layer.
class SvgPlotter {
 public:
  SvgPlotter(const std::vector<PlotSeries>& series, const PlotOptions& options)
      : series_(series), options_(options) {}

  std::string Render() {
    DataRanges();
    Layout();
    Header();
    Grid();
    svg_ += "<g clip-path=\"url(#plot-area)\">\n";
    // Bands first, so every line stays on top of every band.
    for (size_t i = 0; i < series_.size(); ++i) Band(i);
    for (size_t i = 0; i < series_.size(); ++i) Line(i);
    svg_ += "</g>\n";
    FrameAndLabels();
    Legend();
    svg_ += "</svg>\n";
    return std::move(svg_);
  }

 private:
  std::string ColorOf(size_t index) const {
    const PlotSeries& s = series_[index];
    const int c = s.color >= 0 ? s.color : static_cast<int>(index);
    return kPalette[c % kPaletteSize];
  }

  // Data ranges over what can be drawn.
  void DataRanges() {
    for (const PlotSeries& s : series_) {
      for (const PlotPoint& p : s.points) {
        if (!Drawable(p.x, options_.log_x)) continue;
        bool any = false;
        if (Drawable(p.y, options_.log_y)) {
          y_range_.Add(p.y);
          any = true;
        }
        if (s.band && Drawable(p.y_min, options_.log_y) &&
            Drawable(p.y_max, options_.log_y)) {
          y_range_.Add(p.y_min);
          y_range_.Add(p.y_max);
          any = true;
        }
        if (any) x_range_.Add(p.x);
      }
    }
    no_data_ = x_range_.empty() || y_range_.empty();
    if (no_data_) {
      x_range_ = Range();
      y_range_ = Range();
      x_range_.Add(options_.log_x ? 1 : 0);
      x_range_.Add(options_.log_x ? 10 : 1);
      y_range_.Add(options_.log_y ? 1e-3 : 0);
      y_range_.Add(1);
    }
    // Passes and seconds read best from 0 unless the data sit far from it.
    if (!options_.log_x && x_range_.lo > 0 &&
        x_range_.lo <= 0.5 * x_range_.hi) {
      x_range_.lo = 0;
    }
  }

  // Legend in a column right of the plot so it never hides data.
  void Layout() {
    size_t longest_label = 0;
    for (const PlotSeries& s : series_) {
      longest_label = std::max(longest_label, s.label.size());
    }
    top_ = options_.title.empty() ? 20 : 44;
    right_ = longest_label == 0 ? 24 : 24 + 36 + kCharWidth * longest_label;
    // A long legend widens the picture rather than squeezing the data.
    width_ = std::max<double>(options_.width, kLeft + right_ + 560);
    height_ = std::max<double>(options_.height, top_ + kBottom + 150);
    x_ticks_ = AxisFor(x_range_.lo, x_range_.hi, options_.log_x, 8, &x_axis_.lo,
                       &x_axis_.hi);
    y_ticks_ = AxisFor(y_range_.lo, y_range_.hi, options_.log_y, 6, &y_axis_.lo,
                       &y_axis_.hi);
    x_axis_.log = options_.log_x;
    x_axis_.pixel_lo = kLeft;
    x_axis_.pixel_hi = width_ - right_;
    y_axis_.log = options_.log_y;
    y_axis_.pixel_lo = height_ - kBottom;
    y_axis_.pixel_hi = top_;
  }

  void Header() {
    const int width = static_cast<int>(width_);
    const int height = static_cast<int>(height_);
    svg_ = absl::StrFormat(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
        "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
        "font-size=\"12\">\n"
        "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
        "<defs><clipPath id=\"plot-area\"><rect x=\"%s\" y=\"%s\" "
        "width=\"%s\" height=\"%s\"/></clipPath></defs>\n",
        width, height, width, height, width, height, Num(kLeft - kClipMargin),
        Num(top_ - kClipMargin),
        Num(x_axis_.pixel_hi - kLeft + 2 * kClipMargin),
        Num(y_axis_.pixel_lo - top_ + 2 * kClipMargin));
  }

  // Grid lines and tick labels.
  void Grid() {
    svg_ += "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
    for (const AxisTick& t : x_ticks_) {
      const double px = x_axis_.ToPixel(t.value);
      absl::StrAppend(&svg_, "<line x1=\"", Num(px), "\" y1=\"", Num(top_),
                      "\" x2=\"", Num(px), "\" y2=\"", Num(y_axis_.pixel_lo),
                      "\"/>\n");
    }
    for (const AxisTick& t : y_ticks_) {
      const double py = y_axis_.ToPixel(t.value);
      absl::StrAppend(&svg_, "<line x1=\"", Num(kLeft), "\" y1=\"", Num(py),
                      "\" x2=\"", Num(x_axis_.pixel_hi), "\" y2=\"", Num(py),
                      "\"/>\n");
    }
    svg_ += "</g>\n<g fill=\"#333333\">\n";
    for (const AxisTick& t : x_ticks_) {
      absl::StrAppend(&svg_, "<text x=\"", Num(x_axis_.ToPixel(t.value)),
                      "\" y=\"", Num(y_axis_.pixel_lo + 18),
                      "\" text-anchor=\"middle\">", EscapeXml(t.label),
                      "</text>\n");
    }
    for (const AxisTick& t : y_ticks_) {
      absl::StrAppend(&svg_, "<text x=\"", Num(kLeft - 8), "\" y=\"",
                      Num(y_axis_.ToPixel(t.value) + 4),
                      "\" text-anchor=\"end\">", EscapeXml(t.label),
                      "</text>\n");
    }
    svg_ += "</g>\n";
  }

  // One polygon per run of drawable points: upper edge forward, lower edge
  // back.
  void Band(size_t index) {
    const PlotSeries& s = series_[index];
    if (!s.band) return;
    std::vector<const PlotPoint*> run;
    auto flush = [&]() {
      if (run.size() >= 2) {
        std::string points;
        for (const PlotPoint* p : run) {
          absl::StrAppend(&points, Num(x_axis_.ToPixel(p->x)), ",",
                          Num(y_axis_.ToPixel(p->y_max)), " ");
        }
        for (auto it = run.rbegin(); it != run.rend(); ++it) {
          absl::StrAppend(&points, Num(x_axis_.ToPixel((*it)->x)), ",",
                          Num(y_axis_.ToPixel((*it)->y_min)), " ");
        }
        points.pop_back();
        absl::StrAppend(&svg_, "<polygon class=\"band\" points=\"", points,
                        "\" fill=\"", ColorOf(index),
                        "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n");
      }
      run.clear();
    };
    for (const PlotPoint& p : s.points) {
      if (Drawable(p.x, options_.log_x) && Drawable(p.y_min, options_.log_y) &&
          Drawable(p.y_max, options_.log_y)) {
        run.push_back(&p);
      } else {
        flush();
      }
    }
    flush();
  }

  // One polyline per run of drawable points, with a dot at each.
  void Line(size_t index) {
    const PlotSeries& s = series_[index];
    const std::string color = ColorOf(index);
    const std::string dash =
        s.dashed ? " stroke-dasharray=\"6,4\" stroke-opacity=\"0.8\"" : "";
    std::string points;
    int count = 0;
    auto flush = [&]() {
      if (count >= 2) {
        points.pop_back();
        absl::StrAppend(&svg_, "<polyline class=\"line\" points=\"", points,
                        "\" fill=\"none\" stroke=\"", color,
                        "\" stroke-width=\"2\"", dash, "/>\n");
      }
      points.clear();
      count = 0;
    };
    for (const PlotPoint& p : s.points) {
      if (Drawable(p.x, options_.log_x) && Drawable(p.y, options_.log_y)) {
        const double px = x_axis_.ToPixel(p.x), py = y_axis_.ToPixel(p.y);
        absl::StrAppend(&points, Num(px), ",", Num(py), " ");
        ++count;
        if (s.markers) {
          absl::StrAppend(&svg_, "<circle cx=\"", Num(px), "\" cy=\"", Num(py),
                          "\" r=\"", s.dashed ? "1.5" : "2.5", "\" fill=\"",
                          color, "\"/>\n");
        }
      } else {
        flush();
      }
    }
    flush();
  }

  void FrameAndLabels() {
    const double middle_x = (kLeft + x_axis_.pixel_hi) / 2;
    const double middle_y = (top_ + y_axis_.pixel_lo) / 2;
    absl::StrAppend(&svg_, "<rect x=\"", Num(kLeft), "\" y=\"", Num(top_),
                    "\" width=\"", Num(x_axis_.pixel_hi - kLeft),
                    "\" height=\"", Num(y_axis_.pixel_lo - top_),
                    "\" fill=\"none\" stroke=\"#333333\"/>\n");
    if (no_data_) {
      absl::StrAppend(
          &svg_, "<text x=\"", Num(middle_x), "\" y=\"", Num(middle_y),
          "\" text-anchor=\"middle\" fill=\"#999999\">no data</text>\n");
    }
    if (!options_.x_label.empty()) {
      absl::StrAppend(&svg_, "<text x=\"", Num(middle_x), "\" y=\"",
                      Num(height_ - 14),
                      "\" text-anchor=\"middle\" font-size=\"13\">",
                      EscapeXml(options_.x_label), "</text>\n");
    }
    if (!options_.y_label.empty()) {
      absl::StrAppend(&svg_, "<text x=\"18\" y=\"", Num(middle_y),
                      "\" text-anchor=\"middle\" font-size=\"13\" "
                      "transform=\"rotate(-90 18 ",
                      Num(middle_y), ")\">", EscapeXml(options_.y_label),
                      "</text>\n");
    }
    if (!options_.title.empty()) {
      absl::StrAppend(&svg_, "<text x=\"", Num(width_ / 2),
                      "\" y=\"26\" text-anchor=\"middle\" font-size=\"15\" "
                      "font-weight=\"bold\">",
                      EscapeXml(options_.title), "</text>\n");
    }
  }

  void Legend() {
    double legend_y = top_ + 12;
    const double legend_x = x_axis_.pixel_hi + 16;
    for (size_t i = 0; i < series_.size(); ++i) {
      const PlotSeries& s = series_[i];
      if (s.label.empty()) continue;
      absl::StrAppend(
          &svg_, "<line x1=\"", Num(legend_x), "\" y1=\"", Num(legend_y),
          "\" x2=\"", Num(legend_x + 26), "\" y2=\"", Num(legend_y),
          "\" stroke=\"", ColorOf(i), "\" stroke-width=\"2\"",
          s.dashed ? " stroke-dasharray=\"6,4\"" : "", "/>\n", "<text x=\"",
          Num(legend_x + 32), "\" y=\"", Num(legend_y + 4), "\">",
          EscapeXml(s.label), "</text>\n");
      legend_y += 20;
    }
  }

  static constexpr double kLeft = 80;
  static constexpr double kBottom = 56;

  const std::vector<PlotSeries>& series_;
  const PlotOptions& options_;
  Range x_range_, y_range_;
  bool no_data_ = false;
  double top_ = 0, right_ = 0, width_ = 0, height_ = 0;
  AxisScale x_axis_, y_axis_;
  std::vector<AxisTick> x_ticks_, y_ticks_;
  std::string svg_;
};

}  // namespace

std::string RenderSvgPlot(const std::vector<PlotSeries>& series,
                          const PlotOptions& options) {
  return SvgPlotter(series, options).Render();
}

}  // namespace chaintag
