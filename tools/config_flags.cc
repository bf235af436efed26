#include "tools/config_flags.h"

#include <atomic>
#include <fstream>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/const_init.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "base/config_override.h"
#include "base/paths.h"
#include "features/template_file.h"
#include "pipeline/pipeline.h"
#include "solvers/solver.h"

namespace chaintag {
namespace {

// Whether ParseToolCommandLine is parsing: only then is a flag's update the
// user's. Constant-initialized, as Abseil calls NoteFlagUpdate while the
// flags are defined, during static initialization.
ABSL_CONST_INIT std::atomic<bool> parsing{false};

ABSL_CONST_INIT absl::Mutex given_mutex(absl::kConstInit);

// The flags ParseToolCommandLine set. Never destroyed, so no exit-time
// destructor races a late reader.
absl::flat_hash_set<std::string>& GivenFlags()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(given_mutex) {
  static auto* const given = new absl::flat_hash_set<std::string>;
  return *given;
}

// Every table's rows whose path is in SolverConfig: the keys of run specs.
constexpr ConfigFlag kSolverRows[] = {
    CHAINTAG_RUN_FLAGS(CHAINTAG_CONFIG_ROW)
        CHAINTAG_LAMBDA_FLAGS(CHAINTAG_CONFIG_ROW)
            CHAINTAG_SEED_FLAGS(CHAINTAG_CONFIG_ROW)
                CHAINTAG_SOLVER_FLAGS(CHAINTAG_CONFIG_ROW)
                    CHAINTAG_SVRG_FLAGS(CHAINTAG_CONFIG_ROW)};

// The field value of a flag's value: its word translated, else as given.
std::string FieldValue(const ConfigFlag& flag, absl::string_view value) {
  for (absl::string_view pair :
       absl::StrSplit(flag.words, ',', absl::SkipEmpty())) {
    const std::vector<absl::string_view> word = absl::StrSplit(pair, ':');
    if (absl::EqualsIgnoreCase(word[0], value)) return std::string(word[1]);
  }
  return std::string(value);
}

// "; the flag also takes ..." for a flag with words, else "".
std::string Words(const ConfigFlag& flag) {
  std::vector<std::string> words;
  for (absl::string_view pair :
       absl::StrSplit(flag.words, ',', absl::SkipEmpty())) {
    words.emplace_back(pair.substr(0, pair.find(':')));
  }
  if (words.empty()) return "";
  return absl::StrCat("; the flag also takes ", absl::StrJoin(words, ", "));
}

// The directory of the config file ReadUserPipelineConfig reads for `path`
// ("" when it has none, i.e. the working directory).
std::string ConfigDirectory(const std::string& path) {
  std::string read = ResolveUserPath(path);
  if (!std::ifstream(read).good()) read = path;
  const size_t slash = read.rfind('/');
  return slash == std::string::npos ? "" : read.substr(0, slash);
}

}  // namespace

template <typename T>
T ConfigFieldDefault(absl::string_view path) {
  absl::StatusOr<std::string> text =
      FieldDefaultByPath(*PipelineConfig::descriptor(), path);
  T value{};
  std::string error;
  if (!text.ok() || !absl::ParseFlag(*text, &value, &error)) return T{};
  return value;
}

template int32_t ConfigFieldDefault<int32_t>(absl::string_view);
template int64_t ConfigFieldDefault<int64_t>(absl::string_view);
template uint64_t ConfigFieldDefault<uint64_t>(absl::string_view);
template double ConfigFieldDefault<double>(absl::string_view);
template bool ConfigFieldDefault<bool>(absl::string_view);
template std::string ConfigFieldDefault<std::string>(absl::string_view);

// Every --set flag's pieces, in command-line order.
std::vector<std::string>& SetPieces()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(given_mutex) {
  static auto* const pieces = new std::vector<std::string>;
  return *pieces;
}

std::vector<char*> ParseToolCommandLine(int argc, char* argv[]) {
  parsing.store(true);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  parsing.store(false);
  return positional;
}

void NoteFlagUpdate(absl::string_view name) {
  if (!parsing.load()) return;
  absl::MutexLock lock(&given_mutex);
  GivenFlags().emplace(name);
}

void NoteSetFlag(const std::vector<std::string>& pieces) {
  if (!parsing.load()) return;
  absl::MutexLock lock(&given_mutex);
  std::vector<std::string>& all = SetPieces();
  all.insert(all.end(), pieces.begin(), pieces.end());
}

std::vector<std::string> GivenSetAssignments() {
  absl::MutexLock lock(&given_mutex);
  return SetPieces();
}

bool FlagWasGiven(absl::string_view name) {
  // Noted by the flag's own callback, so a value equal to the default is
  // still a value the user asked for.
  absl::MutexLock lock(&given_mutex);
  return GivenFlags().contains(name);
}

absl::Status ApplyGivenConfigFlags(absl::Span<const ConfigFlag> flags,
                                   PipelineConfig* config) {
  for (const ConfigFlag& flag : flags) {
    if (!FlagWasGiven(flag.name)) continue;
    const absl::CommandLineFlag* handle = absl::FindCommandLineFlag(flag.name);
    if (handle == nullptr) {
      return absl::InternalError(
          absl::StrCat("--", flag.name, " is in the table but not defined"));
    }
    absl::Status status = SetFieldByPath(
        flag.path, FieldValue(flag, handle->CurrentValue()), config);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag.name, ": ", status.message(), Words(flag)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PipelineConfig> LoadConfig(
    absl::Span<const ConfigFlag> flags, const std::string& config_path,
    const std::vector<std::string>& set_assignments,
    const std::function<absl::Status(PipelineConfig*)>& tool_defaults) {
  if (config_path.empty()) {
    return absl::InvalidArgumentError("--config=<file.textproto> is required");
  }
  absl::StatusOr<PipelineConfig> config = ReadUserPipelineConfig(config_path);
  if (absl::IsInvalidArgument(config.status())) {
    // The file is at fault, not the command line.
    return absl::DataLossError(config.status().message());
  }
  if (!config.ok()) return config.status();
  // A template file the config names is against the config's directory;
  // one the command line names (--template_file, --set), against the
  // caller's.
  FeatureConfig* features = config->mutable_features();
  if (!features->template_file().empty()) {
    features->set_template_file(
        ResolvePath(ConfigDirectory(config_path), features->template_file()));
  }
  const std::string file_template = features->template_file();
  absl::Status status =
      tool_defaults ? tool_defaults(&*config) : absl::OkStatus();
  const SolverConfig file_solver = config->solver();
  if (status.ok()) status = ApplyGivenConfigFlags(flags, &*config);
  if (status.ok()) status = ApplyAssignments(set_assignments, &*config);
  if (!status.ok()) return status;
  KeepOverriddenLambdaForm(file_solver, config->mutable_solver());
  if (features->template_file() != file_template) {
    features->set_template_file(ResolveUserPath(features->template_file()));
  }
  status = ExpandTemplateFile("", features);
  if (!status.ok()) return status;
  return config;
}

absl::Status SetSolverOption(absl::string_view name, absl::string_view value,
                             SolverConfig* config) {
  for (const ConfigFlag& flag : kSolverRows) {
    absl::string_view path = flag.path;
    if (name == flag.name && absl::ConsumePrefix(&path, "solver.")) {
      return SetFieldByPath(path, FieldValue(flag, value), config);
    }
  }
  return SetFieldByPath(name, value, config);
}

}  // namespace chaintag
