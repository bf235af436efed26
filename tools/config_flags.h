// The named flags of the tools that train (train, regpath, compare_solvers)
// and the one way they load a config: each named flag is an alias of one
// PipelineConfig field, defined once in the tables below (type, name, dotted
// path, words, help), takes its default from the config proto (as
// sentencepiece's spm_train_main.cc does with its default TrainerSpec) and
// sets its field only when given on the command line, so every value, 0
// and the default included, is honoured. `--set=path=value` reaches any other
// scalar field, a repeated one by a list "[v1,v2]", through the same
// mechanism (base/config_override.h); every --set applies, in order.
//
// A main defines the flags of the tables it uses, builds its table from the
// same lists and parses with ParseToolCommandLine, which notes the flags
// given:
//
//   #define TRAIN_FLAGS(X) CHAINTAG_RUN_FLAGS(X) CHAINTAG_SOLVER_FLAGS(X) ...
//   TRAIN_FLAGS(CHAINTAG_DEFINE_CONFIG_FLAG)
//   constexpr ConfigFlag kConfigFlags[] = {TRAIN_FLAGS(CHAINTAG_CONFIG_ROW)};
//   ... ParseToolCommandLine(argc, argv);
//   LoadConfig(kConfigFlags, config_path, set_assignments);
//
// "Given" is seen through Abseil's public OnUpdate hook on each flag, not
// through std::optional<T> flags (empty unless given): Abseil's parser takes
// only flags of type bool as switches, so an optional bool would break
// `--cache` and `--nocache`; an optional flag reads `--model=` as "not
// given" rather than an empty path; and --help would show its default as
// empty instead of the proto's.
//
// Thread-safety: call ParseToolCommandLine once, from main, before other
// threads start; the other functions read the flag registry and what it
// noted, so call them after it.

#ifndef CHAINTAG_TOOLS_CONFIG_FLAGS_H_
#define CHAINTAG_TOOLS_CONFIG_FLAGS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/message.h"
#include "pipeline/pipeline_config.pb.h"

namespace chaintag {

// One named flag: an alias of the PipelineConfig field at `path`. `words`
// are the flag's values that are not the enum value's name (compared
// without case), as "word:NAME" pairs separated by commas.
struct ConfigFlag {
  const char* name;
  const char* path;
  const char* words;
};

// The field's declared default in PipelineConfig, as the flag's type (enum
// fields are string flags holding the value's name in lower case). A path
// that names no single scalar field gives T{}; config_flags_test checks
// every table row.
template <typename T>
T ConfigFieldDefault(absl::string_view path);

// absl::ParseCommandLine, noting each flag defined with CHAINTAG_NOTE_GIVEN
// that it sets (from the command line or a flag file) for FlagWasGiven. A
// main that reads FlagWasGiven parses with this instead.
std::vector<char*> ParseToolCommandLine(int argc, char* argv[]);

// Whether ParseToolCommandLine set the flag, whatever the value (the default
// included). Only flags defined with CHAINTAG_NOTE_GIVEN (every named config
// flag) are noted; absl::SetFlag does not count.
bool FlagWasGiven(absl::string_view name);

// The callback of CHAINTAG_NOTE_GIVEN. Abseil calls a flag's callback after
// every update, and also once when the flag is defined, so only the calls
// made while ParseToolCommandLine parses are taken as "given".
void NoteFlagUpdate(absl::string_view name);

// The --set flag's assignments: the pieces of every --set on the command
// line (or in a flag file), in order. Abseil keeps only the last value of a
// flag given twice, so the flag notes each as it is parsed
// (CHAINTAG_DEFINE_SET_FLAG). Abseil splits a piece at every comma, a
// list's included; LoadConfig (base/config_override.h's ApplyAssignments)
// joins a list's pieces again.
std::vector<std::string> GivenSetAssignments();

// The callback of CHAINTAG_DEFINE_SET_FLAG: notes `pieces`, the flag's
// value, while ParseToolCommandLine parses.
void NoteSetFlag(const std::vector<std::string>& pieces);

// Sets the field of every flag in `flags` that was given, from its value
// (words translated); errors name the flag.
absl::Status ApplyGivenConfigFlags(absl::Span<const ConfigFlag> flags,
                                   PipelineConfig* config);

// The config of a run: the text proto at `config_path` (looked up from the
// caller's directory first), then the given named flags, then the `--set`
// assignments, in that order, so a dotted path wins over the named flag of
// its field; λ given one way there (solver.lambda, .c or .c2; ℓ1 by .l1 or
// .c1) clears the config's other ways of giving it; then features.template_file
// is expanded into the templates (ExpandTemplateFile: a path from the file
// against the file's directory, one from the command line against the
// caller's). Errors of the command line are InvalidArgument; a file that cannot
// be read is NotFound, one that does not parse DataLoss (naming the file, line
// and column). `tool_defaults`, when given, adjusts the config after it is read
// and before the flags: a tool's own defaults and its flags that are more than
// an alias (regpath's dev split).
absl::StatusOr<PipelineConfig> LoadConfig(
    absl::Span<const ConfigFlag> flags, const std::string& config_path,
    const std::vector<std::string>& set_assignments,
    const std::function<absl::Status(PipelineConfig*)>& tool_defaults =
        nullptr);

// Sets the SolverConfig field named by `name` in a compare_solvers run spec:
// a named flag of the solver tables (its path without "solver.", its words
// translated: `step=pairwise`, `lr=0.02`, `smoothing=none`), or else the
// field at the dotted path `name` in SolverConfig (`bcfw.cache_factor`).
absl::Status SetSolverOption(absl::string_view name, absl::string_view value,
                             SolverConfig* config);

}  // namespace chaintag

