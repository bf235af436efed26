// compare_solvers: trains one pipeline config with several solver
// configurations and seeds, then plots the duality gap (and held-out
// score) against passes and seconds — the "Minding the gaps" Fig. 3/5
// pictures for any preset.
//
//   bazel run //tools:compare_solvers --
//       --config=pipeline/configs/ocr_small.textproto
//       --runs='bcfw:sampling=uniform;bcfw:sampling=gap,step=pairwise,cache=true;fw'
//       --seeds=1,2,3 --max_passes=50 --max_seconds=0 --out=/tmp/cmp
//
// A run spec is solver_name[:field=value,...] over SolverConfig's fields
// (label=... names it). Writes <label>.seed<k>.{model,log.jsonl},
// gap_vs_passes.svg, gap_vs_seconds.svg, eval_vs_passes.svg (when scored),
// primal_vs_passes.svg (the training objective, for solvers without a dual)
// and summary.tsv into --out, and a summary table to stdout.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/paths.h"
#include "pipeline/pipeline.h"
#include "tools/compare_solvers_lib.h"
#include "tools/config_flags.h"

ABSL_FLAG(std::string, config, "", "PipelineConfig in protobuf text format.");
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
ABSL_FLAG(std::string, runs, "bcfw",
          "Run specs separated by ';': solver_name[:field=value,...] with "
          "SolverConfig fields, plus label=... for the legend.");
ABSL_FLAG(std::string, seeds, "1", "Comma-separated seeds; each run per seed.");
ABSL_FLAG(std::string, out, "", "Output directory (created if missing).");
CHAINTAG_DEFINE_SET_FLAG(
    "Sets any config field of every run by its dotted path, after the named "
    "flags and before each run spec: "
    "--set=model.order=2,features.num_buckets=2097152 (assignments "
    "separated by commas; every --set applies, in order; enums by name; a "
    "repeated field takes a list in brackets: "
    "corpus.format.attribute_columns=[0,2]).")
// The named flags every run shares; a run spec's own field wins.
#define COMPARE_FLAGS(X) CHAINTAG_RUN_FLAGS(X) CHAINTAG_LAMBDA_FLAGS(X)
COMPARE_FLAGS(CHAINTAG_DEFINE_CONFIG_FLAG)
ABSL_FLAG(double, target_gap, 1e-3,
          "The table reports passes and seconds to first reach this gap.");
ABSL_FLAG(bool, plot_only, false,
          "Do not train: re-plot the logs already in --out.");
ABSL_FLAG(bool, verbose, false, "Show the pipeline's per-pass progress.");

namespace chaintag {
namespace {

absl::StatusOr<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> seeds;
  for (absl::string_view piece : absl::StrSplit(text, ',')) {
    piece = absl::StripAsciiWhitespace(piece);
    if (piece.empty()) continue;
    uint64_t seed;
    if (!absl::SimpleAtoi(piece, &seed)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--seeds: \"", piece, "\" is not a seed"));
    }
    seeds.push_back(seed);
  }
  if (seeds.empty()) return absl::InvalidArgumentError("--seeds is empty");
  return seeds;
}

constexpr ConfigFlag kConfigFlags[] = {COMPARE_FLAGS(CHAINTAG_CONFIG_ROW)};

