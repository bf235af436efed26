// OCR runs of the pipeline: Taskar's letter.data split by folds into a
// chain problem with the BCFW papers' feature map (128 pixels + a constant
// per letter, labels a..z), and the letter error of weights on a problem.
//
// Thread-safety: free functions; LetterErrorPercent runs `num_threads`
// threads over a const problem, so concurrent calls are safe.

#ifndef CHAINTAG_PIPELINE_OCR_H_
#define CHAINTAG_PIPELINE_OCR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "corpora/label_set.h"
#include "features/feature_config.pb.h"
#include "models/chain_layout.h"
#include "models/chain_problem.h"
#include "pipeline/pipeline_config.pb.h"

namespace chaintag {

constexpr int kOcrNumLabels = 26;
constexpr int kOcrNumFolds = 10;

// The OCR words of a CorpusConfig, split into training and test examples.
struct OcrSplit {
  std::string path;  // the resolved letter.data(.gz) path
  LabelSet labels;   // "a".."z", ids 0..25
  ChainLayout layout;
  std::vector<ChainExample> train;
  std::vector<ChainExample> test;
  std::vector<ChainExample> dev;  // corpus.dev_folds
  int64_t train_letters = 0;
  int64_t test_letters = 0;
  int64_t dev_letters = 0;
};

// The feature config an OCR model records: no templates, no hashed bias,
// one bucket per pixel plus the constant (the layout is {26, 129}). Its
// dimension is 26·129 + 26² + 2·26 = 4082, as in the papers.
FeatureConfig OcrFeatureConfig();

// Reads corpus.ocr (resolved against `corpora_root`) and splits it by
// corpus.train_folds / corpus.test_folds / corpus.dev_folds;
// corpus.max_train_sentences > 0 keeps the first N training words. Errors name
// the file (and line, from the reader) or the offending config field:
// train/test set together with ocr, no training folds, folds outside 0..9 or in
// both lists, a selected fold without words.
absl::StatusOr<OcrSplit> ReadOcrSplit(const CorpusConfig& corpus,
                                      const std::string& corpora_root);

struct LetterErrors {
  // Wrong letters over all letters, in percent: our headline figure.
  double letter_percent = 0;
  // The mean over words of each word's error rate (its normalised Hamming
  // loss), in percent: what the BCFW and gapBCFW reference codes report as
  // "test error". Short words weigh more than in letter_percent.
  double word_averaged_percent = 0;
};

// Both error rates of the Viterbi labels under `w` on every example of
// `problem` (0 when it has none). Deterministic for any thread count.
LetterErrors ComputeLetterErrors(const ChainProblem& problem, const double* w,
                                 int num_threads);

// ComputeLetterErrors(...).letter_percent.
double LetterErrorPercent(const ChainProblem& problem, const double* w,
                          int num_threads);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_OCR_H_
