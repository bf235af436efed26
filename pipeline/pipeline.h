// The train-evaluate-save run: the corpus a PipelineConfig names is
// prepared by its task (task.h: CoNLL columns in conll_task.h, OCR letters
// in ocr_task.h), then one train stage serves every task: a chain model
// trained with the configured solver (progress per pass, scored on the dev
// split when there is one, else on the test split) at one λ or at the λ
// chosen on dev along the regularization path (`lambda: "path"`), saved,
// and scored by the task, which writes its outputs; with
// corpus.retrain_on_train_and_dev the model is then trained again on
// train + dev, saved and scored as the final one.
//
// Example: what `train --config=... --max_passes=40` runs:
//
//   absl::StatusOr<PipelineConfig> config =
//       ReadPipelineConfig("pipeline/configs/conll2000_chunking.textproto");
//   if (!config.ok()) return config.status();
//   config->mutable_solver()->set_max_passes(40);
//   PipelineOptions options;
//   options.corpora_root = CorporaRootFromFlag("");  // the default root
//   options.output_dir = "/tmp/run";  // the model and the log go here
//   options.progress = nullptr;       // no progress lines
//   absl::StatusOr<PipelineResult> result = RunPipeline(*config, options);
//   if (!result.ok()) return result.status();
//   // result->test_f1, result->summary.gap(), result->model_path
//
// Thread-safety: RunPipeline may be called from one thread at a time per
// output path; it uses solver.num_threads worker threads.

#ifndef CHAINTAG_PIPELINE_PIPELINE_H_
#define CHAINTAG_PIPELINE_PIPELINE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "pipeline/chain_training.h"  // RecordedConfig, for callers
#include "pipeline/conll_task.h"      // EvaluateModel, for callers of the run
#include "pipeline/lambda_path.h"
#include "pipeline/pipeline_config.pb.h"
#include "pipeline/task.h"

namespace chaintag {

// The task of a config: OCR when corpus.ocr is set, else CoNLL.
std::unique_ptr<Task> CreateTask(const PipelineConfig& config);

// Resolves `config` and has its task read the corpus into a problem.
absl::StatusOr<PreparedCorpus> PrepareCorpus(const PipelineConfig& config,
                                             const PipelineOptions& options);

// The task's PrepareRetrainingProblem: builds problem_with_dev and
// rows_with_dev from `problem` and dev_examples, releasing `problem`, `rows`
// and the dev sentences first (the train-only run must be over).
// RunPreparedPipeline calls it when it retrains.
absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared);

// The task's scorer of weights on the dev split (F1, or token accuracy for
// untyped tags; letter error for OCR), or, when there is none and
// `dev_only` is false, on the test split; an empty scorer when neither
// exists. `prepared` must outlive it.
HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared, bool dev_only);

absl::StatusOr<PipelineConfig> ReadPipelineConfig(const std::string& path);

// A config path as a user typed it: looked up from the caller's directory
// first, then as given (the //pipeline presets pass a runfiles path).
absl::StatusOr<PipelineConfig> ReadUserPipelineConfig(const std::string& path);

// The corpora root from a --corpora flag's value: empty = the default
// ($CHAINTAG_CORPORA, else ../shared/corpora beside the workspace).
std::string CorporaRootFromFlag(const std::string& flag);

// Fills defaults that depend on other fields (output names, and the task's:
// train scheme, OCR's feature map) so that the model file records exactly
// what ran.
PipelineConfig ResolvePipelineConfig(const PipelineConfig& config);

absl::StatusOr<PipelineResult> RunPipeline(const PipelineConfig& config,
                                           const PipelineOptions& options);

// RunPipeline's training and scoring on a corpus already prepared, so that a
// caller can run more on the same problem without reading it twice (regpath's
// grid search). `start` is when the run began (for the total time); the
// prepared config's solver section is updated to what ran. The training
// sentences are released (they are featurised), and with
// corpus.retrain_on_train_and_dev `problem` and `rows` become
// problem_with_dev and rows_with_dev once the train-only model is scored,
// and the dev sentences are released.
absl::StatusOr<PipelineResult> RunPreparedPipeline(
    PreparedCorpus* prepared, const PipelineOptions& options,
    absl::Time start = absl::Now());

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_PIPELINE_H_
