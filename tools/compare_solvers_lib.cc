#include "tools/compare_solvers_lib.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "tools/config_flags.h"
#include "tools/svg_plot.h"

namespace chaintag {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A number printed for the table and the TSV: short, but exact enough to
// compare gaps across orders of magnitude.
std::string Format(double value) { return absl::StrFormat("%.4g", value); }

std::string FormatOptional(const std::optional<double>& value,
                           const std::string& missing) {
  return value.has_value() ? Format(*value) : missing;
}

// Columns of display characters, counting a UTF-8 sequence ("—") as one.
size_t DisplayWidth(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++width;
  }
  return width;
}

}  // namespace

absl::StatusOr<RunSpec> ParseRunSpec(absl::string_view spec) {
  spec = absl::StripAsciiWhitespace(spec);
  RunSpec run;
  std::vector<absl::string_view> head =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  run.solver_name = std::string(absl::StripAsciiWhitespace(head[0]));
  if (run.solver_name.empty() || absl::StrContains(run.solver_name, '=')) {
    return absl::InvalidArgumentError(
        absl::StrCat("run spec \"", spec,
                     "\": expected solver_name[:field=value,...], e.g. "
                     "bcfw:sampling=gap,step=pairwise"));
  }
  std::set<std::string> seen;
  if (head.size() == 2) {
    for (absl::string_view piece : absl::StrSplit(head[1], ',')) {
      piece = absl::StripAsciiWhitespace(piece);
      if (piece.empty()) continue;
      std::vector<absl::string_view> kv =
          absl::StrSplit(piece, absl::MaxSplits('=', 1));
      const std::string key(absl::StripAsciiWhitespace(kv[0]));
      if (kv.size() != 2 || key.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "run spec \"", spec, "\": \"", piece, "\" is not field=value"));
      }
      const std::string value(absl::StripAsciiWhitespace(kv[1]));
      if (!seen.insert(key).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "run spec \"", spec, "\": field \"", key, "\" given twice"));
      }
      if (key == "label") {
        if (value.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("run spec \"", spec, "\": empty label"));
        }
        run.label = value;
      } else {
        run.fields.emplace_back(key, value);
      }
    }
  }
  if (run.label.empty()) run.label = std::string(spec);
  return run;
}

absl::StatusOr<std::vector<RunSpec>> ParseRunSpecs(absl::string_view specs) {
  std::vector<RunSpec> runs;
  std::set<std::string> labels, stems;
  for (absl::string_view piece : absl::StrSplit(specs, ';')) {
    if (absl::StripAsciiWhitespace(piece).empty()) continue;
    absl::StatusOr<RunSpec> run = ParseRunSpec(piece);
    if (!run.ok()) return run.status();
    SolverConfig scratch;
    absl::Status status = ApplyRunSpec(*run, &scratch);
    if (!status.ok()) return status;
    // Two labels that differ only in punctuation would share output files.
    if (!labels.insert(run->label).second ||
        !stems.insert(FileStem(run->label)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two runs are labelled \"", run->label,
                       "\" (file names must differ); add label=..."));
    }
    runs.push_back(*std::move(run));
  }
  if (runs.empty()) {
    return absl::InvalidArgumentError("no run specs given");
  }
  return runs;
}

absl::Status ApplyRunSpec(const RunSpec& spec, SolverConfig* config) {
  config->set_name(spec.solver_name);
  for (const auto& [name, value] : spec.fields) {
    if (name == "name" || name == "seed") {
      return absl::InvalidArgumentError(absl::StrCat(
          "run spec \"", spec.label, "\": ", name,
          name == "name" ? " goes before the ':'" : " comes from --seeds"));
    }
    absl::Status status = SetSolverOption(name, value, config);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("run spec \"", spec.label, "\": ", status.message()));
    }
  }
  return absl::OkStatus();
}

std::string FileStem(const std::string& label) {
  std::string stem;
  for (char c : label) {
    const bool safe = absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                      c == '.' || c == '-' || c == '_';
    stem += safe ? c : '_';
  }
  // A leading dot would hide the files.
  if (stem.empty() || stem[0] == '.') stem.insert(0, "run");
  return stem;
}

