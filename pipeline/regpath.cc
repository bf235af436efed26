#include "pipeline/regpath.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/file_io.h"
#include "base/paths.h"
#include "pipeline/lambda_path.h"
#include "pipeline/pipeline.h"

namespace chaintag {
namespace {

// The grid-search baseline on the path run's problem, with the config's
// solver options and gap tolerance ε, cold then warm-started.
absl::Status RunGrids(const ChainProblem& problem, const PipelineConfig& config,
                      const RegpathOptions& regpath, std::FILE* progress,
                      RegpathRun* run) {
  SolverConfig grid_config = config.solver();
  grid_config.set_gap_tolerance(grid_config.path().epsilon());
  grid_config.set_relative_gap_tolerance(0);  // the path's absolute ε
  const std::vector<double> lambdas =
      PowersOfTwo(regpath.grid_high, regpath.grid_low);
  for (bool warm : {false, true}) {
    absl::StatusOr<std::vector<PathPoint>> points = RunGridSearch(
        problem, grid_config, lambdas, warm,
        [&](const PathPoint& p, const std::vector<double>&) {
          if (progress != nullptr) {
            std::fprintf(progress,
                         "grid %s  lambda %-10.4g gap %.3g passes %d  "
                         "cumulative %.1f\n",
                         warm ? "warm" : "cold", p.lambda, p.gap,
                         p.inner_passes, p.cumulative_passes);
          }
          return absl::OkStatus();
        });
    if (!points.ok()) {
      return absl::Status(
          points.status().code(),
          absl::StrCat("grid search: ", points.status().message()));
    }
    (warm ? run->grid_warm : run->grid_cold) = *std::move(points);
  }
  return absl::OkStatus();
}

// The path's table, the chosen breakpoint and where its model went.
std::string FormatChoice(const PipelineResult& result) {
  const LambdaPath& path = result.path;
  const PathPoint& chosen = path.points[path.best];
  return absl::StrCat(
      FormatPathTable(path),
      absl::StrFormat("chosen: lambda %.6g (breakpoint %d), %s %.2f",
                      chosen.lambda, chosen.index, path.score_name,
                      path.scores[path.best]),
      result.test_letter_error >= 0
          ? absl::StrFormat(", test letter error %.2f%%\n",
                            result.test_letter_error)
          : absl::StrFormat(", test F1 %.2f\n", result.test_f1),
      absl::StrFormat("model written to %s\n", result.model_path));
}

void Report(std::FILE* report, const std::string& text) {
  if (report == nullptr) return;
  std::fputs(text.c_str(), report);
  std::fflush(report);
}

}  // namespace

RegpathRecord ToRegpathRecord(const RegpathRun& run) {
  RegpathRecord record;
  *record.mutable_path() = PathRecord(run.result.path);
  for (const PathPoint& point : run.grid_cold) {
    *record.add_grid_cold() = PointRecord(point);
  }
  for (const PathPoint& point : run.grid_warm) {
    *record.add_grid_warm() = PointRecord(point);
  }
  return record;
}

std::string FormatGridComparison(const RegpathRun& run,
                                 const PipelineConfig& config,
                                 const RegpathOptions& regpath) {
  const std::vector<PathPoint>& path = run.result.path.points;
  const double path_passes = path.back().cumulative_passes;
  const double cold = run.grid_cold.back().cumulative_passes;
  const double warm = run.grid_warm.back().cumulative_passes;
  return absl::StrFormat(
      "\neffective passes over lambda in [2^%d, 2^%d] (epsilon %g):\n"
      "  path (%s, %zu breakpoints) %10.1f   %6.1fs\n"
      "  grid, cold starts (%zu values) %10.1f   %6.1fs   %.2fx the path\n"
      "  grid, warm starts (%zu values) %10.1f   %6.1fs   %.2fx the path\n",
      regpath.grid_low, regpath.grid_high, config.solver().path().epsilon(),
      RegularizationPathConfig::Mode_Name(config.solver().path().mode()),
      path.size(), path_passes, path.back().seconds, run.grid_cold.size(), cold,
      run.grid_cold.back().seconds, cold / path_passes, run.grid_warm.size(),
      warm, run.grid_warm.back().seconds, warm / path_passes);
}

absl::StatusOr<RegpathRun> RunRegpath(PipelineConfig config,
                                      const PipelineOptions& options,
                                      const RegpathOptions& regpath) {
  RegpathRun run;
  run.name = config.name().empty() ? "model" : config.name();
  if (!config.has_model_path()) {
    config.set_model_path(absl::StrCat(run.name, ".regpath.model"));
  }
  if (!config.has_log_path()) {
    config.set_log_path(absl::StrCat(run.name, ".regpath.log.json"));
  }
  // The path and the grid are studied on the training problem; the chosen
  // model is the path's own, not one retrained on train + dev.
  config.mutable_corpus()->set_retrain_on_train_and_dev(false);
  // One read of the corpus for the path and the grid.
  absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(config, options);
  if (!prepared.ok()) return prepared.status();
  absl::StatusOr<PipelineResult> result =
      RunPreparedPipeline(&*prepared, options);
  if (!result.ok()) return result.status();
  run.result = *std::move(result);
  Report(regpath.report, FormatChoice(run.result));
  if (regpath.grid) {
    absl::Status grids =
        RunGrids(*prepared->problem, config, regpath, options.progress, &run);
    if (!grids.ok()) return grids;
    Report(regpath.report, FormatGridComparison(run, config, regpath));
  }
  run.json_path = ResolvePath(options.output_dir,
                              regpath.json_path.empty()
                                  ? absl::StrCat(run.name, ".regpath.json")
                                  : regpath.json_path);
  absl::StatusOr<std::string> json = RecordToJson(ToRegpathRecord(run));
  if (!json.ok()) return json.status();
  absl::Status written =
      WriteFileAtomically(run.json_path, *json, "the regpath report");
  if (!written.ok()) return written;
  return run;
}

}  // namespace chaintag
