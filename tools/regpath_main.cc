// regpath: the regularization path of a preset, λ chosen on dev, and the
// grid-search baseline it replaces (Osokin et al. 2016, §4 and Fig. 4).
//
//   regpath --config=<preset.textproto> [--mode=epsilon|heuristic]
//           [--epsilon=0.1] [--grid=true] [--dev_fraction=0.1 | --dev_folds=1]
//
// Runs the path with the preset's solver options, scores every breakpoint on
// the dev split, prints the table, saves the chosen breakpoint's model (as
// `train` would with `lambda: "path"`) and scores it on test. With --grid,
// also solves the 31 values 2^15 … 2^-15 to gap ε cold and warm-started and
// reports the passes of all three as ratios. Writes <name>.regpath.json and
// <name>.regpath.svg (dev score and cumulative passes against λ).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/config_override.h"
#include "base/paths.h"
#include "pipeline/flag_aliases.h"
#include "pipeline/lambda_path.h"
#include "pipeline/pipeline.h"
#include "solvers/regularization_path.h"
#include "tools/given_flag.h"
#include "tools/svg_plot.h"

ABSL_FLAG(std::string, config, "", "PipelineConfig in protobuf text format.");
ABSL_FLAG(std::vector<std::string>, set, {},
          "Sets any singular config field by its dotted path, after the named "
          "flags: "
          "--set=solver.lambda=1e-4,features.num_buckets=2097152 "
          "(assignments separated by commas, one --set: a repeated flag "
          "keeps its last value; enums by name).");
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
ABSL_FLAG(std::string, mode, "",
          "epsilon (certified, exact gaps) or heuristic (stale gaps); "
          "default: the config's solver.path.mode.");
ABSL_FLAG(double, epsilon, 0, "Override: ε of the path (default 0.1).");
ABSL_FLAG(double, kappa, 0, "Override: κ (0 = 0.9 or 0.7 by mode).");
ABSL_FLAG(double, lambda_min, 0,
          "Override: smallest λ (default: 2^grid_low with --grid, else the "
          "config's).");
ABSL_FLAG(int, max_passes, 0, "Override: passes per inner solve.");
ABSL_FLAG(double, lambda_max, 0,
          "Start the path here (cold solve) instead of at λ∞ (0 = λ∞).");
ABSL_FLAG(std::string, solver, "", "Override: solver name (bcfw family).");
ABSL_FLAG(std::string, step, "", "Override: fw|pairwise|away|best.");
ABSL_FLAG(std::string, sampling, "", "Override: uniform|permutation|gap.");
ABSL_FLAG(std::string, cache, "", "Override: true|false.");
ABSL_FLAG(double, dev_fraction, -1,
          "Hold out this last fraction of train as dev (CoNLL).");
ABSL_FLAG(std::string, dev_folds, "",
          "OCR: comma-separated folds to hold out as dev (taken out of "
          "test_folds).");
ABSL_FLAG(bool, grid, true,
          "Also run the grid-search baseline, cold and warm-started.");
ABSL_FLAG(int, grid_high, 15, "Grid: largest exponent of 2.");
ABSL_FLAG(int, grid_low, -15, "Grid: smallest exponent of 2.");
ABSL_FLAG(std::string, json, "", "JSON output (default <name>.regpath.json).");
ABSL_FLAG(std::string, svg, "", "SVG output (default <name>.regpath.svg).");
ABSL_FLAG(int, threads, 0, "Override: worker threads.");