// The runs compare solvers at one λ: a preset that chooses λ along the
// regularization path is compared at its solver.lambda (--lambda).
void FixLambda(PipelineConfig* config) {
  if (config->lambda().empty()) return;
  const std::string rule = config->lambda();
  config->clear_lambda();
  std::fprintf(stderr,
               "compare_solvers: %s chooses lambda along the regularization "
               "path (lambda: \"%s\"); the runs compare at the fixed lambda = "
               "%s (--lambda)\n",
               config->name().c_str(), rule.c_str(),
               config->solver().lambda() > 0
                   ? absl::StrFormat("%g", config->solver().lambda()).c_str()
                   : "1/n");
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

int Fail(const absl::Status& status, int code) {
  std::fprintf(stderr, "compare_solvers: %s\n", status.ToString().c_str());
  return code;
}

int Run() {
  if (absl::GetFlag(FLAGS_config).empty() || absl::GetFlag(FLAGS_out).empty()) {
    std::fprintf(stderr,
                 "compare_solvers: --config=<file.textproto> and --out=<dir> "
                 "are required\n");
    return 2;
  }
  absl::StatusOr<std::vector<RunSpec>> specs =
      ParseRunSpecs(absl::GetFlag(FLAGS_runs));
  if (!specs.ok()) return Fail(specs.status(), 2);
  absl::StatusOr<std::vector<uint64_t>> seeds =
      ParseSeeds(absl::GetFlag(FLAGS_seeds));
  if (!seeds.ok()) return Fail(seeds.status(), 2);
  absl::StatusOr<PipelineConfig> base = LoadConfig(
      kConfigFlags, absl::GetFlag(FLAGS_config), GivenSetAssignments());
  if (!base.ok()) {
    return Fail(base.status(), absl::IsInvalidArgument(base.status()) ? 2 : 1);
  }
  FixLambda(&*base);

  const std::string out_dir = ResolveUserPath(absl::GetFlag(FLAGS_out));
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) {
    return Fail(absl::InternalError(absl::StrCat("cannot create ", out_dir,
                                                 ": ", error.message())),
                1);
  }

  PipelineOptions options;
  options.corpora_root = CorporaRootFromFlag(absl::GetFlag(FLAGS_corpora));
  options.output_dir = out_dir;
  options.progress = absl::GetFlag(FLAGS_verbose) ? stderr : nullptr;

  const int total = static_cast<int>(specs->size() * seeds->size());
  auto stem_of = [](const RunSpec& spec, uint64_t seed) {
    return absl::StrCat(FileStem(spec.label), ".seed", seed);
  };
  // Seed by seed, every configuration in turn: a slow spell of the machine
  // then falls on all configurations alike, not on the one running.
  int index = 0;
  for (uint64_t seed : *seeds) {
    for (const RunSpec& spec : *specs) {
      ++index;
      if (absl::GetFlag(FLAGS_plot_only)) continue;
      const std::string stem = stem_of(spec, seed);
      PipelineConfig config = *base;
      absl::Status status = ApplyRunSpec(spec, config.mutable_solver());
      if (!status.ok()) return Fail(status, 2);
      config.mutable_solver()->set_seed(seed);
      config.set_model_path(absl::StrCat(stem, ".model"));
      config.set_log_path(absl::StrCat(stem, ".log.jsonl"));
      config.clear_predictions_path();
      // The runs compare solvers on the training problem; a preset's
      // final retraining on train + dev would replace what is compared.
      config.mutable_corpus()->set_retrain_on_train_and_dev(false);
      std::fprintf(stderr, "[%d/%d] %s seed %llu ...", index, total,
                   spec.label.c_str(), static_cast<unsigned long long>(seed));
      std::fflush(stderr);
      absl::StatusOr<PipelineResult> result = RunPipeline(config, options);
      if (!result.ok()) {
        std::fprintf(stderr, "\n");
        return Fail(result.status(), 1);
      }
      const TrainingSummary& summary = result->summary;
      const std::string certificate =
          summary.has_gap()
              ? absl::StrFormat("gap %.3e", summary.gap())
              : absl::StrFormat("primal %.6g, no gap", summary.primal());
      std::fprintf(stderr, " %d passes, %.1fs, %s (%s)\n", summary.passes(),
                   summary.seconds(), certificate.c_str(),
                   summary.stop_reason().c_str());
    }
  }
  std::vector<RunLogs> runs;
  for (const RunSpec& spec : *specs) {
    RunLogs logs;
    logs.label = spec.label;
    for (uint64_t seed : *seeds) {
      const std::string log_path =
          ResolvePath(out_dir, absl::StrCat(stem_of(spec, seed), ".log.jsonl"));
      absl::StatusOr<std::vector<PassRecord>> records = ReadPassLog(log_path);
      if (!records.ok()) return Fail(records.status(), 1);
      logs.seeds.push_back(seed);
      logs.records.push_back(*std::move(records));
    }
    runs.push_back(std::move(logs));
  }

  std::string title = base->name();
  const SolverConfig& solver = base->solver();
  // λ belongs in the title only when no run sets its own.
  bool per_run_lambda = false;
  for (const RunSpec& spec : *specs) {
    for (const auto& field : spec.fields) {
      if (field.first == "lambda") per_run_lambda = true;
    }
  }
  if (solver.lambda() > 0 && !per_run_lambda) {
    absl::StrAppend(&title, absl::StrFormat(", λ=%g", solver.lambda()));
  }
  if (base->corpus().max_train_sentences() > 0) {
    absl::StrAppend(&title, ", n≤", base->corpus().max_train_sentences());
  }
  const Figures figures = MakeFigures(runs, title);
  std::vector<std::pair<std::string, std::string>> outputs = {
      {"gap_vs_passes.svg", figures.gap_vs_passes},
      {"gap_vs_seconds.svg", figures.gap_vs_seconds},
      {"summary.tsv", SummaryTsv(runs)}};
  if (!figures.eval_vs_passes.empty()) {
    outputs.emplace_back("eval_vs_passes.svg", figures.eval_vs_passes);
  }
  if (!figures.primal_vs_passes.empty()) {
    outputs.emplace_back("primal_vs_passes.svg", figures.primal_vs_passes);
  }
  for (const auto& [name, text] : outputs) {
    absl::Status status = WriteFile(ResolvePath(out_dir, name), text);
    if (!status.ok()) return Fail(status, 1);
  }
  std::fputs(SummaryTable(runs, absl::GetFlag(FLAGS_target_gap)).c_str(),
             stdout);
  std::fprintf(stderr, "plots and summary.tsv written to %s\n",
               out_dir.c_str());
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Compares solver configurations over seeds and plots their duality "
      "gaps: compare_solvers --config=<file.textproto> "
      "--runs='bcfw;bcfw:sampling=gap' --seeds=1,2,3 --out=<dir>");
  chaintag::ParseToolCommandLine(argc, argv);
  return chaintag::Run();
}
