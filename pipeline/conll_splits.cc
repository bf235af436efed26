#include "pipeline/conll_splits.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/types/span.h"
#include "base/communicator.h"
#include "base/paths.h"
#include "corpora/conll_reader.h"
#include "corpora/label_set.h"
#include "corpora/tag_scheme.h"

namespace chaintag {
namespace {

absl::Status CheckTagged(const Sentence& sentence) {
  if (sentence.has_tags()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(sentence.source, ":", sentence.first_line,
                   ": training data needs a label column"));
}

absl::StatusOr<std::vector<Sentence>> ReadTrainingFile(
    const std::string& path, const ConllFormat& format, ConllFormat* resolved,
    int* num_columns) {
  absl::StatusOr<std::vector<Sentence>> sentences =
      ReadConllFile(path, format, resolved, num_columns);
  if (!sentences.ok()) return sentences.status();
  if (sentences->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no sentences to train on"));
  }
  for (const Sentence& sentence : *sentences) {
    absl::Status tagged = CheckTagged(sentence);
    if (!tagged.ok()) return tagged;
  }
  return sentences;
}

// The note of a tag scheme read from the labels, for the progress stream.
std::string SchemeNote(const TagSchemeInference& inference) {
  const TagScheme scheme = inference.scheme();
  if (scheme == NONE) {
    return inference.plain_label().empty()
               ? "labels all O: scored by token accuracy"
               : absl::StrCat("labels such as '", inference.plain_label(),
                              "' are not chunk tags: scored by token "
                              "accuracy");
  }
  std::string tags = scheme == IOBES ? "B-X, I-X, E-X, S-X, O" : "B-X, I-X, O";
  if (!inference.typed()) absl::StrReplaceAll({{"-X", ""}}, &tags);
  return absl::StrCat("labels ", tags, ": ",
                      absl::AsciiStrToUpper(TagSchemeName(scheme)), " chunks",
                      inference.typed() ? "" : " of one type",
                      ", scored by conlleval F1");
}

// A tag scheme read from the labels, into the format the run reads with and
// the config the model records (and the training scheme, when unset).
void SetSchemeFromLabels(const TagSchemeInference& inference,
                         PreparedCorpus* prepared) {
  const TagScheme scheme = inference.scheme();
  prepared->format.set_tag_scheme(scheme);
  prepared->config.mutable_corpus()->mutable_format()->set_tag_scheme(scheme);
  ModelConfig* model = prepared->config.mutable_model();
  if (model->train_scheme() == TAG_SCHEME_UNSPECIFIED) {
    model->set_train_scheme(scheme);
  }
  prepared->inferred_input = SchemeNote(inference);
}

// The note of columns read from the file (the config lists none).
std::string ColumnsNote(const ConllFormat& resolved, int num_columns) {
  const int attributes = resolved.attribute_columns_size();
  bool in_order = resolved.label_column() == num_columns - 1;
  for (int c = 0; c < attributes; ++c) {
    in_order = in_order && resolved.attribute_columns(c) == c;
  }
  if (in_order) {
    return absl::StrCat(
        num_columns, " columns, the label the last, %x[row,c] reading column c",
        attributes == 1 ? " (0)" : absl::StrCat(" (0..", attributes - 1, ")"));
  }
  return absl::StrCat(num_columns, " columns, the label in column ",
                      resolved.label_column(), ", attributes 0..",
                      attributes - 1, " in columns ",
                      absl::StrJoin(resolved.attribute_columns(), ", "));
}

// The attribute whose words features.cluster_source clusters.
int ClusterAttribute(const PreparedCorpus& prepared) {
  return prepared.config.features().cluster_source().attribute();
}

}  // namespace

std::string SchemeMismatch(const std::vector<Sentence>& train,
                           TagScheme declared) {
  if (declared != IOB1 && declared != IOB2 && declared != IOBES) return "";
  TagSchemeInference inference;
  for (const Sentence& sentence : train) inference.Add(sentence.tags);
  const TagScheme read = inference.scheme();
  if (read == declared) return "";
  const std::string named = absl::StrCat(
      "warning: corpus.format.tag_scheme is ", TagSchemeName(declared));
  if (read == NONE) {
    if (inference.plain_label().empty()) return "";  // all O
    return absl::StrCat(named, ", but labels such as '",
                        inference.plain_label(),
                        "' are no chunk tags (B-X, I-X, E-X, S-X, O): set "
                        "tag_scheme NONE for plain labels");
  }
  return absl::StrCat(
      named, ", but the training labels read as ", TagSchemeName(read), " (",
      inference.begins_with_i(), " chunks begin with I, ",
      inference.begins_with_b(), " with B",
      read == IOBES ? ", and some tags are E or S" : "",
      "): predictions are written in ", TagSchemeName(declared),
      ", so their token accuracy against such labels is off (the chunks "
      "and F1 are not); leave tag_scheme out to read it from the labels");
}

bool SchemeFromLabels(const PipelineConfig& config) {
  const ConllFormat& format = config.corpus().format();
  // Set to TAG_SCHEME_UNSPECIFIED (`--set=...tag_scheme=TAG_SCHEME_
  // UNSPECIFIED`) is as good as unset.
  return (format.layout() == ConllFormat::COLUMNS ||
          format.layout() == ConllFormat::CRFSUITE) &&
         (!format.has_tag_scheme() ||
          format.tag_scheme() == TAG_SCHEME_UNSPECIFIED);
}

absl::StatusOr<size_t> DevFractionCount(const CorpusConfig& corpus,
                                        size_t count) {
  if (!(corpus.dev_fraction() > 0 && corpus.dev_fraction() < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: corpus.dev_fraction must be in (0, 1), got ",
                     corpus.dev_fraction()));
  }
  if (!corpus.dev().empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.dev and corpus.dev_fraction are exclusive");
  }
  const size_t held_out =
      static_cast<size_t>(std::ceil(corpus.dev_fraction() * count));
  if (held_out == 0 || held_out >= count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config: corpus.dev_fraction ", corpus.dev_fraction(), " of ", count,
        " training sentences leaves no dev or no training sentences"));
  }
  return held_out;
}

