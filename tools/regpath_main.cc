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
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"
#include "pipeline/pipeline.h"
#include "pipeline/regpath.h"
#include "tools/config_flags.h"
#include "tools/regpath_plot.h"

ABSL_FLAG(std::string, config, "", "PipelineConfig in protobuf text format.");
CHAINTAG_DEFINE_SET_FLAG(
    "Sets any config field by its dotted path, after the named flags: "
    "--set=solver.path.epsilon=0.05,features.num_buckets=2097152 "
    "(assignments separated by commas; every --set applies, in order; enums "
    "by name; a repeated field takes a list in brackets: "
    "corpus.format.attribute_columns=[0,2]).")
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
// Applied only when given, as the named flags are.
ABSL_FLAG(double, dev_fraction, 0,
          "Hold out this last fraction of train as dev (CoNLL; replaces "
          "corpus.dev).")
    .OnUpdate(CHAINTAG_NOTE_GIVEN(dev_fraction));
ABSL_FLAG(std::string, dev_folds, "",
          "OCR: comma-separated folds to hold out as dev (taken out of "
          "test_folds).")
    .OnUpdate(CHAINTAG_NOTE_GIVEN(dev_folds));
ABSL_FLAG(bool, grid, true,
          "Also run the grid-search baseline, cold and warm-started.");
ABSL_FLAG(int, grid_high, 15, "Grid: largest exponent of 2.");
ABSL_FLAG(int, grid_low, -15,
          "Grid: smallest exponent of 2 (with --grid, also the path's "
          "smallest lambda unless --lambda_min is given).");
ABSL_FLAG(std::string, json, "", "JSON output (default <name>.regpath.json).");
ABSL_FLAG(std::string, svg, "", "SVG output (default <name>.regpath.svg).");
// The path's own named flags; regpath's --kappa is the path's κ.
#define REGPATH_PATH_FLAGS(X)                                             \
  X(std::string, mode, "solver.path.mode",                                \
    "epsilon:EPSILON_APPROXIMATE,heuristic:HEURISTIC",                    \
    "epsilon (certified, exact gaps) or heuristic (stale gaps).")         \
  X(double, epsilon, "solver.path.epsilon", "", "epsilon of the path.")   \
  X(double, kappa, "solver.path.kappa", "",                               \
    "kappa of the path (0 = 0.9 or 0.7 by mode).")                        \
  X(double, lambda_min, "solver.path.lambda_min", "", "Smallest lambda.") \
  X(double, lambda_max, "solver.path.lambda_max", "",                     \
    "Start the path here (cold solve) instead of at lambda_inf, where "   \
    "the path starts from w = 0 (0 = lambda_inf).")
#define REGPATH_FLAGS(X) \
  CHAINTAG_RUN_FLAGS(X) CHAINTAG_SOLVER_FLAGS(X) REGPATH_PATH_FLAGS(X)
REGPATH_FLAGS(CHAINTAG_DEFINE_CONFIG_FLAG)

namespace chaintag {
namespace {

constexpr ConfigFlag kConfigFlags[] = {REGPATH_FLAGS(CHAINTAG_CONFIG_ROW)};

// regpath's defaults and its dev split, before the named flags and --set.
absl::Status RegpathDefaults(PipelineConfig* config) {
  config->set_lambda("path");
  if (absl::GetFlag(FLAGS_grid)) {
    // The path covers what the grid covers (--lambda_min overrides it).
    config->mutable_solver()->mutable_path()->set_lambda_min(
        std::ldexp(1.0, absl::GetFlag(FLAGS_grid_low)));
  }
  CorpusConfig* corpus = config->mutable_corpus();
  if (FlagWasGiven("dev_fraction")) {
    corpus->clear_dev();
    corpus->set_dev_fraction(absl::GetFlag(FLAGS_dev_fraction));
  }
  if (FlagWasGiven("dev_folds")) {
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
  return absl::OkStatus();
}

int Run() {
  absl::StatusOr<PipelineConfig> config =
      LoadConfig(kConfigFlags, absl::GetFlag(FLAGS_config),
                 GivenSetAssignments(), RegpathDefaults);
  if (!config.ok()) {
    std::fprintf(stderr, "regpath: %s\n", config.status().ToString().c_str());
    return absl::IsInvalidArgument(config.status()) ? 2 : 1;
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
  absl::Status status = WriteRegpathSvg(*run, svg_path);
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
      "The regularization path of a preset, lambda chosen on dev, and the "
      "grid baseline: regpath --config=<file.textproto> [flags]");
  chaintag::ParseToolCommandLine(argc, argv);
  return chaintag::Run();
}
