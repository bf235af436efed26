// english_bundle: builds the English bundle (tagging/bundle.h) from the
// presets and scores it. Trains the CoNLL-2000 POS tagger and chunker (and,
// with --ner, the CoNLL-2003 NER model) into --out (default
// ./english_bundle, relative to the caller's directory), unless a model
// file there was already trained from the same config (output paths aside):
// then it is reused (--retrain trains anyway). Writes the manifest
// bundle.textproto, then prints, on the test splits: POS accuracy; chunk F1
// on gold POS and on the POS stage's predictions; NER F1 on the corpus's
// POS and chunk columns and on the bundle's; each with tag-scheme-
// constrained decoding and with plain Viterbi.
//
//   bazel run //pipeline:english_bundle [-- --ner --out=DIR]
//   echo "Rockwell International Corp. said it signed a tentative agreement." \
//     | bazel run //tools:tag -- --pipeline=english_bundle --format=bracketed
//
// The NER stage reads the chunk column in IOB1, as CoNLL-2003 has it; that
// column came from a different chunker than ours (trained on CoNLL-2000,
// whose chunk definitions it follows), so the NER model sees slightly
// different chunk tags in the bundle than in training.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/config_override.h"
#include "base/interrupt.h"
#include "base/paths.h"
#include "corpora/conll_reader.h"
#include "google/protobuf/text_format.h"
#include "models/chain_model.h"
#include "pipeline/pipeline.h"
#include "tagging/bundle.h"
#include "tagging/bundle_eval.h"
#include "tools/config_flags.h"

ABSL_FLAG(std::string, out, "english_bundle",
          "Bundle directory to write (relative to the caller's directory).");
ABSL_FLAG(std::string, corpora, "",
          "Corpora root (default: $CHAINTAG_CORPORA, else ../shared/corpora "
          "beside the workspace).");
ABSL_FLAG(bool, ner, false,
          "Also train the CoNLL-2003 NER model (about a minute, 1 GB) and add "
          "it as a third stage.");
ABSL_FLAG(bool, retrain, false, "Train even when up-to-date models exist.");
ABSL_FLAG(bool, evaluate, true, "Score the bundle on the test splits.");
ABSL_FLAG(bool, quiet, false, "No training progress lines.");
CHAINTAG_DEFINE_SET_FLAG(
    "Overrides a stage's config field: --set=ner.solver.lambda=1e-4 (the "
    "stage, pos, chunk or ner, then the field's dotted path; assignments "
    "separated by commas; every --set applies, in order; a repeated field "
    "takes a list in brackets).")
ABSL_FLAG(std::string, pos_config, "", "The POS preset (set by the target).");
ABSL_FLAG(std::string, chunk_config, "",
          "The chunking preset (set by the target).");
ABSL_FLAG(std::string, ner_config, "", "The NER preset (set by the target).");

namespace chaintag {
namespace {

struct StageSpec {
  std::string name;
  std::string config_path;
  std::vector<std::pair<std::string, TagScheme>> inputs;
};

// What decides the weights: the config as a model file records it.
std::string TrainingIdentity(const PipelineConfig& config) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(
      RecordedConfig(ResolvePipelineConfig(config)), &text);
  return text;
}

// Whether `path` holds a model trained from `config` (output paths aside).
bool UpToDate(const std::string& path, const PipelineConfig& config) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return false;
  absl::StatusOr<ChainModel> model = ChainModel::Load(path);
  if (!model.ok()) return false;
  // An interrupted run's model is not the one its config asks for.
  if (absl::StartsWith(model->header().training().stop_reason(),
                       "interrupted")) {
    return false;
  }
  PipelineConfig trained;
  if (!google::protobuf::TextFormat::ParseFromString(
          model->header().resolved_config(), &trained)) {
    return false;
  }
  return TrainingIdentity(trained) == TrainingIdentity(config);
}

absl::StatusOr<std::vector<Sentence>> ReadTest(const std::string& path,
                                               int label_column,
                                               TagScheme scheme) {
  ConllFormat format;
  format.add_attribute_columns(0);
  format.set_label_column(label_column);
  format.set_tag_scheme(scheme);
  return ReadConllFile(path, format);
}

std::string Pair(const absl::StatusOr<StageScore>& constrained,
                 const absl::StatusOr<StageScore>& plain, bool accuracy) {
  auto one = [accuracy](const absl::StatusOr<StageScore>& score) {
    if (!score.ok()) return std::string(score.status().message());
    return absl::StrFormat("%.2f", accuracy ? score->accuracy : score->f1);
  };
  return absl::StrCat(one(constrained), " / ", one(plain));
}