absl::Status HoldOutDevFraction(const CorpusConfig& corpus,
                                std::vector<Sentence>* train,
                                std::vector<Sentence>* dev) {
  absl::StatusOr<size_t> held_out = DevFractionCount(corpus, train->size());
  if (!held_out.ok()) return held_out.status();
  const size_t keep = train->size() - *held_out;
  dev->assign(std::make_move_iterator(train->begin() + keep),
              std::make_move_iterator(train->end()));
  train->resize(keep);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> TrainingTags(const Sentence& sentence,
                                                      TagScheme input_scheme,
                                                      TagScheme train_scheme) {
  absl::Status tagged = CheckTagged(sentence);
  if (!tagged.ok()) return tagged;
  return input_scheme == train_scheme
             ? sentence.tags
             : ConvertTags(sentence.tags, input_scheme, train_scheme);
}

namespace {

// corpus.max_train_sentences keeps the first training sentences, then
// corpus.dev_fraction holds out the last of those as dev.
absl::Status CutTraining(const CorpusConfig& corpus, PreparedCorpus* prepared) {
  if (corpus.max_train_sentences() > 0 &&
      static_cast<int>(prepared->train.size()) > corpus.max_train_sentences()) {
    prepared->train.resize(corpus.max_train_sentences());
  }
  if (corpus.dev_fraction() == 0) return absl::OkStatus();
  return HoldOutDevFraction(corpus, &prepared->train, &prepared->dev);
}

// The training sentences of one process: all of them (corpus.max_train_
// sentences and corpus.dev_fraction applied), and their words' bigrams
// into `cluster_counts` when it is not null.
absl::Status ReadAllTraining(const std::string& path,
                             BigramCounts* cluster_counts,
                             PreparedCorpus* prepared) {
  const CorpusConfig& corpus = prepared->config.corpus();
  absl::StatusOr<std::vector<Sentence>> train = ReadTrainingFile(
      path, corpus.format(), &prepared->format, &prepared->num_columns);
  if (!train.ok()) return train.status();
  prepared->train = std::move(*train);
  if (SchemeFromLabels(prepared->config)) {
    TagSchemeInference inference;
    for (const Sentence& sentence : prepared->train)
      inference.Add(sentence.tags);
    SetSchemeFromLabels(inference, prepared);
  } else {
    prepared->scheme_warning =
        SchemeMismatch(prepared->train, prepared->format.tag_scheme());
  }
  absl::Status cut = CutTraining(corpus, prepared);
  if (!cut.ok()) return cut;
  if (cluster_counts == nullptr) return absl::OkStatus();
  return AddConllWords(prepared->train, ClusterAttribute(*prepared),
                       cluster_counts);
}

// The caller's sentences as the training (and dev) split, checked and cut
// as a file's would be.
absl::Status TakeGivenSentences(GivenSentences* given,
                                PreparedCorpus* prepared) {
  const CorpusConfig& corpus = prepared->config.corpus();
  if (!corpus.train().empty() || !corpus.dev().empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.train and corpus.dev name files; leave them unset "
        "when the sentences are given in memory");
  }
  // An empty sequence has no loss and no features (a file has none).
  for (std::vector<Sentence>* split : {&given->train, &given->dev}) {
    split->erase(
        std::remove_if(split->begin(), split->end(),
                       [](const Sentence& s) { return s.size() == 0; }),
        split->end());
  }
  if (given->train.empty()) {
    return absl::InvalidArgumentError("no sentences to train on");
  }
  for (const std::vector<Sentence>* split : {&given->train, &given->dev}) {
    for (const Sentence& sentence : *split) {
      absl::Status tagged = CheckTagged(sentence);
      if (!tagged.ok()) return tagged;
    }
  }
  prepared->format = corpus.format();
  prepared->num_columns = 0;
  if (SchemeFromLabels(prepared->config)) {
    TagSchemeInference inference;
    for (const Sentence& sentence : given->train) inference.Add(sentence.tags);
    SetSchemeFromLabels(inference, prepared);
  } else {
    prepared->scheme_warning =
        SchemeMismatch(given->train, prepared->format.tag_scheme());
  }
  prepared->train = std::move(given->train);
  prepared->dev = std::move(given->dev);
  if (corpus.dev_fraction() != 0 && !prepared->dev.empty()) {
    return absl::InvalidArgumentError(
        "config: corpus.dev_fraction and dev sentences are exclusive");
  }
  return CutTraining(corpus, prepared);
}

// A first pass over a training file that keeps nothing but the sentence
// count and, in order of first appearance, the training-scheme labels with
// the sentence each first appears in; the layout goes to `prepared`.
struct TrainingFileScan {
  int64_t count = 0;
  LabelSet labels;
  std::vector<int64_t> first_seen_in;
};

absl::StatusOr<TrainingFileScan> ScanTrainingFile(const std::string& path,
                                                  PreparedCorpus* prepared) {
  const ConllFormat& format = prepared->config.corpus().format();
  const TagScheme train_scheme = prepared->config.model().train_scheme();
  TrainingFileScan scan;
  absl::Status scanned = ForEachConllSentence(
      path, format,
      [&](int64_t index, Sentence* sentence) -> absl::StatusOr<bool> {
        absl::StatusOr<std::vector<std::string>> tags =
            TrainingTags(*sentence, format.tag_scheme(), train_scheme);
        if (!tags.ok()) return tags.status();
        for (const std::string& tag : *tags) {
          if (scan.labels.Find(tag) >= 0) continue;
          scan.labels.Add(tag);
          scan.first_seen_in.push_back(index);
        }
        scan.count = index + 1;
        return true;
      },
      &prepared->format, &prepared->num_columns);
  if (!scanned.ok()) return scanned;
  if (scan.count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no sentences to train on"));
  }
  return scan;
}

// The training sentences of a rank of a distributed run, which reads and
// keeps only its shard: after the scan, which lets every rank number the
// labels as one process does, a second pass keeps the shard and the dev
// sentences corpus.dev_fraction holds out, and counts the words for
// clusters (`cluster_counts`, when not null).
absl::Status ReadTrainingShard(const std::string& path,
                               Communicator* communicator,
                               BigramCounts* cluster_counts,
                               PreparedCorpus* prepared) {
  const CorpusConfig& corpus = prepared->config.corpus();
  if (SchemeFromLabels(prepared->config)) {
    // The scan numbers the labels in the training scheme, so the labels
    // decide it in a pass before.
    TagSchemeInference inference;
    absl::Status read = ForEachConllSentence(
        path, corpus.format(),
        [&](int64_t, Sentence* sentence) -> absl::StatusOr<bool> {
          inference.Add(sentence->tags);
          return true;
        });
    if (!read.ok()) return read;
    SetSchemeFromLabels(inference, prepared);
  }
  absl::StatusOr<TrainingFileScan> scan = ScanTrainingFile(path, prepared);
  if (!scan.ok()) return scan.status();
  const int64_t count = scan->count;
  const int64_t read =
      corpus.max_train_sentences() > 0
          ? std::min<int64_t>(count, corpus.max_train_sentences())
          : count;
  int64_t kept = read;
  if (corpus.dev_fraction() != 0) {
    absl::StatusOr<size_t> held_out = DevFractionCount(corpus, read);
    if (!held_out.ok()) return held_out.status();
    kept = read - static_cast<int64_t>(*held_out);
  }
  for (int label = 0; label < scan->labels.size(); ++label) {
    if (scan->first_seen_in[label] < kept) {
      prepared->labels.Add(scan->labels.Name(label));
    }
  }
  prepared->num_train_examples = static_cast<int>(kept);
  const BlockShard shard = ShardOf(prepared->num_train_examples,
                                   communicator->rank(), communicator->size());
  prepared->train_shard = shard;
  const int64_t last = std::max<int64_t>(
      {shard.end, kept < read ? read : 0, cluster_counts ? kept : 0});
  if (last == 0) return absl::OkStatus();
  return ForEachConllSentence(
      path, corpus.format(),
      [&](int64_t index, Sentence* sentence) -> absl::StatusOr<bool> {
        if (cluster_counts != nullptr && index < kept) {
          absl::Status added =
              AddConllWords(absl::MakeConstSpan(sentence, 1),
                            ClusterAttribute(*prepared), cluster_counts);
          if (!added.ok()) return added;
        }
        if (index >= shard.begin && index < shard.end) {
          prepared->train.push_back(std::move(*sentence));
        } else if (index >= kept && index < read) {
          prepared->dev.push_back(std::move(*sentence));
        }
        return index + 1 < last;
      });
}

}  // namespace

