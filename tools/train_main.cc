// train: runs a PipelineConfig (text proto) with optional flag overrides.
//
//   bazel run //tools:train --
//   --config=pipeline/configs/conll2000_chunking.textproto \
//       --lambda=1e-4 --max_passes=50 --model=/tmp/chunker.model
//
// The //pipeline:* presets are this binary with their config preset.
// Progress goes to stderr; the final conlleval table to stdout.

#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/config_override.h"
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
ABSL_FLAG(std::string, sampling, "",
          "Override: uniform | permutation | gap (bcfw block sampling).");
ABSL_FLAG(std::string, step, "",
          "Override: fw | pairwise | away | best (bcfw block step).");
ABSL_FLAG(std::string, cache, "",
          "Override: true | false (bcfw gap-based corner cache).");
ABSL_FLAG(double, cache_factor, -1,
          "Override: cache factor F (a cached corner is used when its gap is "
          ">= max(F * g_i, nu * G / n)).");
ABSL_FLAG(double, cache_nu, -1, "Override: cache threshold nu.");
ABSL_FLAG(int, max_cache_size, 0, "Override: corners cached per block.");
ABSL_FLAG(int, mp_max_planes, 0, "Override: mp_bcfw planes per block.");
ABSL_FLAG(int, mp_inactive_iterations, 0,
          "Override: mp_bcfw drops planes unused for this many iterations.");
ABSL_FLAG(int, mp_max_approx_passes, 0,
          "Override: mp_bcfw approximate passes per outer iteration.");
ABSL_FLAG(std::string, mp_rule, "",
          "Override: deterministic | wall_clock (mp_bcfw's rule for when to "
          "stop approximate passes).");
ABSL_FLAG(std::string, weighted_averaging, "",
          "Override: true | false (return the weighted average w-bar).");
ABSL_FLAG(std::string, line_search, "",
          "Override: true | false (exact line search on block steps).");
ABSL_FLAG(std::string, smoothing, "",
          "Override (svrg, casimir_svrg): none | l2_top_k | entropy.");
ABSL_FLAG(double, smoothing_mu, -1, "Override: smoothing μ (first epoch).");
ABSL_FLAG(int, top_k, 0, "Override: labelings of the ℓ2 smoothing.");
ABSL_FLAG(std::string, smoothing_schedule, "",
          "Override: constant | linear | exponential.");
ABSL_FLAG(double, lr, -1,
          "Override: SVRG learning rate η (0 = 1/(L + λ + κ) from "
          "--smoothness).");
ABSL_FLAG(double, smoothness, -1, "Override: smoothness constant L.");
ABSL_FLAG(double, kappa, -1,
          "Override: casimir_svrg κ (0 = the variant's rule).");
ABSL_FLAG(std::string, casimir_variant, "", "Override: const | adapt.");
ABSL_FLAG(std::string, warm_start, "",
          "Override: prox_center | prev_iterate | extrapolation.");
ABSL_FLAG(std::string, decay_q, "",
          "Override: reference_code (q = κ/(κ+λ)) | paper (q = λ/(λ+κ)).");
ABSL_FLAG(std::string, lazy_updates, "",
          "Override: true | false (O(dim) textbook SVRG steps).");
ABSL_FLAG(int, threads, 0, "Override: threads for batch passes.");
ABSL_FLAG(int64_t, num_buckets, 0, "Override: feature hash buckets.");
ABSL_FLAG(std::string, train_scheme, "",
          "Override: scheme to train in (iob1, iob2, iobes).");
ABSL_FLAG(int, max_train_sentences, -1,
          "Override: use only the first N training sentences (0 = all).");
ABSL_FLAG(int, eval_every, -1,
          "Override: passes between test evaluations (0 = only at the end).");
ABSL_FLAG(std::string, nonnegative_transitions, "",
          "Override: true = constrain transition weights to be >= 0 (bcfw, "
          "active_set_bcfw).");
ABSL_FLAG(std::string, normalize_loss, "",
          "Override: true = Hamming loss divided by sentence length.");