// The stages of the bundle: POS and chunk, and NER with --ner.
std::vector<StageSpec> StageSpecs() {
  std::vector<StageSpec> specs = {
      {"pos",
       absl::GetFlag(FLAGS_pos_config),
       {{kWordColumn, TAG_SCHEME_UNSPECIFIED}}},
      {"chunk",
       absl::GetFlag(FLAGS_chunk_config),
       {{kWordColumn, TAG_SCHEME_UNSPECIFIED},
        {"pos", TAG_SCHEME_UNSPECIFIED}}},
  };
  if (absl::GetFlag(FLAGS_ner)) {
    specs.push_back({"ner",
                     absl::GetFlag(FLAGS_ner_config),
                     {{kWordColumn, TAG_SCHEME_UNSPECIFIED},
                      {"pos", TAG_SCHEME_UNSPECIFIED},
                      {"chunk", IOB1}}});
  }
  return specs;
}

// The --set assignments, each whole (a list's pieces, which the flag's
// parser split at its commas, joined again).
absl::StatusOr<std::vector<std::string>> SetAssignments() {
  return JoinListPieces(GivenSetAssignments());
}

// Every --set assignment names a stage of this run.
bool AssignmentsNameStages(const std::vector<StageSpec>& specs) {
  absl::StatusOr<std::vector<std::string>> assignments = SetAssignments();
  if (!assignments.ok()) {
    std::fprintf(stderr, "english_bundle: --set: %s\n",
                 std::string(assignments.status().message()).c_str());
    return false;
  }
  for (const std::string& assignment : *assignments) {
    const bool known = std::any_of(
        specs.begin(), specs.end(), [&assignment](const StageSpec& spec) {
          return absl::StartsWith(assignment, spec.name + ".");
        });
    if (!known) {
      std::fprintf(stderr,
                   "english_bundle: --set=%s: start with a stage of this "
                   "run (pos, chunk, or ner with --ner)\n",
                   assignment.c_str());
      return false;
    }
  }
  return true;
}

// The stage's preset with its --set assignments, its model and log in the
// bundle directory; the exit code on failure (after saying why), else 0.
int StageConfig(const StageSpec& spec, const std::string& out_dir,
                PipelineConfig* config) {
  if (spec.config_path.empty()) {
    std::fprintf(stderr, "english_bundle: --%s_config is required\n",
                 spec.name.c_str());
    return 2;
  }
  absl::StatusOr<PipelineConfig> read = ReadPipelineConfig(spec.config_path);
  if (!read.ok()) {
    std::fprintf(stderr, "english_bundle: %s\n",
                 read.status().ToString().c_str());
    return 1;
  }
  *config = *std::move(read);
  // AssignmentsNameStages checked the lists.
  const std::vector<std::string> assignments = *SetAssignments();
  for (const std::string& assignment : assignments) {
    if (!absl::StartsWith(assignment, spec.name + ".")) continue;
    absl::Status set = ApplyAssignment(
        absl::string_view(assignment).substr(spec.name.size() + 1), config);
    if (!set.ok()) {
      std::fprintf(stderr, "english_bundle: --set: %s\n",
                   std::string(set.message()).c_str());
      return 2;
    }
  }
  config->set_model_path(ResolvePath(out_dir, spec.name + ".model"));
  config->set_log_path(ResolvePath(out_dir, spec.name + ".log.jsonl"));
  return 0;
}

// Trains each stage (or reuses its up-to-date model) and adds it to
// `manifest`; `configs` get the stages' configs. The exit code on failure
// (after saying why), else 0.
int TrainStages(const std::vector<StageSpec>& specs, const std::string& out_dir,
                const PipelineOptions& options, BundleManifest* manifest,
                std::vector<PipelineConfig>* configs) {
  for (const StageSpec& spec : specs) {
    PipelineConfig config;
    if (int failed = StageConfig(spec, out_dir, &config)) return failed;
    const std::string model_path =
        ResolvePath(options.output_dir, config.model_path());
    if (!absl::GetFlag(FLAGS_retrain) && UpToDate(model_path, config)) {
      std::fprintf(stderr, "english_bundle: %s: up to date, reused\n",
                   model_path.c_str());
    } else {
      std::fprintf(stderr, "english_bundle: training %s (%s)\n",
                   spec.name.c_str(), config.name().c_str());
      absl::StatusOr<PipelineResult> result = RunPipeline(config, options);
      if (!result.ok()) {
        std::fprintf(stderr, "english_bundle: %s\n",
                     result.status().ToString().c_str());
        return InterruptRequests() > 0 ? InterruptExitCode() : 1;
      }
      if (result->interrupted) {
        std::fprintf(stderr,
                     "english_bundle: interrupted at pass %d of %s; model "
                     "written to %s (a later run trains it again)\n",
                     result->summary.passes(), spec.name.c_str(),
                     result->model_path.c_str());
        return InterruptExitCode();
      }
    }
    configs->push_back(config);
    BundleStage* stage = manifest->add_stages();
    stage->set_name(spec.name);
    stage->set_model(spec.name + ".model");
    for (const auto& [column, scheme] : spec.inputs) {
      BundleInput* input = stage->add_inputs();
      input->set_column(column);
      if (scheme != TAG_SCHEME_UNSPECIFIED) input->set_scheme(scheme);
    }
    stage->set_writes(spec.name);
  }
  return 0;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "english_bundle: %s\n", status.ToString().c_str());
  return 1;
}