absl::Status ReadSplits(const PipelineOptions& options,
                        BigramCounts* cluster_counts,
                        PreparedCorpus* prepared) {
  const CorpusConfig& corpus = prepared->config.corpus();
  if (options.given != nullptr) {
    if (options.communicator != nullptr || cluster_counts != nullptr) {
      return absl::InvalidArgumentError(
          "sentences given in memory cannot be trained with distributed "
          "training or word clusters");
    }
    absl::Status taken = TakeGivenSentences(options.given, prepared);
    if (!taken.ok()) return taken;
    if (corpus.test().empty()) return absl::OkStatus();
    absl::StatusOr<std::vector<Sentence>> test = ReadConllFile(
        ResolvePath(options.corpora_root, corpus.test()), prepared->format);
    if (!test.ok()) return test.status();
    prepared->test = std::move(*test);
    return absl::OkStatus();
  }
  const std::string train_path =
      ResolvePath(options.corpora_root, corpus.train());
  absl::Status read =
      options.communicator != nullptr
          ? ReadTrainingShard(train_path, options.communicator, cluster_counts,
                              prepared)
          : ReadAllTraining(train_path, cluster_counts, prepared);
  if (!read.ok()) return read;
  if (corpus.format().layout() == ConllFormat::COLUMNS &&
      corpus.format().attribute_columns().empty()) {
    const std::string columns =
        ColumnsNote(prepared->format, prepared->num_columns);
    prepared->inferred_input =
        prepared->inferred_input.empty()
            ? columns
            : absl::StrCat(columns, "; ", prepared->inferred_input);
  }
  ConllFormat held_out_format = prepared->format;
  held_out_format.set_allow_missing_label(false);
  for (const auto& [path, split] :
       {std::pair<const std::string*, std::vector<Sentence>*>{&corpus.dev(),
                                                              &prepared->dev},
        {&corpus.test(), &prepared->test}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::vector<Sentence>> sentences = ReadConllFile(
        ResolvePath(options.corpora_root, *path), held_out_format);
    if (!sentences.ok()) return sentences.status();
    *split = std::move(*sentences);
  }
  return absl::OkStatus();
}

}  // namespace chaintag