// The tables. X(type, flag, dotted path, words, help). The help text says
// the path; the default is the proto's, which a config file overrides.

// What every training tool takes: budgets, cadence, threads, data size.
#define CHAINTAG_RUN_FLAGS(X)                                            \
  X(int32_t, max_passes, "solver.max_passes", "", "Maximum passes.")     \
  X(double, max_seconds, "solver.max_seconds", "",                       \
    "Time budget in seconds (0 = none).")                                \
  X(double, gap_tolerance, "solver.gap_tolerance", "",                   \
    "Stop once the exact duality gap is at most this.")                  \
  X(double, relative_gap_tolerance, "solver.relative_gap_tolerance", "", \
    "Stop once the exact gap is at most this share of the primal.")      \
  X(int32_t, gap_check, "solver.gap_check", "",                          \
    "Passes between exact duality gaps.")                                \
  X(int32_t, threads, "solver.num_threads", "",                          \
    "Threads for batch passes and mini-batch rounds.")                   \
  X(int32_t, max_train_sentences, "corpus.max_train_sentences", "",      \
    "Use only the first N training sentences (0 = all).")                \
  X(int32_t, eval_every, "eval_every", "",                               \
    "Passes between held-out evaluations (0 = only at the end).")        \
  X(uint64_t, num_buckets, "features.num_buckets", "",                   \
    "Feature hash buckets.")                                             \
  X(int32_t, min_feature_count, "features.min_feature_count", "",        \
    "CRF++'s -f: features seen fewer times get no row.")                 \
  X(std::string, template_file, "features.template_file", "",            \
    "A CRF++ template / Wapiti pattern file to add to the templates.")

// λ, which regpath chooses along its path.
#define CHAINTAG_LAMBDA_FLAGS(X)                                \
  X(double, lambda, "solver.lambda", "",                        \
    "Regularisation lambda (0 = from --c or --c2, else 1/n).")  \
  X(double, c, "solver.c", "",                                  \
    "CRF++'s -c: lambda = 1/(C n), the same at any data size.") \
  X(double, c2, "solver.c2", "",                                \
    "CRFsuite's c2 (Wapiti's -2): lambda = 2 c2 / n.")

// The seed, which compare_solvers sets for each of its runs.
#define CHAINTAG_SEED_FLAGS(X) \
  X(uint64_t, seed, "solver.seed", "", "Random seed of the solver.")