absl::StatusOr<std::vector<PassRecord>> ParsePassLog(absl::string_view text,
                                                     const std::string& name) {
  std::vector<PassRecord> records;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    PassRecord record;
    auto status =
        google::protobuf::util::JsonStringToMessage(std::string(line), &record);
    if (!status.ok()) {
      return absl::DataLossError(absl::StrCat(
          name, ":", line_number, ": not a PassRecord: ", status.ToString()));
    }
    records.push_back(std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<PassRecord>> ReadPassLog(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParsePassLog(text.str(), path);
}

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  const double a = values[n / 2 - 1], b = values[n / 2];
  // ∞ + finite stays ∞; avoids ∞ − ∞ style NaNs from a + (b − a) / 2.
  return a / 2 + b / 2;
}

std::vector<AggregatePoint> AggregateOverSeeds(
    const std::vector<std::vector<PassRecord>>& seeds, XValue x, YValue y) {
  // pass → per seed (x, y); std::map keeps passes in order.
  std::map<int, std::vector<std::pair<double, double>>> by_pass;
  for (const std::vector<PassRecord>& records : seeds) {
    std::map<int, std::pair<double, double>> latest;
    for (const PassRecord& r : records) {
      double value = 0;
      switch (y) {
        case YValue::kExactGap:
          if (!r.has_gap() || !r.gap_exact()) continue;
          value = r.gap();
          break;
        case YValue::kEstimatedGap:
          if (!r.has_gap() || r.gap_exact()) continue;
          value = r.gap();
          break;
        case YValue::kEvalScore:
          if (!r.has_eval_score()) continue;
          value = r.eval_score();
          break;
        case YValue::kPrimal:
          if (!r.has_primal()) continue;
          value = r.primal();
          break;
      }
      const double xv =
          x == XValue::kEffectivePasses ? r.effective_passes() : r.seconds();
      latest[r.pass()] = {xv, value};
    }
    for (const auto& [pass, point] : latest) by_pass[pass].push_back(point);
  }
  std::vector<AggregatePoint> points;
  for (const auto& [pass, values] : by_pass) {
    AggregatePoint p;
    p.pass = pass;
    p.num_seeds = static_cast<int>(values.size());
    std::vector<double> xs, ys;
    for (const auto& [xv, yv] : values) {
      xs.push_back(xv);
      ys.push_back(yv);
    }
    p.x_median = Median(xs);
    p.x_min = *std::min_element(xs.begin(), xs.end());
    p.x_max = *std::max_element(xs.begin(), xs.end());
    p.y_median = Median(ys);
    p.y_min = *std::min_element(ys.begin(), ys.end());
    p.y_max = *std::max_element(ys.begin(), ys.end());
    points.push_back(p);
  }
  return points;
}

std::optional<GapCrossing> FirstReachingGap(
    const std::vector<PassRecord>& records, double target) {
  for (const PassRecord& r : records) {
    if (r.has_gap() && r.gap_exact() && r.gap() <= target) {
      return GapCrossing{r.pass(), r.effective_passes(), r.seconds()};
    }
  }
  return std::nullopt;
}

CrossingSummary SummarizeCrossings(
    const std::vector<std::vector<PassRecord>>& seeds, double target) {
  CrossingSummary summary;
  summary.num_seeds = static_cast<int>(seeds.size());
  std::vector<double> passes, seconds;
  for (const std::vector<PassRecord>& records : seeds) {
    std::optional<GapCrossing> crossing = FirstReachingGap(records, target);
    if (crossing.has_value()) ++summary.seeds_reached;
    passes.push_back(crossing ? crossing->effective_passes : kInfinity);
    seconds.push_back(crossing ? crossing->seconds : kInfinity);
  }
  if (!seeds.empty()) {
    const double p = Median(passes), s = Median(seconds);
    if (std::isfinite(p)) summary.median_effective_passes = p;
    if (std::isfinite(s)) summary.median_seconds = s;
  }
  return summary;
}

RunFinal FinalOf(const std::vector<PassRecord>& records) {
  RunFinal final;
  for (const PassRecord& r : records) {
    final.passes = r.pass();
    final.effective_passes = r.effective_passes();
    final.seconds = r.seconds();
    // Solvers without a dual log a primal alone (every epoch or check).
    if (r.has_primal()) final.primal = r.primal();
    if (r.has_gap() && r.gap_exact()) {
      final.gap = r.gap();
      final.gap_exact = true;
      if (r.has_dual()) final.dual = r.dual();
    } else if (r.has_gap() && !final.gap_exact) {
      final.gap = r.gap();  // an estimate until an exact gap arrives
    }
    if (r.has_eval_score()) {
      final.eval_score = r.eval_score();
      final.eval_metric = r.eval_metric();
    }
  }
  return final;
}

Figures MakeFigures(const std::vector<RunLogs>& runs,
                    const std::string& title) {
  Figures figures;
  bool any_estimate = false;
  auto gap_series = [&](XValue x) {
    std::vector<PlotSeries> series;
    for (size_t i = 0; i < runs.size(); ++i) {
      PlotSeries exact;
      exact.label = runs[i].label;
      exact.color = static_cast<int>(i);
      for (const AggregatePoint& p :
           AggregateOverSeeds(runs[i].records, x, YValue::kExactGap)) {
        exact.points.push_back({p.x_median, p.y_median, p.y_min, p.y_max});
      }
      // Estimates fill the passes between exact gaps; thinner and without
      // a band, since they are not certificates.
      PlotSeries estimate;
      estimate.color = static_cast<int>(i);
      estimate.dashed = true;
      estimate.band = false;
      estimate.markers = false;
      for (const AggregatePoint& p :
           AggregateOverSeeds(runs[i].records, x, YValue::kEstimatedGap)) {
        estimate.points.push_back({p.x_median, p.y_median, p.y_min, p.y_max});
      }
      if (!estimate.points.empty()) any_estimate = true;
      series.push_back(std::move(exact));
      series.push_back(std::move(estimate));
    }
    if (any_estimate) {
      // A legend-only entry explaining the dashes.
      PlotSeries note;
      note.label = "dashed: gap estimate";
      note.dashed = true;
      note.color = 7;  // grey
      series.push_back(std::move(note));
    }
    return series;
  };
  const std::string suffix = title.empty() ? "" : absl::StrCat(" — ", title);
  PlotOptions options;
  options.log_y = true;
  options.y_label = "duality gap (median over seeds, min–max band)";
  options.title = absl::StrCat("Duality gap vs passes", suffix);
  options.x_label = "effective passes (oracle calls / n)";
  figures.gap_vs_passes =
      RenderSvgPlot(gap_series(XValue::kEffectivePasses), options);
  options.title = absl::StrCat("Duality gap vs time", suffix);
  options.x_label = "seconds";
  figures.gap_vs_seconds = RenderSvgPlot(gap_series(XValue::kSeconds), options);

  // One median line per run of `y` against effective passes.
  auto value_series = [&](YValue y) {
    std::vector<PlotSeries> series;
    for (size_t i = 0; i < runs.size(); ++i) {
      PlotSeries s;
      s.label = runs[i].label;
      s.color = static_cast<int>(i);
      for (const AggregatePoint& p :
           AggregateOverSeeds(runs[i].records, XValue::kEffectivePasses, y)) {
        s.points.push_back({p.x_median, p.y_median, p.y_min, p.y_max});
      }
      if (!s.points.empty()) series.push_back(std::move(s));
    }
    return series;
  };
  std::string metric;
  for (const RunLogs& run : runs) {
    for (const auto& records : run.records) {
      for (const PassRecord& r : records) {
        if (metric.empty() && r.has_eval_score()) metric = r.eval_metric();
      }
    }
  }
  PlotOptions value_options;
  value_options.log_y = false;
  value_options.x_label = "effective passes (oracle calls / n)";
  const std::vector<PlotSeries> eval = value_series(YValue::kEvalScore);
  if (!eval.empty()) {
    value_options.title = absl::StrCat("Held-out score vs passes", suffix);
    value_options.y_label = absl::StrCat(metric.empty() ? "eval score" : metric,
                                         " (median over seeds, min–max band)");
    figures.eval_vs_passes = RenderSvgPlot(eval, value_options);
  }
  const std::vector<PlotSeries> primal = value_series(YValue::kPrimal);
  if (!primal.empty()) {
    // Log scale: objectives of different solvers span decades (SSG at a
    // tiny λ starts hundreds of times above the others).
    value_options.log_y = true;
    value_options.title = absl::StrCat("Training objective vs passes", suffix);
    value_options.y_label =
        "primal λ/2‖w‖² + hinge (median over seeds, min–max band)";
    figures.primal_vs_passes = RenderSvgPlot(primal, value_options);
  }
  return figures;
}

std::string SummaryTsv(const std::vector<RunLogs>& runs) {
  std::string tsv =
      "label\tseed\tpasses\teffective_passes\tseconds\tprimal\tdual\tgap\t"
      "gap_exact\teval_score\teval_metric\n";
  for (const RunLogs& run : runs) {
    for (size_t k = 0; k < run.records.size(); ++k) {
      const RunFinal f = FinalOf(run.records[k]);
      absl::StrAppend(
          &tsv, run.label, "\t", k < run.seeds.size() ? run.seeds[k] : k, "\t",
          f.passes, "\t", absl::StrFormat("%.6g", f.effective_passes), "\t",
          absl::StrFormat("%.6g", f.seconds), "\t",
          f.primal ? absl::StrFormat("%.10g", *f.primal) : "", "\t",
          f.dual ? absl::StrFormat("%.10g", *f.dual) : "", "\t",
          f.gap ? absl::StrFormat("%.6g", *f.gap) : "", "\t",
          f.gap_exact ? "true" : "false", "\t",
          f.eval_score ? absl::StrFormat("%.6g", *f.eval_score) : "", "\t",
          f.eval_metric, "\n");
    }
  }
  return tsv;
}

std::string SummaryTable(const std::vector<RunLogs>& runs, double target_gap) {
  const std::string target = absl::StrFormat("%g", target_gap);
  std::vector<std::vector<std::string>> rows = {
      {"run", "seeds", "eff.passes", "seconds", "primal", "final gap", "eval",
       absl::StrCat("passes to gap≤", target), "ratio",
       absl::StrCat("seconds to gap≤", target), "ratio"}};
  std::optional<double> base_passes, base_seconds;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunLogs& run = runs[i];
    std::vector<double> passes, seconds, primals, gaps, evals;
    for (const auto& records : run.records) {
      const RunFinal f = FinalOf(records);
      passes.push_back(f.effective_passes);
      seconds.push_back(f.seconds);
      if (f.primal) primals.push_back(*f.primal);
      if (f.gap) gaps.push_back(*f.gap);
      if (f.eval_score) evals.push_back(*f.eval_score);
    }
    const CrossingSummary crossing =
        SummarizeCrossings(run.records, target_gap);
    if (i == 0) {
      base_passes = crossing.median_effective_passes;
      base_seconds = crossing.median_seconds;
    }
    auto ratio = [](const std::optional<double>& value,
                    const std::optional<double>& base) -> std::string {
      if (!value || !base || *base <= 0) return "—";
      return absl::StrFormat("%.2fx", *value / *base);
    };
    rows.push_back(
        {run.label, absl::StrCat(run.records.size()),
         passes.empty() ? "—" : Format(Median(passes)),
         seconds.empty() ? "—" : Format(Median(seconds)),
         primals.empty() ? "—" : absl::StrFormat("%.6g", Median(primals)),
         gaps.empty() ? "—" : absl::StrFormat("%.3e", Median(gaps)),
         evals.empty() ? "—" : Format(Median(evals)),
         absl::StrCat(FormatOptional(crossing.median_effective_passes, "—"),
                      " (", crossing.seeds_reached, "/", crossing.num_seeds,
                      ")"),
         ratio(crossing.median_effective_passes, base_passes),
         FormatOptional(crossing.median_seconds, "—"),
         ratio(crossing.median_seconds, base_seconds)});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  std::string table;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      // The label left-aligned, numbers right-aligned.
      const std::string pad(widths[c] - DisplayWidth(row[c]), ' ');
      absl::StrAppend(&line, c == 0 ? row[c] + pad : pad + row[c],
                      c + 1 < row.size() ? "  " : "");
    }
    absl::StrAppend(&table, line, "\n");
  }
  absl::StrAppend(&table, "medians over seeds; \"passes to gap≤", target,
                  "\" counts exact gaps only (every gap_check passes), with "
                  "the seeds that got there; ratios are to the first run\n");
  return table;
}

}  // namespace chaintag
