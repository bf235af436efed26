#include "pipeline/flag_aliases.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/config_override.h"

namespace chaintag {

absl::Span<const FlagAlias> PipelineFlagAliases() {
  static constexpr FlagAlias kAliases[] = {
      {"model", "model_path"},
      {"log", "log_path"},
      {"predictions", "predictions_path"},
      {"solver", "solver.name"},
      {"lambda", "solver.lambda"},
      {"max_passes", "solver.max_passes"},
      {"max_seconds", "solver.max_seconds"},
      {"gap_tolerance", "solver.gap_tolerance"},
      {"gap_check", "solver.gap_check"},
      {"seed", "solver.seed"},
      {"sampling", "solver.sampling"},
      {"step", "solver.bcfw.step"},
      {"cache", "solver.bcfw.cache"},
      {"cache_factor", "solver.bcfw.cache_factor"},
      {"cache_nu", "solver.bcfw.cache_nu"},
      {"max_cache_size", "solver.bcfw.max_cache_size"},
      {"mp_max_planes", "solver.mp_bcfw.max_planes"},
      {"mp_inactive_iterations", "solver.mp_bcfw.inactive_iterations"},
      {"mp_max_approx_passes", "solver.mp_bcfw.max_approx_passes"},
      {"mp_rule", "solver.mp_bcfw.rule"},
      {"weighted_averaging", "solver.weighted_averaging"},
      {"line_search", "solver.line_search"},
      {"smoothing", "solver.svrg.smoothing", "none:NO_SMOOTHING"},
      {"smoothing_mu", "solver.svrg.smoothing_mu"},
      {"top_k", "solver.svrg.top_k"},
      {"smoothing_schedule", "solver.svrg.smoothing_schedule",
       "constant:CONSTANT_SMOOTHING,linear:LINEAR_DECAY,"
       "exponential:EXPONENTIAL_DECAY"},
      {"lr", "solver.svrg.learning_rate"},
      {"smoothness", "solver.svrg.smoothness"},
      {"kappa", "solver.casimir.kappa"},
      {"casimir_variant", "solver.casimir.variant",
       "const:CASIMIR_CONST,adapt:CASIMIR_ADAPT"},
      {"warm_start", "solver.casimir.warm_start"},
      {"decay_q", "solver.casimir.decay_q",
       "reference_code:Q_REFERENCE_CODE,paper:Q_PAPER"},
      {"lazy_updates", "solver.svrg.lazy_updates"},
      {"threads", "solver.num_threads"},
      {"num_buckets", "features.num_buckets"},
      {"train_scheme", "model.train_scheme"},
      {"max_train_sentences", "corpus.max_train_sentences"},
      {"eval_every", "eval_every"},
      {"nonnegative_transitions", "model.nonnegative_transitions"},
      {"normalize_loss", "model.normalize_loss"},
      {"retrain_on_train_and_dev", "corpus.retrain_on_train_and_dev"},
      {"weight_precision", "model.weight_precision"},
      {"checkpoint_every", "checkpoint.every_passes"},
      {"checkpoint_every_seconds", "checkpoint.every_seconds"},
  };
  return kAliases;
}

namespace {

// The field value of a flag's value: its word translated, else as given.
std::string FieldValue(const FlagAlias& alias, const std::string& value) {
  for (absl::string_view pair :
       absl::StrSplit(alias.words, ',', absl::SkipEmpty())) {
    const std::vector<absl::string_view> word = absl::StrSplit(pair, ':');
    if (absl::EqualsIgnoreCase(word[0], value)) return std::string(word[1]);
  }
  return value;
}

}  // namespace

absl::Status ApplyFlagAliases(
    absl::Span<const FlagAlias> aliases,
    const std::function<std::optional<std::string>(absl::string_view flag)>&
        given,
    PipelineConfig* config) {
  for (const FlagAlias& alias : aliases) {
    const std::optional<std::string> value = given(alias.flag);
    if (!value.has_value()) continue;
    absl::Status status =
        SetFieldByPath(alias.path, FieldValue(alias, *value), config);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", alias.flag, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status SetSolverOption(absl::string_view name, absl::string_view value,
                             SolverConfig* config) {
  constexpr absl::string_view kSolverPrefix = "solver.";
  for (const FlagAlias& alias : PipelineFlagAliases()) {
    absl::string_view path = alias.path;
    if (name == alias.flag && absl::ConsumePrefix(&path, kSolverPrefix)) {
      return SetFieldByPath(path, FieldValue(alias, std::string(value)),
                            config);
    }
  }
  return SetFieldByPath(name, value, config);
}

}  // namespace chaintag