namespace chaintag {
namespace {

absl::Status ApplyOverrides(PipelineConfig* config) {
  config->set_lambda("path");
  RegularizationPathConfig* path = config->mutable_solver()->mutable_path();
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "epsilon") {
    path->set_mode(RegularizationPathConfig::EPSILON_APPROXIMATE);
  } else if (mode == "heuristic") {
    path->set_mode(RegularizationPathConfig::HEURISTIC);
  } else if (!mode.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode must be epsilon or heuristic, got ", mode));
  }
  if (absl::GetFlag(FLAGS_epsilon) > 0) {
    path->set_epsilon(absl::GetFlag(FLAGS_epsilon));
  }
  if (absl::GetFlag(FLAGS_kappa) > 0)
    path->set_kappa(absl::GetFlag(FLAGS_kappa));
  if (absl::GetFlag(FLAGS_lambda_min) > 0) {
    path->set_lambda_min(absl::GetFlag(FLAGS_lambda_min));
  } else if (absl::GetFlag(FLAGS_grid)) {
    // The path covers what the grid covers.
    path->set_lambda_min(std::ldexp(1.0, absl::GetFlag(FLAGS_grid_low)));
  }
  if (absl::GetFlag(FLAGS_lambda_max) > 0) {
    path->set_lambda_max(absl::GetFlag(FLAGS_lambda_max));
  }
  // The flags regpath shares with train, through train's aliases (its own
  // --kappa is the path's κ, not the solver's).
  absl::Status shared = ApplyFlagAliases(
      PipelineFlagAliases(),
      [](absl::string_view name) -> std::optional<std::string> {
        static constexpr absl::string_view kShared[] = {
            "max_passes", "solver", "step", "sampling", "cache", "threads"};
        if (std::find(std::begin(kShared), std::end(kShared), name) ==
            std::end(kShared)) {
          return std::nullopt;
        }
        return GivenFlagValue(name);
      },
      config);
  if (!shared.ok()) return shared;
  CorpusConfig* corpus = config->mutable_corpus();
  if (absl::GetFlag(FLAGS_dev_fraction) >= 0) {
    corpus->clear_dev();
    corpus->set_dev_fraction(absl::GetFlag(FLAGS_dev_fraction));
  }
  if (!absl::GetFlag(FLAGS_dev_folds).empty()) {
    corpus->clear_dev_folds();
    std::vector<int> dev;
    for (absl::string_view part :
         absl::StrSplit(absl::GetFlag(FLAGS_dev_folds), ',')) {
      int fold;
      if (!absl::SimpleAtoi(part, &fold)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dev_folds: not a fold number: ", part));
      }
      corpus->add_dev_folds(fold);
      dev.push_back(fold);
    }
    std::vector<int> test;
    for (int fold : corpus->test_folds()) {
      if (std::find(dev.begin(), dev.end(), fold) == dev.end()) {
        test.push_back(fold);
      }
    }
    corpus->clear_test_folds();
    for (int fold : test) corpus->add_test_folds(fold);
  }
  // Last, so that a dotted path wins over the named flag for its field.
  return ApplyAssignments(absl::GetFlag(FLAGS_set), config);
}

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

int Run() {
  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    std::fprintf(stderr, "regpath: --config=<file.textproto> is required\n");
    return 2;
  }
  absl::StatusOr<PipelineConfig> config = ReadUserPipelineConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "regpath: %s\n", config.status().ToString().c_str());
    return 1;
  }
  absl::Status status = ApplyOverrides(&*config);
  if (!status.ok()) {
    std::fprintf(stderr, "regpath: %s\n", status.ToString().c_str());
    return 2;
  }
  const std::string name = config->name().empty() ? "model" : config->name();
  if (!config->has_model_path()) {
    config->set_model_path(absl::StrCat(name, ".regpath.model"));
  }
  if (!config->has_log_path()) {
    config->set_log_path(absl::StrCat(name, ".regpath.log.json"));
  }
  PipelineOptions options;
  options.corpora_root = CorporaRootFromFlag(absl::GetFlag(FLAGS_corpora));
  options.output_dir = CallerDirectory();
  // The path and the grid are studied on the training problem; the chosen
  // model is the path's own, not one retrained on train + dev.
  config->mutable_corpus()->set_retrain_on_train_and_dev(false);
  // One read of the corpus for the path and the grid.
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(*config, options);
  if (!prepared.ok()) {
    std::fprintf(stderr, "regpath: %s\n", prepared.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<PipelineResult> result =
      RunPreparedPipeline(&*prepared, options);
  if (!result.ok()) {
    std::fprintf(stderr, "regpath: %s\n", result.status().ToString().c_str());
    return 1;
  }
  const LambdaPath& path = result->path;
  std::printf("%s", FormatPathTable(path).c_str());
  const PathPoint& chosen = path.points[path.best];
  std::printf("chosen: lambda %.6g (breakpoint %d), %s %.2f", chosen.lambda,
              chosen.index, path.score_name.c_str(), path.scores[path.best]);
  if (result->test_letter_error >= 0) {
    std::printf(", test letter error %.2f%%\n", result->test_letter_error);
  } else {
    std::printf(", test F1 %.2f\n", result->test_f1);
  }
  std::printf("model written to %s\n", result->model_path.c_str());

  // The grid-search baseline on the same problem and solver options.
  std::vector<PathPoint> grid_cold, grid_warm;
  if (absl::GetFlag(FLAGS_grid)) {
    SolverConfig grid_config = config->solver();
    grid_config.set_gap_tolerance(grid_config.path().epsilon());
    const std::vector<double> lambdas = PowersOfTwo(
        absl::GetFlag(FLAGS_grid_high), absl::GetFlag(FLAGS_grid_low));
    for (bool warm : {false, true}) {
      absl::StatusOr<std::vector<PathPoint>> points =
          RunGridSearch(*prepared->problem, grid_config, lambdas, warm,
                        [&](const PathPoint& p, const std::vector<double>&) {
                          std::fprintf(stderr,
                                       "grid %s  lambda %-10.4g gap %.3g "
                                       "passes %d  cumulative %.1f\n",
                                       warm ? "warm" : "cold", p.lambda, p.gap,
                                       p.inner_passes, p.cumulative_passes);
                          return absl::OkStatus();
                        });
      if (!points.ok()) {
        std::fprintf(stderr, "regpath: grid search: %s\n",
                     points.status().ToString().c_str());
        return 1;
      }
      (warm ? grid_warm : grid_cold) = *std::move(points);
    }
    const double path_passes = path.points.back().cumulative_passes;
    const double cold = grid_cold.back().cumulative_passes;
    const double warm = grid_warm.back().cumulative_passes;
    std::printf(
        "\neffective passes over lambda in [2^%d, 2^%d] (epsilon %g):\n"
        "  path (%s, %zu breakpoints) %10.1f   %6.1fs\n"
        "  grid, cold starts (%zu values) %10.1f   %6.1fs   %.2fx the path\n"
        "  grid, warm starts (%zu values) %10.1f   %6.1fs   %.2fx the path\n",
        absl::GetFlag(FLAGS_grid_low), absl::GetFlag(FLAGS_grid_high),
        config->solver().path().epsilon(),
        RegularizationPathConfig::Mode_Name(config->solver().path().mode())
            .c_str(),
        path.points.size(), path_passes, path.points.back().seconds,
        grid_cold.size(), cold, grid_cold.back().seconds, cold / path_passes,
        grid_warm.size(), warm, grid_warm.back().seconds, warm / path_passes);
  }

  const std::string json_path =
      ResolvePath(options.output_dir, absl::GetFlag(FLAGS_json).empty()
                                          ? absl::StrCat(name, ".regpath.json")
                                          : absl::GetFlag(FLAGS_json));
  {
    RegpathRecord record;
    *record.mutable_path() = PathRecord(path);
    for (const PathPoint& point : grid_cold) {
      *record.add_grid_cold() = PointRecord(point);
    }
    for (const PathPoint& point : grid_warm) {
      *record.add_grid_warm() = PointRecord(point);
    }
    absl::StatusOr<std::string> json = RecordToJson(record);
    std::ofstream out(json_path, std::ios::trunc);
    out << (json.ok() ? *json : "");
    if (!json.ok() || !out) {
      std::fprintf(stderr, "regpath: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  PlotOptions score_options;
  score_options.title = absl::StrCat(name, ": ", path.score_name,
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
  if (!grid_cold.empty()) {
    passes.push_back(Series("grid, cold", grid_cold, nullptr, true));
    passes.push_back(Series("grid, warm", grid_warm, nullptr, true));
  }
  const std::string svg = StackSvgs(
      RenderSvgPlot({Series("path", path.points, &path.scores, false)},
                    score_options),
      RenderSvgPlot(passes, passes_options), score_options.width,
      score_options.height);
  const std::string svg_path =
      ResolvePath(options.output_dir, absl::GetFlag(FLAGS_svg).empty()
                                          ? absl::StrCat(name, ".regpath.svg")
                                          : absl::GetFlag(FLAGS_svg));
  std::ofstream out(svg_path, std::ios::trunc);
  out << svg;
  if (!out) {
    std::fprintf(stderr, "regpath: cannot write %s\n", svg_path.c_str());
    return 1;
  }
  std::printf("wrote %s and %s\n", json_path.c_str(), svg_path.c_str());
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "The regularization path of a preset, λ chosen on dev, and the grid "
      "baseline: regpath --config=<file.textproto> [flags]");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