// The Frank-Wolfe family's choices (bcfw, active_set_bcfw, mp_bcfw, fw).
#define CHAINTAG_SOLVER_FLAGS(X)                                               \
  X(std::string, solver, "solver.name", "",                                    \
    "bcfw | active_set_bcfw | mp_bcfw | fw | ssg | sag | lbfgs | svrg | "      \
    "casimir_svrg.")                                                           \
  X(std::string, sampling, "solver.sampling", "",                              \
    "uniform | permutation | gap (block sampling).")                           \
  X(std::string, step, "solver.bcfw.step", "",                                 \
    "fw | pairwise | away | best (bcfw block step).")                          \
  X(bool, cache, "solver.bcfw.cache", "", "The gap-based corner cache.")       \
  X(double, cache_factor, "solver.bcfw.cache_factor", "",                      \
    "Cache factor F: a cached corner is used when its gap is >= "              \
    "max(F g_i, nu G / n).")                                                   \
  X(double, cache_nu, "solver.bcfw.cache_nu", "", "Cache threshold nu.")       \
  X(int32_t, max_cache_size, "solver.bcfw.max_cache_size", "",                 \
    "Corners cached per block.")                                               \
  X(int32_t, mp_max_planes, "solver.mp_bcfw.max_planes", "",                   \
    "mp_bcfw: planes per block.")                                              \
  X(int32_t, mp_inactive_iterations, "solver.mp_bcfw.inactive_iterations", "", \
    "mp_bcfw: drop planes unused for this many iterations.")                   \
  X(int32_t, mp_max_approx_passes, "solver.mp_bcfw.max_approx_passes", "",     \
    "mp_bcfw: approximate passes per outer iteration.")                        \
  X(std::string, mp_rule, "solver.mp_bcfw.rule", "",                           \
    "deterministic | wall_clock (when mp_bcfw stops approximate passes).")     \
  X(bool, weighted_averaging, "solver.weighted_averaging", "",                 \
    "Return the weighted average w-bar.")                                      \
  X(bool, line_search, "solver.line_search", "",                               \
    "Exact line search on block steps.")                                       \
  X(bool, nonnegative_transitions, "model.nonnegative_transitions", "",        \
    "Constrain transition weights to be >= 0 (bcfw, active_set_bcfw).")

// The smooth objectives' solvers: SVRG, Casimir-SVRG and SAG.
#define CHAINTAG_SVRG_FLAGS(X)                                                 \
  X(double, c1, "solver.c1", "",                                               \
    "CRFsuite's c1 (Wapiti's -1): l1 = c1 / n (sag).")                         \
  X(double, l1, "solver.l1", "",                                               \
    "L1 weight of the elastic net (sag; CRFsuite's c1 is l1 times n).")        \
  X(double, sag_lr, "solver.sag.learning_rate", "", "sag: step size eta.")     \
  X(std::string, sag_variant, "solver.sag.variant", "", "sag: sag | saga.")    \
  X(bool, nonuniform_sampling, "solver.sag.nonuniform_sampling", "",           \
    "sag: draw examples by their feature count (half) and uniformly.")         \
  X(std::string, smoothing, "solver.svrg.smoothing", "none:NO_SMOOTHING",      \
    "none | l2_top_k | entropy.")                                              \
  X(double, smoothing_mu, "solver.svrg.smoothing_mu", "",                      \
    "Smoothing mu (first epoch).")                                             \
  X(int32_t, top_k, "solver.svrg.top_k", "", "Labelings of the l2 smoothing.") \
  X(std::string, smoothing_schedule, "solver.svrg.smoothing_schedule",         \
    "constant:CONSTANT_SMOOTHING,linear:LINEAR_DECAY,"                         \
    "exponential:EXPONENTIAL_DECAY",                                           \
    "constant | linear | exponential.")                                        \
  X(double, lr, "solver.svrg.learning_rate", "",                               \
    "Learning rate eta (0 = 1/(L + lambda + kappa) from --smoothness).")       \
  X(double, smoothness, "solver.svrg.smoothness", "",                          \
    "Smoothness constant L.")                                                  \
  X(double, kappa, "solver.casimir.kappa", "",                                 \
    "casimir_svrg: kappa (0 = the variant's rule).")                           \
  X(std::string, casimir_variant, "solver.casimir.variant",                    \
    "const:CASIMIR_CONST,adapt:CASIMIR_ADAPT", "const | adapt.")               \
  X(std::string, warm_start, "solver.casimir.warm_start", "",                  \
    "prox_center | prev_iterate | extrapolation.")                             \
  X(std::string, decay_q, "solver.casimir.decay_q",                            \
    "reference_code:Q_REFERENCE_CODE,paper:Q_PAPER",                           \
    "reference_code (q = kappa/(kappa+lambda)) | paper (q = "                  \
    "lambda/(lambda+kappa)).")                                                 \
  X(bool, lazy_updates, "solver.svrg.lazy_updates", "",                        \
    "false = O(dim) textbook SVRG steps.")

