#include "pipeline/flag_aliases.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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
      {"step", "solver.step"},
      {"cache", "solver.cache"},
      {"cache_factor", "solver.cache_factor"},
      {"cache_nu", "solver.cache_nu"},
      {"max_cache_size", "solver.max_cache_size"},
      {"mp_max_planes", "solver.mp_max_planes"},
      {"mp_inactive_iterations", "solver.mp_inactive_iterations"},
      {"mp_max_approx_passes", "solver.mp_max_approx_passes"},
      {"mp_rule", "solver.mp_rule"},
      {"weighted_averaging", "solver.weighted_averaging"},
      {"line_search", "solver.line_search"},
      {"smoothing", "solver.smoothing", "none:NO_SMOOTHING"},
      {"smoothing_mu", "solver.smoothing_mu"},
      {"top_k", "solver.top_k"},
      {"smoothing_schedule", "solver.smoothing_schedule",
       "constant:CONSTANT_SMOOTHING,linear:LINEAR_DECAY,"
       "exponential:EXPONENTIAL_DECAY"},
      {"lr", "solver.learning_rate"},
      {"smoothness", "solver.smoothness"},
      {"kappa", "solver.kappa"},
      {"casimir_variant", "solver.casimir_variant",
       "const:CASIMIR_CONST,adapt:CASIMIR_ADAPT"},
      {"warm_start", "solver.warm_start"},
      {"decay_q", "solver.decay_q",
       "reference_code:Q_REFERENCE_CODE,paper:Q_PAPER"},
      {"lazy_updates", "solver.lazy_updates"},
      {"threads", "solver.num_threads"},
      {"num_buckets", "features.num_buckets"},
      {"train_scheme", "model.train_scheme"},
      {"max_train_sentences", "corpus.max_train_sentences"},
      {"eval_every", "eval_every"},
      {"nonnegative_transitions", "model.nonnegative_transitions"},
      {"normalize_loss", "model.normalize_loss"},
      {"retrain_on_train_and_dev", "corpus.retrain_on_train_and_dev"},
      {"weight_precision", "model.weight_precision"},
  };
  return kAliases;
}

absl::Status ApplyFlagAliases(
    absl::Span<const FlagAlias> aliases,
    const std::function<std::optional<std::string>(absl::string_view flag)>&
        given,
    PipelineConfig* config) {
  for (const FlagAlias& alias : aliases) {
    const std::optional<std::string> value = given(alias.flag);
    if (!value.has_value()) continue;
    std::string field_value = *value;
    for (absl::string_view pair :
         absl::StrSplit(alias.words, ',', absl::SkipEmpty())) {
      const std::vector<absl::string_view> word = absl::StrSplit(pair, ':');
      if (absl::EqualsIgnoreCase(word[0], *value)) {
        field_value = std::string(word[1]);
      }
    }
    absl::Status status = SetFieldByPath(alias.path, field_value, config);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", alias.flag, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace chaintag
