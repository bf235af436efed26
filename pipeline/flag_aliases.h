// The named flags of the tools that train (train, the //pipeline presets,
// regpath): each is an alias of one PipelineConfig field, set through the
// one override mechanism (base/config_override.h). A flag that keeps its
// default ("", -1 or 0: not given) sets nothing.
//
// Thread-safety: constant data and a stateless function.

#ifndef CHAINTAG_PIPELINE_FLAG_ALIASES_H_
#define CHAINTAG_PIPELINE_FLAG_ALIASES_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "pipeline/pipeline_config.pb.h"
#include "solvers/solver_config.pb.h"

namespace chaintag {

struct FlagAlias {
  const char* flag;  // without "--"
  const char* path;  // dotted path in PipelineConfig
  // The flag's words that are not the enum value's name (compared without
  // case), as "word:NAME" pairs separated by commas.
  const char* words = "";
};

// Every named override flag of train and regpath.
absl::Span<const FlagAlias> PipelineFlagAliases();

// For each alias whose flag `given` reports a value for, sets its field
// from that value (words translated); errors name the flag.
absl::Status ApplyFlagAliases(
    absl::Span<const FlagAlias> aliases,
    const std::function<std::optional<std::string>(absl::string_view flag)>&
        given,
    PipelineConfig* config);

// Sets the SolverConfig field that train's flag `name` sets (its path
// without "solver.", its words translated: `step=pairwise`, `lr=0.02`,
// `smoothing=none`), or else the field at the dotted path `name` in
// SolverConfig (`bcfw.cache_factor`): the keys of compare_solvers' run
// specs.
absl::Status SetSolverOption(absl::string_view name, absl::string_view value,
                             SolverConfig* config);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_FLAG_ALIASES_H_