ABSL_FLAG(std::string, retrain_on_train_and_dev, "",
          "Override: true = after the run on train (scored on dev), train "
          "the saved model again on train + dev.");
ABSL_FLAG(std::string, weight_precision, "",
          "Override: float32 (default; half the model) | float64 (the "
          "solver's weights exactly) for the saved emission weights.");
ABSL_FLAG(std::vector<std::string>, set, {},
          "Sets any config field by its dotted path, after the named flags: "
          "--set=solver.lambda=1e-4,features.num_buckets=2097152 (repeat "
          "the flag or separate assignments by commas; enums by name).");
ABSL_FLAG(bool, quiet, false, "No progress lines.");

namespace chaintag {
namespace {

// A string flag that names a bool: "" = not given, else true or false.
absl::Status ParseBoolFlag(absl::string_view flag, const std::string& value,
                           std::optional<bool>* out) {
  if (value == "true" || value == "false") {
    *out = value == "true";
  } else if (!value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, ": expected true or false, got '", value, "'"));
  }
  return absl::OkStatus();
}

// A string flag that names one of an enum's values: "" = not given.
template <typename Enum>
absl::Status ParseEnumFlag(
    absl::string_view flag, const std::string& value,
    std::initializer_list<std::pair<absl::string_view, Enum>> names,
    std::optional<Enum>* out) {
  if (value.empty()) return absl::OkStatus();
  std::vector<absl::string_view> expected;
  for (const auto& [name, enum_value] : names) {
    if (value == name) {
      *out = enum_value;
      return absl::OkStatus();
    }
    expected.push_back(name);
  }
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": expected ",
                                                 absl::StrJoin(expected, " | "),
                                                 ", got '", value, "'"));
}

// The overrides of SolverConfig's svrg / casimir_svrg options.
absl::Status ApplySmoothedSolverOverrides(SolverConfig* solver) {
  std::optional<SolverConfig::SmoothingKind> smoothing;
  absl::Status status = ParseEnumFlag<SolverConfig::SmoothingKind>(
      "smoothing", absl::GetFlag(FLAGS_smoothing),
      {{"none", SolverConfig::NO_SMOOTHING},
       {"l2_top_k", SolverConfig::L2_TOP_K},
       {"entropy", SolverConfig::ENTROPY}},
      &smoothing);
  if (!status.ok()) return status;
  if (smoothing.has_value()) solver->set_smoothing(*smoothing);
  std::optional<SolverConfig::SmoothingSchedule> schedule;
  status = ParseEnumFlag<SolverConfig::SmoothingSchedule>(
      "smoothing_schedule", absl::GetFlag(FLAGS_smoothing_schedule),
      {{"constant", SolverConfig::CONSTANT_SMOOTHING},
       {"linear", SolverConfig::LINEAR_DECAY},
       {"exponential", SolverConfig::EXPONENTIAL_DECAY}},
      &schedule);
  if (!status.ok()) return status;
  if (schedule.has_value()) solver->set_smoothing_schedule(*schedule);
  std::optional<SolverConfig::CasimirVariant> variant;
  status = ParseEnumFlag<SolverConfig::CasimirVariant>(
      "casimir_variant", absl::GetFlag(FLAGS_casimir_variant),
      {{"const", SolverConfig::CASIMIR_CONST},
       {"adapt", SolverConfig::CASIMIR_ADAPT}},
      &variant);
  if (!status.ok()) return status;
  if (variant.has_value()) solver->set_casimir_variant(*variant);
  std::optional<SolverConfig::WarmStart> warm_start;
  status = ParseEnumFlag<SolverConfig::WarmStart>(
      "warm_start", absl::GetFlag(FLAGS_warm_start),
      {{"prox_center", SolverConfig::PROX_CENTER},
       {"prev_iterate", SolverConfig::PREV_ITERATE},
       {"extrapolation", SolverConfig::EXTRAPOLATION}},
      &warm_start);
  if (!status.ok()) return status;
  if (warm_start.has_value()) solver->set_warm_start(*warm_start);
  std::optional<SolverConfig::DecayQ> decay_q;
  status = ParseEnumFlag<SolverConfig::DecayQ>(
      "decay_q", absl::GetFlag(FLAGS_decay_q),
      {{"reference_code", SolverConfig::Q_REFERENCE_CODE},
       {"paper", SolverConfig::Q_PAPER}},
      &decay_q);
  if (!status.ok()) return status;
  if (decay_q.has_value()) solver->set_decay_q(*decay_q);
  std::optional<bool> lazy;
  status =
      ParseBoolFlag("lazy_updates", absl::GetFlag(FLAGS_lazy_updates), &lazy);
  if (!status.ok()) return status;
  if (lazy.has_value()) solver->set_lazy_updates(*lazy);
  if (absl::GetFlag(FLAGS_smoothing_mu) >= 0) {
    solver->set_smoothing_mu(absl::GetFlag(FLAGS_smoothing_mu));
  }
  if (absl::GetFlag(FLAGS_top_k) > 0) {
    solver->set_top_k(absl::GetFlag(FLAGS_top_k));
  }
  if (absl::GetFlag(FLAGS_lr) >= 0) {
    solver->set_learning_rate(absl::GetFlag(FLAGS_lr));
  }
  if (absl::GetFlag(FLAGS_smoothness) >= 0) {
    solver->set_smoothness(absl::GetFlag(FLAGS_smoothness));
  }
  if (absl::GetFlag(FLAGS_kappa) >= 0) {
    solver->set_kappa(absl::GetFlag(FLAGS_kappa));
  }
  return absl::OkStatus();
}

