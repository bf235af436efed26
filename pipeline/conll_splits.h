// Reading a CoNLL corpus's train / dev / test splits: whole, or a
// distributed rank's shard. Training sentences must have labels (errors
// name the file and line); corpus.max_train_sentences keeps the first ones,
// and corpus.dev_fraction holds out the last of those as dev.
//
// Thread-safety: free functions; calls on different PreparedCorpus objects
// may run concurrently.

#ifndef CHAINTAG_PIPELINE_CONLL_SPLITS_H_
#define CHAINTAG_PIPELINE_CONLL_SPLITS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "corpora/corpus.pb.h"
#include "corpora/sentence.h"
#include "features/bigram_counts.h"
#include "pipeline/pipeline_config.pb.h"
#include "pipeline/task.h"

namespace chaintag {

// The train, dev and test sentences of the config's corpus into
// prepared->train, dev and test (a rank of a distributed run, when
// options.communicator is set: its shard of train, with prepared->labels,
// num_train_examples and train_shard as one process would have them), with
// prepared->format and num_columns as the training file resolves them.
// When cluster_counts is not null, the training words' bigrams are added to
// it. The held-out files must have the training file's layout and gold
// tags. With options.given, its sentences are train and dev instead of
// corpus.train and corpus.dev (which must be unset).
absl::Status ReadSplits(const PipelineOptions& options,
                        BigramCounts* cluster_counts, PreparedCorpus* prepared);

// How many of `count` training sentences corpus.dev_fraction holds out:
// ceil(dev_fraction * count), an error unless that leaves both splits
// non-empty, or when corpus.dev is set too.
absl::StatusOr<size_t> DevFractionCount(const CorpusConfig& corpus,
                                        size_t count);

// corpus.dev_fraction: the last sentences of `train` become `dev`. No
// shuffling, so the split is the same on every machine.
absl::Status HoldOutDevFraction(const CorpusConfig& corpus,
                                std::vector<Sentence>* train,
                                std::vector<Sentence>* dev);

// Whether the config leaves the tag scheme to the training labels: CoNLL
// columns or CRFsuite attribute files whose format names no tag_scheme (or
// TAG_SCHEME_UNSPECIFIED).
// ReadSplits then sets it (corpora/tag_scheme.h's TagSchemeInference over the
// training file's labels) in prepared->format and in the config's
// corpus.format, and model.train_scheme too when that is unset, and notes it in
// prepared->inferred_input, as it notes columns read from the file (a
// format without attribute_columns).
bool SchemeFromLabels(const PipelineConfig& config);

// Where `train`'s labels read as another scheme than `declared` (the
// config's corpus.format.tag_scheme; TagSchemeInference), what to tell the
// user: IOB2 labels declared IOB1 are written back as IOB1 (B-X turned
// I-X) and their token accuracy counts every such tag wrong, though the
// chunks and F1 are the same. Empty when they agree, when `declared` is
// NONE or unset, or when no label is a chunk tag other than O.
std::string SchemeMismatch(const std::vector<Sentence>& train,
                           TagScheme declared);

// The training-scheme tags of a training sentence, or the error naming it
// when it has none.
absl::StatusOr<std::vector<std::string>> TrainingTags(const Sentence& sentence,
                                                      TagScheme input_scheme,
                                                      TagScheme train_scheme);

}  // namespace chaintag

#endif  // CHAINTAG_PIPELINE_CONLL_SPLITS_H_