// What train writes and how the model is set up.
#define CHAINTAG_OUTPUT_FLAGS(X)                                              \
  X(std::string, model, "model_path", "", "Model output path.")               \
  X(std::string, log, "log_path", "", "JSON-lines training log path.")        \
  X(std::string, predictions, "predictions_path", "",                         \
    "Also write the tagged test file (CoNLL columns + prediction).")          \
  X(std::string, train_scheme, "model.train_scheme", "",                      \
    "Tag scheme to train in: iob1 | iob2 | iobes.")                           \
  X(bool, normalize_loss, "model.normalize_loss", "",                         \
    "Hamming loss divided by the sentence length.")                           \
  X(std::string, loss, "model.loss",                                          \
    "hinge:HINGE,log:LOG,crf:LOG,"                                            \
    "softmax_margin:SOFTMAX_MARGIN",                                          \
    "hinge (structured SVM) | log (a CRF) | softmax_margin; log and "         \
    "softmax_margin train with --solver=sag (default), lbfgs, svrg or "       \
    "casimir_svrg.")                                                          \
  X(bool, retrain_on_train_and_dev, "corpus.retrain_on_train_and_dev", "",    \
    "After the run on train (scored on dev), train the saved model again on " \
    "train + dev.")                                                           \
  X(std::string, weight_precision, "model.weight_precision", "",              \
    "float32 (half the model) | float64 (the solver's weights exactly) for "  \
    "the saved emission weights.")                                            \
  X(int32_t, checkpoint_every, "checkpoint.every_passes", "",                 \
    "Write the solver's whole state to <model>.ckpt every N passes.")         \
  X(double, checkpoint_every_seconds, "checkpoint.every_seconds", "",         \
    "...and/or when this many seconds have passed since the last one.")

// The OnUpdate callback that lets FlagWasGiven see a flag of a main's own:
//   ABSL_FLAG(double, dev_fraction, 0, "...")
//       .OnUpdate(CHAINTAG_NOTE_GIVEN(dev_fraction));
#define CHAINTAG_NOTE_GIVEN(flag) [] { ::chaintag::NoteFlagUpdate(#flag); }

// A main's --set flag, every occurrence of which applies
// (GivenSetAssignments):
//   CHAINTAG_DEFINE_SET_FLAG("Sets any config field by its dotted path ...");
#define CHAINTAG_DEFINE_SET_FLAG(help)                             \
  ABSL_FLAG(std::vector<std::string>, set, {}, help).OnUpdate([] { \
    ::chaintag::NoteSetFlag(absl::GetFlag(FLAGS_set));             \
  });

// X-macro bodies: a flag definition, and a row of a main's table.
#define CHAINTAG_DEFINE_CONFIG_FLAG(type, flag, path, words, help)  \
  ABSL_FLAG(type, flag, ::chaintag::ConfigFieldDefault<type>(path), \
            help " [config: " path "]")                             \
      .OnUpdate(CHAINTAG_NOTE_GIVEN(flag));
#define CHAINTAG_CONFIG_ROW(type, flag, path, words, help) {#flag, path, words},

#endif  // CHAINTAG_TOOLS_CONFIG_FLAGS_H_