// The overrides of SolverConfig's Frank-Wolfe family options.
absl::Status ApplySolverOptionOverrides(SolverConfig* solver) {
  std::optional<SolverConfig::Sampling> sampling;
  absl::Status status = ParseEnumFlag<SolverConfig::Sampling>(
      "sampling", absl::GetFlag(FLAGS_sampling),
      {{"uniform", SolverConfig::UNIFORM},
       {"permutation", SolverConfig::PERMUTATION},
       {"gap", SolverConfig::GAP}},
      &sampling);
  if (!status.ok()) return status;
  if (sampling.has_value()) solver->set_sampling(*sampling);

  std::optional<SolverConfig::Step> step;
  status =
      ParseEnumFlag<SolverConfig::Step>("step", absl::GetFlag(FLAGS_step),
                                        {{"fw", SolverConfig::FW},
                                         {"pairwise", SolverConfig::PAIRWISE},
                                         {"away", SolverConfig::AWAY},
                                         {"best", SolverConfig::BEST}},
                                        &step);
  if (!status.ok()) return status;
  if (step.has_value()) solver->set_step(*step);

  std::optional<SolverConfig::ApproxRule> rule;
  status = ParseEnumFlag<SolverConfig::ApproxRule>(
      "mp_rule", absl::GetFlag(FLAGS_mp_rule),
      {{"deterministic", SolverConfig::DETERMINISTIC},
       {"wall_clock", SolverConfig::WALL_CLOCK}},
      &rule);
  if (!status.ok()) return status;
  if (rule.has_value()) solver->set_mp_rule(*rule);

  status = ApplySmoothedSolverOverrides(solver);
  if (!status.ok()) return status;

  std::optional<bool> flag;
  status = ParseBoolFlag("cache", absl::GetFlag(FLAGS_cache), &flag);
  if (!status.ok()) return status;
  if (flag.has_value()) solver->set_cache(*flag);
  flag.reset();
  status = ParseBoolFlag("weighted_averaging",
                         absl::GetFlag(FLAGS_weighted_averaging), &flag);
  if (!status.ok()) return status;
  if (flag.has_value()) solver->set_weighted_averaging(*flag);
  flag.reset();
  status =
      ParseBoolFlag("line_search", absl::GetFlag(FLAGS_line_search), &flag);
  if (!status.ok()) return status;
  if (flag.has_value()) solver->set_line_search(*flag);

  if (absl::GetFlag(FLAGS_cache_factor) >= 0) {
    solver->set_cache_factor(absl::GetFlag(FLAGS_cache_factor));
  }
  if (absl::GetFlag(FLAGS_cache_nu) >= 0) {
    solver->set_cache_nu(absl::GetFlag(FLAGS_cache_nu));
  }
  if (absl::GetFlag(FLAGS_max_cache_size) > 0) {
    solver->set_max_cache_size(absl::GetFlag(FLAGS_max_cache_size));
  }
  if (absl::GetFlag(FLAGS_mp_max_planes) > 0) {
    solver->set_mp_max_planes(absl::GetFlag(FLAGS_mp_max_planes));
  }
  if (absl::GetFlag(FLAGS_mp_inactive_iterations) > 0) {
    solver->set_mp_inactive_iterations(
        absl::GetFlag(FLAGS_mp_inactive_iterations));
  }
  if (absl::GetFlag(FLAGS_mp_max_approx_passes) > 0) {
    solver->set_mp_max_approx_passes(absl::GetFlag(FLAGS_mp_max_approx_passes));
  }
  return absl::OkStatus();
}

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
  absl::Status status = ApplySolverOptionOverrides(solver);
  if (!status.ok()) return status;
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
  if (!absl::GetFlag(FLAGS_weight_precision).empty()) {
    WeightPrecision precision;
    if (!WeightPrecision_Parse(
            absl::AsciiStrToUpper(absl::GetFlag(FLAGS_weight_precision)),
            &precision) ||
        precision == WEIGHT_PRECISION_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          absl::StrCat("--weight_precision: expected float32 or float64, got ",
                       absl::GetFlag(FLAGS_weight_precision)));
    }
    config->mutable_model()->set_weight_precision(precision);
  }
  std::optional<bool> normalize;
  status = ParseBoolFlag("normalize_loss", absl::GetFlag(FLAGS_normalize_loss),
                         &normalize);
  if (!status.ok()) return status;
  if (normalize.has_value()) {
    config->mutable_model()->set_normalize_loss(*normalize);
  }
  std::optional<bool> nonnegative;
  status =
      ParseBoolFlag("nonnegative_transitions",
                    absl::GetFlag(FLAGS_nonnegative_transitions), &nonnegative);
  if (!status.ok()) return status;
  if (nonnegative.has_value()) {
    config->mutable_model()->set_nonnegative_transitions(*nonnegative);
  }
  std::optional<bool> retrain;
  status =
      ParseBoolFlag("retrain_on_train_and_dev",
                    absl::GetFlag(FLAGS_retrain_on_train_and_dev), &retrain);
  if (!status.ok()) return status;
  if (retrain.has_value()) {
    config->mutable_corpus()->set_retrain_on_train_and_dev(*retrain);
  }
  if (absl::GetFlag(FLAGS_max_train_sentences) >= 0) {
    config->mutable_corpus()->set_max_train_sentences(
        absl::GetFlag(FLAGS_max_train_sentences));
  }
  if (absl::GetFlag(FLAGS_eval_every) >= 0) {
    config->set_eval_every(absl::GetFlag(FLAGS_eval_every));
  }
  // Last, so that a dotted path wins over the named flag for its field.
  for (const std::string& assignment : absl::GetFlag(FLAGS_set)) {
    absl::Status set = ApplyAssignment(assignment, config);
    if (!set.ok()) return set;
  }
  return absl::OkStatus();
}

int Run() {
  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) {
    std::fprintf(stderr, "train: --config=<file.textproto> is required\n");
    return 2;
  }
  absl::StatusOr<PipelineConfig> config = ReadUserPipelineConfig(config_path);
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
  options.corpora_root = CorporaRootFromFlag(absl::GetFlag(FLAGS_corpora));
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
  if (!result->train_only_model_path.empty()) {
    std::fprintf(stderr,
                 "model trained on train only (the one the dev figures "
                 "score): %s\nlog of the train + dev run: %s\n",
                 result->train_only_model_path.c_str(),
                 result->final_log_path.c_str());
  }
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
