// The OCR task (corpus.ocr set): Taskar's letter.data split by folds
// (pipeline/ocr.h) into a training problem with the BCFW papers' pixel
// features, held-out test (and dev) words kept here as problems of their
// own, and the letter error as the score. An OCR model file has the CoNLL
// models' format; its feature config and resolved_config say that its
// input is pixels.
//
// Thread-safety: as Task; the accessors are const and safe to call from
// several threads once Prepare has returned.

#ifndef CHAINTAG_PIPELINE_OCR_TASK_H_
#define CHAINTAG_PIPELINE_OCR_TASK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "pipeline/task.h"

namespace chaintag {

class OcrTask : public Task {
 public:
  void ResolveConfig(PipelineConfig* config) const override;
  absl::Status Prepare(const PipelineOptions& options,
                       PreparedCorpus* prepared) override;
  void ReportCorpus(const PreparedCorpus& prepared, const ProgressLine& say,
                    PipelineResult* result) const override;
  HeldOutScorer MakeHeldOutScorer(const PreparedCorpus& prepared,
                                  bool dev_only) const override;
  void DescribeModelInput(const PreparedCorpus& prepared,
                          ModelFile* header) const override;
  // Letter errors of the saved (rounded) model on the training and test
  // words; the test report is their summary.
  absl::StatusOr<std::string> ScoreSavedModel(
      const PreparedCorpus& prepared, const ChainModel& model,
      const PipelineOptions& options, const ProgressLine& say,
      PipelineResult* result) const override;
  // Letter errors of the model trained on the training folds alone, on the
  // dev and test folds.
  absl::StatusOr<std::string> ScoreTrainOnlyModel(
      const PreparedCorpus& prepared, const ChainModel& model,
      const ProgressLine& say, PipelineResult* result) const override;
  // The training and dev words as one problem (its own trigrams at second
  // order), and the test words in its space.
  absl::Status PrepareRetrainingProblem(PreparedCorpus* prepared) override;

  // After Prepare: the test words (corpus.test_folds) and the dev words
  // (corpus.dev_folds; no examples without), as problems on the training
  // problem's layout.
  const ChainProblem& test_problem() const { return *test_; }
  const ChainProblem& dev_problem() const { return *dev_; }
  int64_t train_letters() const { return train_letters_; }
  int64_t test_letters() const { return test_letters_; }
  int64_t dev_letters() const { return dev_letters_; }

 private:
  std::string path_;  // the letter.data file, resolved
  std::unique_ptr<ChainProblem> test_;
  std::unique_ptr<ChainProblem> dev_;
  int64_t train_letters_ = 0;
  int64_t test_letters_ = 0;
  int64_t dev_letters_ = 0;
};

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_OCR_TASK_H_
