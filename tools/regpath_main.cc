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
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/config_override.h"
#include "base/paths.h"
#include "pipeline/flag_aliases.h"
#include "pipeline/pipeline.h"
#include "pipeline/regpath.h"
#include "tools/given_flag.h"
#include "tools/regpath_plot.h"

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
  PipelineOptions options;
  options.corpora_root = CorporaRootFromFlag(absl::GetFlag(FLAGS_corpora));
  options.output_dir = CallerDirectory();
  RegpathOptions regpath;
  regpath.grid = absl::GetFlag(FLAGS_grid);
  regpath.grid_high = absl::GetFlag(FLAGS_grid_high);
  regpath.grid_low = absl::GetFlag(FLAGS_grid_low);
  regpath.json_path = absl::GetFlag(FLAGS_json);
  absl::StatusOr<RegpathRun> run = RunRegpath(*config, options, regpath);
  if (!run.ok()) {
    std::fprintf(stderr, "regpath: %s\n", run.status().ToString().c_str());
    return 1;
  }
  const std::string svg_path = ResolvePath(
      options.output_dir, absl::GetFlag(FLAGS_svg).empty()
                              ? absl::StrCat(run->name, ".regpath.svg")
                              : absl::GetFlag(FLAGS_svg));
  status = WriteRegpathSvg(*run, svg_path);
  if (!status.ok()) {
    std::fprintf(stderr, "regpath: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s and %s\n", run->json_path.c_str(), svg_path.c_str());
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