// Scores on the test splits, "constrained / plain" Viterbi: POS, chunks on
// gold and on predicted POS, and NER when the bundle has it.
int EvaluateBundle(const Bundle& bundle, const std::string& bundle_dir,
                   const std::vector<PipelineConfig>& configs,
                   const PipelineOptions& options) {
  BundleOptions constrained, plain;
  plain.constrained = false;
  const std::string conll2000 =
      ResolvePath(options.corpora_root, configs[1].corpus().test());
  absl::StatusOr<std::vector<Sentence>> pos_test = ReadTest(conll2000, 1, NONE);
  absl::StatusOr<std::vector<Sentence>> chunk_test =
      ReadTest(conll2000, 2, IOB2);
  absl::StatusOr<std::vector<Sentence>> chunk_gold =
      ReadConllFile(conll2000, bundle.stage_model(1).header().input_format());
  if (!pos_test.ok()) return Fail(pos_test.status());
  if (!chunk_test.ok()) return Fail(chunk_test.status());
  if (!chunk_gold.ok()) return Fail(chunk_gold.status());
  std::printf("english bundle %s, test splits (constrained / plain Viterbi):\n",
              bundle_dir.c_str());
  std::printf("  %-52s %s\n", "CoNLL-2000 POS accuracy (words only)",
              Pair(ScoreBundleStage(bundle, 0, *pos_test, constrained),
                   ScoreBundleStage(bundle, 0, *pos_test, plain), true)
                  .c_str());
  std::printf("  %-52s %s\n", "CoNLL-2000 chunk F1, gold POS",
              Pair(ScoreModel(bundle.stage_model(1), *chunk_gold, true),
                   ScoreModel(bundle.stage_model(1), *chunk_gold, false), false)
                  .c_str());
  std::printf("  %-52s %s\n", "CoNLL-2000 chunk F1, predicted POS (bundle)",
              Pair(ScoreBundleStage(bundle, 1, *chunk_test, constrained),
                   ScoreBundleStage(bundle, 1, *chunk_test, plain), false)
                  .c_str());
  std::fflush(stdout);
  if (bundle.num_stages() <= 2) return 0;
  const std::string conll2003 =
      ResolvePath(options.corpora_root, configs[2].corpus().test());
  absl::StatusOr<std::vector<Sentence>> ner_test = ReadTest(conll2003, 3, IOB1);
  absl::StatusOr<std::vector<Sentence>> ner_gold =
      ReadConllFile(conll2003, bundle.stage_model(2).header().input_format());
  if (!ner_test.ok()) return Fail(ner_test.status());
  if (!ner_gold.ok()) return Fail(ner_gold.status());
  std::printf("  %-52s %s\n", "CoNLL-2003 NER F1, the corpus's POS and chunks",
              Pair(ScoreModel(bundle.stage_model(2), *ner_gold, true),
                   ScoreModel(bundle.stage_model(2), *ner_gold, false), false)
                  .c_str());
  std::printf("  %-52s %s\n",
              "CoNLL-2003 NER F1, predicted POS and chunks (bundle)",
              Pair(ScoreBundleStage(bundle, 2, *ner_test, constrained),
                   ScoreBundleStage(bundle, 2, *ner_test, plain), false)
                  .c_str());
  return 0;
}

int Run() {
  InstallInterruptHandlers();
  const std::string out_dir = absl::GetFlag(FLAGS_out);
  const std::string bundle_dir = ResolveUserPath(out_dir);
  std::error_code error;
  std::filesystem::create_directories(bundle_dir, error);
  if (error) {
    std::fprintf(stderr, "english_bundle: %s: %s\n", bundle_dir.c_str(),
                 error.message().c_str());
    return 1;
  }
  PipelineOptions options;
  options.corpora_root = CorporaRootFromFlag(absl::GetFlag(FLAGS_corpora));
  options.output_dir = CallerDirectory();
  if (absl::GetFlag(FLAGS_quiet)) options.progress = nullptr;
  const std::vector<StageSpec> specs = StageSpecs();
  if (!AssignmentsNameStages(specs)) return 2;
  BundleManifest manifest;
  manifest.set_name("english");
  std::vector<PipelineConfig> configs;
  if (int failed = TrainStages(specs, out_dir, options, &manifest, &configs)) {
    return failed;
  }
  absl::Status status = WriteBundleManifest(
      manifest, ResolvePath(bundle_dir, kBundleManifestName));
  if (!status.ok()) return Fail(status);
  absl::StatusOr<Bundle> bundle = Bundle::Load(bundle_dir);
  if (!bundle.ok()) return Fail(bundle.status());
  std::fprintf(stderr, "english_bundle: bundle written to %s\n",
               bundle_dir.c_str());
  if (!absl::GetFlag(FLAGS_evaluate)) return 0;
  return EvaluateBundle(*bundle, bundle_dir, configs, options);
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Builds and scores the English bundle (POS -> chunk [-> NER]): "
      "english_bundle [--out=DIR] [--ner] [--retrain]");
  chaintag::ParseToolCommandLine(argc, argv);
  return chaintag::Run();
}
