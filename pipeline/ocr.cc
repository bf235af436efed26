#include "pipeline/ocr.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/parallel.h"
#include "base/paths.h"
#include "corpora/ocr_reader.h"
#include "features/pixel_features.h"

namespace chaintag {
namespace {

// What a run uses a fold of letter.data for.
enum class FoldRole { kUnused, kTrain, kTest, kDev };

// The config field that selects the folds of `role`, for messages.
const char* FoldsField(FoldRole role) {
  switch (role) {
    case FoldRole::kTrain:
      return "train_folds";
    case FoldRole::kTest:
      return "test_folds";
    case FoldRole::kDev:
      return "dev_folds";
    case FoldRole::kUnused:
      break;
  }
  return "";
}

// Checks the folds the config selects for `role`.
absl::Status CheckFolds(const google::protobuf::RepeatedField<int32_t>& folds,
                        FoldRole role) {
  for (int fold : folds) {
    if (fold < 0 || fold >= kOcrNumFolds) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: corpus.", FoldsField(role), " has fold ", fold,
                       "; letter.data has folds 0..", kOcrNumFolds - 1));
    }
  }
  return absl::OkStatus();
}

ChainExample ToExample(const OcrWord& word) {
  ChainExample example;
  const int T = static_cast<int>(word.letters.size());
  PixelFeatures(word.pixels.data(), T, &example.features);
  example.labels.assign(word.letters.begin(), word.letters.end());
  return example;
}

}  // namespace

FeatureConfig OcrFeatureConfig() {
  FeatureConfig config;
  config.set_num_buckets(kPixelBuckets);
  config.set_hash_seed(0);
  // The constant is bucket 128 of PixelFeatures, not the extractor's hashed
  // bias, so that the layout is exactly the papers'.
  config.set_bias(false);
  return config;
}

absl::StatusOr<OcrSplit> ReadOcrSplit(const CorpusConfig& corpus,
                                      const std::string& corpora_root) {
  if (corpus.ocr().empty()) {
    return absl::InvalidArgumentError("config: corpus.ocr is not set");
  }
  if (!corpus.train().empty() || !corpus.test().empty() ||
      !corpus.dev().empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.ocr cannot be combined with corpus.train, corpus.dev "
        "or corpus.test (OCR splits are folds: train_folds, test_folds)");
  }
  if (corpus.train_folds().empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.train_folds is empty; an OCR run trains on at least "
        "one fold");
  }
  absl::Status status = CheckFolds(corpus.train_folds(), FoldRole::kTrain);
  if (!status.ok()) return status;
  status = CheckFolds(corpus.test_folds(), FoldRole::kTest);
  if (!status.ok()) return status;
  status = CheckFolds(corpus.dev_folds(), FoldRole::kDev);
  if (!status.ok()) return status;
  std::vector<FoldRole> role(kOcrNumFolds, FoldRole::kUnused);
  for (int fold : corpus.train_folds()) role[fold] = FoldRole::kTrain;
  for (const auto& [folds, value] :
       {std::pair{&corpus.test_folds(), FoldRole::kTest},
        std::pair{&corpus.dev_folds(), FoldRole::kDev}}) {
    for (int fold : *folds) {
      if (role[fold] != FoldRole::kUnused) {
        return absl::InvalidArgumentError(absl::StrCat(
            "config: fold ", fold, " is in both corpus.",
            FoldsField(role[fold]), " and corpus.", FoldsField(value)));
      }
      role[fold] = value;
    }
  }

  OcrSplit split;
  split.path = ResolvePath(corpora_root, corpus.ocr());
  absl::StatusOr<std::vector<OcrWord>> words = ReadOcrFile(split.path);
  if (!words.ok()) return words.status();

  std::vector<int> words_per_fold(kOcrNumFolds, 0);
  for (const OcrWord& word : *words) {
    if (word.fold < 0 || word.fold >= kOcrNumFolds) {
      return absl::InvalidArgumentError(
          absl::StrCat(split.path, ":", word.first_line, ": fold ", word.fold,
                       " is outside 0..", kOcrNumFolds - 1));
    }
    ++words_per_fold[word.fold];
    if (role[word.fold] == FoldRole::kUnused) continue;
    ChainExample example = ToExample(word);
    if (role[word.fold] == FoldRole::kTrain) {
      split.train.push_back(std::move(example));
    } else if (role[word.fold] == FoldRole::kTest) {
      split.test.push_back(std::move(example));
    } else {
      split.dev.push_back(std::move(example));
    }
  }
  for (int fold = 0; fold < kOcrNumFolds; ++fold) {
    if (role[fold] != FoldRole::kUnused && words_per_fold[fold] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(split.path, ": fold ", fold,
                       " (selected in the config) has no words"));
    }
  }
  if (corpus.max_train_sentences() > 0 &&
      static_cast<int>(split.train.size()) > corpus.max_train_sentences()) {
    split.train.resize(corpus.max_train_sentences());
  }
  for (const ChainExample& e : split.train)
    split.train_letters += e.features.size();
  for (const ChainExample& e : split.test)
    split.test_letters += e.features.size();
  for (const ChainExample& e : split.dev)
    split.dev_letters += e.features.size();

  for (int y = 0; y < kOcrNumLabels; ++y) {
    split.labels.Add(std::string(1, static_cast<char>('a' + y)));
  }
  split.layout = ChainLayout{kOcrNumLabels, kPixelBuckets};
  for (const std::vector<ChainExample>* examples :
       {&split.train, &split.test, &split.dev}) {
    status = ChainProblem::Validate(split.layout, *examples);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(split.path, ": ", status.message()));
    }
  }
  return split;
}

LetterErrors ComputeLetterErrors(const ChainProblem& problem, const double* w,
                                 int num_threads) {
  const int n = problem.NumExamples();
  std::vector<int> wrong(n, 0);
  ParallelFor(n, num_threads, [&](int begin, int end) {
    Corner predicted;
    for (int i = begin; i < end; ++i) {
      problem.Decode(i, w, &predicted);
      const Corner& gold = problem.GoldCorner(i);
      for (size_t t = 0; t < gold.size(); ++t) {
        wrong[i] += predicted[t] != gold[t];
      }
    }
  });
  int64_t total_wrong = 0;
  int64_t total = 0;
  double word_rate_sum = 0;
  int words = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t length = static_cast<int64_t>(problem.GoldCorner(i).size());
    total_wrong += wrong[i];
    total += length;
    if (length > 0) {
      word_rate_sum += static_cast<double>(wrong[i]) / length;
      ++words;
    }
  }
  LetterErrors errors;
  if (total > 0) errors.letter_percent = 100.0 * total_wrong / total;
  if (words > 0) errors.word_averaged_percent = 100.0 * word_rate_sum / words;
  return errors;
}

double LetterErrorPercent(const ChainProblem& problem, const double* w,
                          int num_threads) {
  return ComputeLetterErrors(problem, w, num_threads).letter_percent;
}

}  // namespace chaintag
