// What a trained model has learnt, in words: its labels, the weights of its
// label transitions and start/end biases, and for every label the
// attributes that weigh most for it, by name when the names are known (kept
// in the model file, or recovered by running the model's feature extractor
// over a file in its input format) and by bucket otherwise. The peers' model
// dumps (`crfsuite dump`, `crf_learn -t`, `wapiti dump`) and
// sklearn-crfsuite's `state_features_` answer the same question.
//
// A bucket's name is the first attribute seen in it; the dump says how many
// others share it (features/feature_names.h).
//
// Thread-safety: stateless functions.

#ifndef CHAINTAG_TAGGING_MODEL_DUMP_H_
#define CHAINTAG_TAGGING_MODEL_DUMP_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "features/feature_names.h"
#include "models/chain_model.h"
#include "models/model_file.pb.h"

namespace chaintag {

// The names of a model's rows: its emission rows' and its pair rows'
// (the two hash into the same buckets, so they are kept apart).
struct ModelFeatureNames {
  FeatureNames emission;
  FeatureNames pair;
  bool empty() const { return emission.empty() && pair.empty(); }
};

// The names a model file keeps (ModelFile.name_buckets / names and the
// pair ones), empty when it keeps none.
ModelFeatureNames FeatureNamesFromModel(const ModelFile& file);

// The names of `model`'s rows, recovered by extracting the features of
// every sentence of the file at `path` (in the model's input format, labels
// optional) with their names. Errors name the file and line.
absl::StatusOr<ModelFeatureNames> RecoverFeatureNames(const ChainModel& model,
                                                      const std::string& path);

// One non-zero weight of an attribute row for a label.
struct StateWeight {
  std::string attribute;  // its name, or "bucket N" when not known
  int label = 0;
  double weight = 0;
};

// Every non-zero emission weight, in row then label order: what
// sklearn-crfsuite's state_features_ lists. A bucket shared by several
// attributes is named by the first seen in it.
std::vector<StateWeight> NonZeroStateWeights(const ChainModel& model,
                                             const ModelFeatureNames& names);

struct DumpOptions {
  // Attributes listed per label (and per label pair for pair rows), by
  // descending weight; 0 lists none.
  int top = 20;
  // Also every non-zero (attribute, label) weight, one a line as
  // `crfsuite dump` lists its state features.
  bool all = false;
  // Names the source of `names` in the header ("the model file", a path).
  std::string names_source;
};

// Writes the dump of `model` to `out`.
absl::Status WriteModelDump(const ChainModel& model,
                            const ModelFeatureNames& names,
                            const DumpOptions& options, std::ostream* out);

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_MODEL_DUMP_H_
