// Writes the binary seeds of the fuzz corpora: model files trained by the
// real pipeline on three sentences (first order, second order with pair
// templates, float64 weights) and on 110 labels (sparse emission rows),
// and solver checkpoints of every family on the small problem of
// fuzz/solver_setups.h. The committed files under
// fuzz/corpus came from
//
//   ./bazelw run //fuzz:make_seeds -- $PWD/fuzz/corpus
//
// Run it again only when a file format changes. Text seeds are written by
// hand and live beside these.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzz/solver_setups.h"
#include "google/protobuf/text_format.h"
#include "pipeline/pipeline.h"
#include "solvers/checkpoint.h"
#include "solvers/monitor.h"
#include "solvers/registry.h"

namespace chaintag {
namespace {

namespace fs = std::filesystem;

constexpr char kTrain[] =
    "Confidence NN B-NP\nin IN B-PP\nthe DT B-NP\npound NN I-NP\n"
    "is VBZ B-VP\nwidely RB I-VP\nexpected VBN I-VP\n. . O\n\n"
    "Chancellor NNP O\nof IN B-PP\nthe DT B-NP\nExchequer NNP I-NP\n"
    "Nigel NNP B-NP\nLawson NNP I-NP\n. . O\n\n"
    "He PRP B-NP\nreckons VBZ B-VP\nthe DT B-NP\ncurrent JJ I-NP\n"
    "account NN I-NP\ndeficit NN I-NP\n. . O\n";

constexpr char kConfig[] = R"pb(
  corpus {
    format {
      attribute_columns: [ 0, 1 ]
      label_column: 2
      tag_scheme: IOB2
    }
  }
  features {
    num_buckets: 64
    bias: true
    templates { parts { offset: 0 attribute: 0 } }
    templates {
      parts { offset: -1 attribute: 1 }
      parts { attribute: 1 }
    }
    templates { parts { attribute: 0 transform: SUFFIX k: 2 } }
    templates { parts { attribute: 0 transform: MATCHES pattern: "^[A-Z]" } }
  }
  solver { name: "bcfw" lambda: 0.1 max_passes: 4 num_threads: 1 }
  eval_every: 0
)pb";

bool Fail(const std::string& what) {
  std::fprintf(stderr, "make_seeds: %s\n", what.c_str());
  return false;
}

// kSparseLabels labels, each on one word's tokens: a model of sparse
// emission rows (kSparseRowsFromLabels), labels read as they are.
constexpr int kSparseLabels = 110;

std::string SparseTrainingText() {
  std::string text;
  for (int k = 0; k < 2 * kSparseLabels; ++k) {
    const int label = k % kSparseLabels;
    absl::StrAppend(&text, "w", label, " P", k % 7, " L", label, "\n");
    if (k % 10 == 9) text += "\n";
  }
  return text;
}

// Trains one model on `train` (in `work`, read in `scheme`) with kConfig
// plus `extra` (text format) and copies it to `out`.
bool TrainModel(const std::string& extra, const fs::path& work,
                const fs::path& out, const std::string& train = "train.txt",
                TagScheme scheme = IOB2) {
  PipelineConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(
          std::string(kConfig) + extra, &config)) {
    return Fail("bad config text");
  }
  if (config.model().order() == 2) {
    // Observation-conditioned transitions: POS on the label pair.
    config.mutable_features()->add_pair_templates()->add_parts()->set_attribute(
        1);
  }
  config.mutable_corpus()->mutable_format()->set_tag_scheme(scheme);
  config.mutable_corpus()->set_train((work / train).string());
  config.mutable_corpus()->set_test((work / train).string());
  config.set_model_path((work / "tiny.model").string());
  config.set_log_path((work / "tiny.log.jsonl").string());
  PipelineOptions options;
  options.output_dir = work.string();
  options.progress = nullptr;
  absl::StatusOr<PipelineResult> result = RunPipeline(config, options);
  if (!result.ok()) return Fail(std::string(result.status().message()));
  std::error_code error;
  fs::copy_file(work / "tiny.model", out, fs::copy_options::overwrite_existing,
                error);
  return !error || Fail(error.message());
}

// Runs setup `k` with a checkpoint after pass 2 (epoch, outer iteration)
// and copies it to `out`.
bool WriteCheckpointSeed(int k, const fs::path& work, const fs::path& out) {
  const MulticlassProblem problem = fuzzing::SolverSetupProblem();
  const SolverConfig config = fuzzing::SolverSetupConfigs()[k];
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  Monitor::CheckpointPlan plan;
  plan.path = (work / "run.ckpt").string();
  plan.every_passes = 2;
  plan.fingerprint = static_cast<uint64_t>(k);
  monitor.SetCheckpointPlan(plan);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  if (!solver.ok()) return Fail(std::string(solver.status().message()));
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, &monitor, &w);
  if (!summary.ok()) return Fail(std::string(summary.status().message()));
  std::error_code error;
  fs::copy_file(plan.path, out, fs::copy_options::overwrite_existing, error);
  return !error || Fail(absl::StrCat(config.name(), ": ", error.message()));
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds <fuzz/corpus directory>\n");
    return 2;
  }
  const fs::path corpus = argv[1];
  const fs::path work = fs::temp_directory_path() /
                        absl::StrCat("chaintag_make_seeds.", getpid());
  fs::create_directories(work);
  fs::create_directories(corpus / "model_loader");
  fs::create_directories(corpus / "checkpoint_reader");
  std::ofstream(work / "train.txt") << kTrain;
  std::ofstream(work / "sparse.txt") << SparseTrainingText();

  bool ok =
      TrainModel("", work, corpus / "model_loader" / "order1.model") &&
      TrainModel(
          "model { weight_precision: FLOAT64 constrained_decoding: true }",
          work, corpus / "model_loader" / "order1_f64.model") &&
      TrainModel("model { order: 2 }", work,
                 corpus / "model_loader" / "order2_pairs.model") &&
      TrainModel("", work, corpus / "model_loader" / "order1_sparse.model",
                 "sparse.txt", NONE);
  const std::vector<SolverConfig> configs = fuzzing::SolverSetupConfigs();
  for (size_t k = 0; ok && k < configs.size(); ++k) {
    ok = WriteCheckpointSeed(
        static_cast<int>(k), work,
        corpus / "checkpoint_reader" /
            absl::StrCat(k, "_", configs[k].name(), ".ckpt"));
  }
  std::error_code ignored;
  fs::remove_all(work, ignored);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) { return chaintag::Main(argc, argv); }
