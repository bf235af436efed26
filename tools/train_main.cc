// train: runs a PipelineConfig (text proto) with optional flag overrides.
//
//   bazel run //tools:train --
//   --config=pipeline/configs/conll2000_chunking.textproto \
//       --lambda=1e-4 --max_passes=50 --model=/tmp/chunker.model
//
// The //pipeline:* presets are this binary with their config preset.
// Progress goes to stderr; the final conlleval table to stdout.

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "corpora/tag_scheme.h"
#include "pipeline/pipeline.h"

ABSL_FLAG(std::string, config, "", "PipelineConfig in protobuf text format.");
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
ABSL_FLAG(std::string, model, "", "Override: model output path.");
ABSL_FLAG(std::string, log, "", "Override: JSON-lines training log path.");
ABSL_FLAG(std::string, predictions, "",
          "Also write the tagged test file (CoNLL columns + prediction).");
ABSL_FLAG(std::string, solver, "", "Override: solver name.");
ABSL_FLAG(double, lambda, -1, "Override: regularisation λ (0 = 1/n).");
ABSL_FLAG(int, max_passes, 0, "Override: maximum passes.");
ABSL_FLAG(double, max_seconds, -1, "Override: time budget (0 = none).");
ABSL_FLAG(double, gap_tolerance, -1, "Override: duality gap tolerance.");
ABSL_FLAG(int, gap_check, 0, "Override: passes between exact gaps.");
ABSL_FLAG(int64_t, seed, -1, "Override: random seed.");
ABSL_FLAG(std::string, sampling, "", "Override: uniform | permutation.");
ABSL_FLAG(int, threads, 0, "Override: threads for batch passes.");
ABSL_FLAG(int64_t, num_buckets, 0, "Override: feature hash buckets.");
ABSL_FLAG(std::string, train_scheme, "",
          "Override: scheme to train in (iob1, iob2, iobes).");
ABSL_FLAG(int, max_train_sentences, -1,
          "Override: use only the first N training sentences (0 = all).");
ABSL_FLAG(int, eval_every, -1,
          "Override: passes between test evaluations (0 = only at the end).");
ABSL_FLAG(std::string, normalize_loss, "",
          "Override: true = Hamming loss divided by sentence length.");
ABSL_FLAG(bool, quiet, false, "No progress lines.");

namespace chaintag {
namespace {

absl::Status ApplyOverrides(PipelineConfig* config) {
  SolverConfig* solver = config->mutable_solver();
  if (!absl::GetFlag(FLAGS_model).empty()) {
    config->set_model_path(absl::GetFlag(FLAGS_model));
  }
  if (!absl::GetFlag(FLAGS_log).empty()) {
    config->set_log_path(absl::GetFlag(FLAGS_log));
  }
  if (!absl::GetFlag(FLAGS_predictions).empty()) {
    config->set_predictions_path(absl::GetFlag(FLAGS_predictions));
  }
  if (!absl::GetFlag(FLAGS_solver).empty()) {
    solver->set_name(absl::GetFlag(FLAGS_solver));
  }
  if (absl::GetFlag(FLAGS_lambda) >= 0) {
    solver->set_lambda(absl::GetFlag(FLAGS_lambda));
  }
  if (absl::GetFlag(FLAGS_max_passes) > 0) {
    solver->set_max_passes(absl::GetFlag(FLAGS_max_passes));
  }
  if (absl::GetFlag(FLAGS_max_seconds) >= 0) {
    solver->set_max_seconds(absl::GetFlag(FLAGS_max_seconds));
  }
  if (absl::GetFlag(FLAGS_gap_tolerance) >= 0) {
    solver->set_gap_tolerance(absl::GetFlag(FLAGS_gap_tolerance));
  }
  if (absl::GetFlag(FLAGS_gap_check) > 0) {
    solver->set_gap_check(absl::GetFlag(FLAGS_gap_check));
  }
  if (absl::GetFlag(FLAGS_seed) >= 0) {
    solver->set_seed(static_cast<uint64_t>(absl::GetFlag(FLAGS_seed)));
  }
  const std::string sampling = absl::GetFlag(FLAGS_sampling);
  if (sampling == "uniform") {
    solver->set_sampling(SolverConfig::UNIFORM);
  } else if (sampling == "permutation") {
    solver->set_sampling(SolverConfig::PERMUTATION);
  } else if (!sampling.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sampling: expected uniform or permutation, got ", sampling));
  }
  if (absl::GetFlag(FLAGS_threads) > 0) {
    solver->set_num_threads(absl::GetFlag(FLAGS_threads));
  }
  if (absl::GetFlag(FLAGS_num_buckets) > 0) {
    config->mutable_features()->set_num_buckets(
        static_cast<uint64_t>(absl::GetFlag(FLAGS_num_buckets)));
  }
  if (!absl::GetFlag(FLAGS_train_scheme).empty()) {
    absl::StatusOr<TagScheme> scheme =
        ParseTagScheme(absl::GetFlag(FLAGS_train_scheme));
    if (!scheme.ok()) return scheme.status();
    config->mutable_model()->set_train_scheme(*scheme);
  }
  const std::string normalize = absl::GetFlag(FLAGS_normalize_loss);
  if (normalize == "true" || normalize == "false") {
    config->mutable_model()->set_normalize_loss(normalize == "true");
  } else if (!normalize.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--normalize_loss: expected true or false, got ", normalize));
  }
  if (absl::GetFlag(FLAGS_max_train_sentences) >= 0) {
    config->mutable_corpus()->set_max_train_sentences(
        absl::GetFlag(FLAGS_max_train_sentences));
  }
  if (absl::GetFlag(FLAGS_eval_every) >= 0) {
    config->set_eval_every(absl::GetFlag(FLAGS_eval_every));
  }
  return absl::OkStatus();
}

int Run() {
  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    std::fprintf(stderr, "train: --config=<file.textproto> is required\n");
    return 2;
  }
  // Like any user path, the config is looked up from the caller's
  // directory; the //pipeline presets pass a path inside their runfiles.
  absl::StatusOr<PipelineConfig> config =
      ReadPipelineConfig(ResolveUserPath(config_path));
  if (absl::IsNotFound(config.status()) &&
      ResolveUserPath(config_path) != config_path) {
    config = ReadPipelineConfig(config_path);
  }
  if (!config.ok()) {
    std::fprintf(stderr, "train: %s\n", config.status().ToString().c_str());
    return 1;
  }
  absl::Status status = ApplyOverrides(&*config);
  if (!status.ok()) {
    std::fprintf(stderr, "train: %s\n", status.ToString().c_str());
    return 2;
  }
  PipelineOptions options;
  options.corpora_root = absl::GetFlag(FLAGS_corpora).empty()
                             ? DefaultCorporaRoot()
                             : ResolveUserPath(absl::GetFlag(FLAGS_corpora));
  options.output_dir = CallerDirectory();
  if (absl::GetFlag(FLAGS_quiet)) options.progress = nullptr;
  absl::StatusOr<PipelineResult> result = RunPipeline(*config, options);
  if (!result.ok()) {
    std::fprintf(stderr, "train: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::fputs(result->test_report.c_str(), stdout);
  std::fprintf(stderr, "model written to %s\ntraining log: %s\n",
               result->model_path.c_str(), result->log_path.c_str());
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Trains a chain model from a pipeline config: train "
      "--config=<file.textproto> [overrides]");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
