#include "models/chain_model.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "corpora/tag_scheme.h"
#include "features/document_features.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "xxhash.h"

namespace chaintag {
namespace {

absl::Status CheckWeightFields(const ModelFile& file);

}  // namespace

// Over the weight fields, in a fixed order, then over the precision and the
// decoding mode when they differ from the defaults: those fields are
// serialised after the rows, so a file cut just before them would otherwise
// load and decode differently.
uint64_t WeightsChecksum(const ModelFile& file) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  auto add = [state](const void* data, size_t bytes) {
    if (bytes > 0) XXH3_64bits_update(state, data, bytes);
  };
  add(file.emission_buckets().data(),
      file.emission_buckets_size() * sizeof(uint32_t));
  add(file.emission_weights_f32().data(),
      file.emission_weights_f32_size() * sizeof(float));
  add(file.emission_weights_f64().data(),
      file.emission_weights_f64_size() * sizeof(double));
  add(file.transitions().data(), file.transitions_size() * sizeof(double));
  add(file.start().data(), file.start_size() * sizeof(double));
  add(file.end().data(), file.end_size() * sizeof(double));
  if (file.weight_precision() == FLOAT64) {
    constexpr char kFloat64[] = "float64";
    add(kFloat64, sizeof(kFloat64));
  }
  if (file.constrained_decoding()) {
    constexpr char kConstrained[] = "constrained_decoding";
    add(kConstrained, sizeof(kConstrained));
  }
  if (file.order() == 2) {
    // After the first-order part, so that a first-order file's checksum is
    // what it always was.
    constexpr char kSecondOrder[] = "order 2";
    add(kSecondOrder, sizeof(kSecondOrder));
    add(file.trigram_labels().data(),
        file.trigram_labels_size() * sizeof(int32_t));
    add(file.trigram_weights().data(),
        file.trigram_weights_size() * sizeof(double));
    add(file.pair_labels().data(), file.pair_labels_size() * sizeof(int32_t));
    add(file.pair_buckets().data(),
        file.pair_buckets_size() * sizeof(uint32_t));
    add(file.pair_weights_f32().data(),
        file.pair_weights_f32_size() * sizeof(float));
    add(file.pair_weights_f64().data(),
        file.pair_weights_f64_size() * sizeof(double));
  }
  if (file.has_first_stage()) {
    // The first stage's own checksum covers its weights; this ties it, and
    // the word attribute, to this stage (a file cut before them fails).
    constexpr char kStacked[] = "first stage";
    add(kStacked, sizeof(kStacked));
    const uint64_t first = file.first_stage().weights_checksum();
    add(&first, sizeof(first));
    const int32_t word = file.document_word_attribute();
    add(&word, sizeof(word));
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

namespace {

template <typename Field>
bool AllFinite(const Field& values) {
  bool finite = true;
  // No early exit: a branch-free loop vectorises, and a valid file (the
  // common case) reads every value anyway.
  for (const auto v : values) finite &= std::isfinite(v);
  return finite;
}

// The error for a sentence whose labelings all score −∞.
absl::Status NoFiniteLabelingError(int length,
                                   const TransitionConstraints* constraints) {
  return absl::FailedPreconditionError(absl::StrCat(
      "no labeling of this ", length, "-token sentence has a finite score",
      constraints != nullptr
          ? absl::StrCat(" under the ", TagSchemeName(constraints->scheme()),
                         " constraints over the model's labels")
          : ""));
}

void ClearWeights(ModelFile* file) {
  file->clear_emission_buckets();
  file->clear_emission_weights_f32();
  file->clear_emission_weights_f64();
  file->clear_transitions();
  file->clear_start();
  file->clear_end();
  file->clear_weights_checksum();
  file->clear_order();
  file->clear_trigram_labels();
  file->clear_trigram_weights();
  file->clear_pair_labels();
  file->clear_pair_buckets();
  file->clear_pair_weights_f32();
  file->clear_pair_weights_f64();
}

template <typename Field>
using Repeated = google::protobuf::RepeatedField<Field>;

// Appends the rows of `weights` (rows.size() × width) that have a non-zero
// weight: their buckets, and their weights in float64 or float32.
absl::Status StoreRows(const double* weights, const BucketRows& rows, int width,
                       bool f64, Repeated<uint32_t>* buckets,
                       Repeated<float>* weights_f32,
                       Repeated<double>* weights_f64) {
  auto nonzero = [&](int64_t r) {
    const double* row = weights + r * width;
    for (int y = 0; y < width; ++y) {
      if (row[y] != 0) return true;
    }
    return false;
  };
  // Sized once: grown one value at a time, the fields would be copied and
  // faulted in again at every doubling.
  int64_t kept = 0;
  for (int64_t r = 0; r < rows.size(); ++r) kept += nonzero(r);
  buckets->Reserve(buckets->size() + kept);
  if (f64) {
    weights_f64->Reserve(weights_f64->size() + kept * width);
  } else {
    weights_f32->Reserve(weights_f32->size() + kept * width);
  }
  for (int64_t r = 0; r < rows.size(); ++r) {
    const double* row = weights + r * width;
    if (!nonzero(r)) continue;
    buckets->Add(rows.buckets()[r]);
    for (int y = 0; y < width; ++y) {
      if (f64) {
        weights_f64->Add(row[y]);
      } else if (std::abs(row[y]) > std::numeric_limits<float>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("weight ", row[y],
                         " is beyond float32's range: save the model "
                         "with weight_precision FLOAT64"));
      } else {
        weights_f32->Add(static_cast<float>(row[y]));
      }
    }
  }
  return absl::OkStatus();
}

// The second-order part of a model file: order, trigrams, pairs and the
// pair rows of `weights` (laid out as `layout`).
absl::Status StoreSecondOrder(const WeightSpace& space,
                              const ChainLayout& layout,
                              absl::Span<const double> weights, bool f64,
                              ModelFile* header) {
  const SecondOrderStructure& structure = *space.structure;
  header->set_order(2);
  for (const LabelTrigram& trigram : structure.trigrams()) {
    for (int32_t label : trigram) header->add_trigram_labels(label);
  }
  for (int k = 0; k < layout.num_trigrams; ++k) {
    header->add_trigram_weights(weights[layout.trigram_offset() + k]);
  }
  if (space.pair_rows == nullptr) return absl::OkStatus();
  for (const LabelPair& pair : structure.pairs()) {
    for (int32_t label : pair) header->add_pair_labels(label);
  }
  return StoreRows(
      weights.data() + layout.pair_emission_offset(), *space.pair_rows,
      layout.num_pairs, f64, header->mutable_pair_buckets(),
      header->mutable_pair_weights_f32(), header->mutable_pair_weights_f64());
}

// The structure a second-order file describes: its trigrams and pairs,
// constrained by its training scheme.
absl::StatusOr<std::shared_ptr<const SecondOrderStructure>> ReadStructure(
    const ModelFile& file, const std::vector<std::string>& labels) {
  if (file.order() != 2) {
    return std::shared_ptr<const SecondOrderStructure>();
  }
  std::vector<LabelTrigram> trigrams(file.trigram_labels_size() / 3);
  for (size_t k = 0; k < trigrams.size(); ++k) {
    for (int j = 0; j < 3; ++j) trigrams[k][j] = file.trigram_labels(3 * k + j);
  }
  std::vector<LabelPair> pairs(file.pair_labels_size() / 2);
  for (size_t k = 0; k < pairs.size(); ++k) {
    for (int j = 0; j < 2; ++j) pairs[k][j] = file.pair_labels(2 * k + j);
  }
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      static_cast<int>(labels.size()),
      TransitionConstraints(labels, file.train_scheme()), std::move(trigrams),
      std::move(pairs));
  if (!structure.ok()) return structure.status();
  return std::make_shared<const SecondOrderStructure>(*std::move(structure));
}

// Rows of `rows` for the sentence's features and their scores, width per
// row, into `unary`.
absl::Status ScoreRows(const FeatureExtractor& extractor,
                       const BucketRows& rows, int width, const float* f32,
                       const double* f64, const Sentence& sentence,
                       FeatureSequence* features, std::vector<double>* unary) {
  absl::Status status = extractor.ExtractRows(sentence, rows, features);
  if (!status.ok()) return status;
  unary->resize(static_cast<size_t>(features->size()) * width);
  if (f32 != nullptr) {
    ComputeUnaryScores(width, f32, *features, unary->data());
  } else {
    ComputeUnaryScores(width, f64, *features, unary->data());
  }
  return absl::OkStatus();
}

// Extracts the sentence's features into scratch->features (as rows of
// `weights`) and its unary scores into scratch->unary; at second order with
// pair templates also the pair scores into scratch->pair_unary.
absl::Status ComputeSentenceUnary(const FeatureExtractor& extractor,
                                  const WeightsView& weights,
                                  const Sentence& sentence,
                                  TagScratch* scratch) {
  absl::Status status = ScoreRows(
      extractor, *weights.rows, weights.num_labels, weights.emission_f32,
      weights.emission_f64, sentence, &scratch->features, &scratch->unary);
  if (!status.ok() || weights.pair_rows == nullptr) return status;
  if (extractor.pair_extractor() == nullptr) {
    return absl::FailedPreconditionError(
        "the weights have pair rows but the features no pair templates");
  }
  return ScoreRows(*extractor.pair_extractor(), *weights.pair_rows,
                   weights.structure->num_pairs(), weights.pair_f32,
                   weights.pair_f64, sentence, &scratch->pair_features,
                   &scratch->pair_unary);
}

// The second-order view of the scores ComputeSentenceUnary left in
// `scratch`.
SecondOrderScores SecondOrderView(const WeightsView& weights, int length,
                                  const TagScratch& scratch) {
  const int64_t L = weights.num_labels;
  SecondOrderScores scores;
  scores.length = length;
  scores.unary = scratch.unary.data();
  scores.transition = weights.tail;
  scores.start = weights.tail + L * L;
  scores.end = weights.tail + L * L + L;
  scores.trigram = weights.tail + L * L + 2 * L;
  scores.pair_unary =
      weights.pair_rows != nullptr ? scratch.pair_unary.data() : nullptr;
  return scores;
}

}  // namespace

ChainLayout WeightSpace::Layout(int num_labels) const {
  ChainLayout layout{num_labels, rows->size()};
  if (structure == nullptr) return layout;
  layout.order = 2;
  layout.num_trigrams = structure->num_trigrams();
  if (pair_rows != nullptr) {
    layout.num_pair_rows = pair_rows->size();
    layout.num_pairs = structure->num_pairs();
  }
  return layout;
}

WeightsView SolverWeightsView(const ChainLayout& layout, const BucketRows& rows,
                              const double* w) {
  return SolverWeightsView(layout, WeightSpace{&rows}, w);
}

WeightsView SolverWeightsView(const ChainLayout& layout,
                              const WeightSpace& space, const double* w) {
  WeightsView view;
  view.num_labels = layout.num_labels;
  view.rows = space.rows;
  view.emission_f64 = w;
  view.tail = w + layout.transition_offset();
  view.structure = space.structure;
  if (space.pair_rows != nullptr) {
    view.pair_rows = space.pair_rows;
    view.pair_f64 = w + layout.pair_emission_offset();
  }
  return view;
}

ChainModel::ChainModel(ModelFile file, LabelSet labels,
                       FeatureExtractor extractor, BucketRows rows,
                       BucketRows pair_rows,
                       std::shared_ptr<const SecondOrderStructure> structure)
    : file_(std::move(file)),
      labels_(std::move(labels)),
      extractor_(std::move(extractor)),
      rows_(std::move(rows)),
      pair_rows_(std::move(pair_rows)),
      structure_(std::move(structure)),
      constraints_(labels_.names(), file_.train_scheme()) {
  tail_.assign(file_.transitions().begin(), file_.transitions().end());
  tail_.insert(tail_.end(), file_.start().begin(), file_.start().end());
  tail_.insert(tail_.end(), file_.end().begin(), file_.end().end());
  tail_.insert(tail_.end(), file_.trigram_weights().begin(),
               file_.trigram_weights().end());
}

absl::StatusOr<ChainModel> ChainModel::FromFile(ModelFile file) {
  // The first stage is a model of its own: kept as one, not twice.
  std::shared_ptr<const ChainModel> first_stage;
  if (file.has_first_stage()) {
    absl::StatusOr<ChainModel> stage =
        FirstStageFromFile(std::move(*file.mutable_first_stage()));
    if (!stage.ok()) return stage.status();
    file.clear_first_stage();
    first_stage = std::make_shared<const ChainModel>(*std::move(stage));
  }
  if (file.labels_size() == 0) {
    return absl::InvalidArgumentError("a model needs at least one label");
  }
  LabelSet labels(
      std::vector<std::string>(file.labels().begin(), file.labels().end()));
  if (labels.size() != file.labels_size()) {
    return absl::InvalidArgumentError("model labels are not distinct");
  }
  absl::StatusOr<FeatureExtractor> extractor =
      FeatureExtractor::Create(file.features());
  if (!extractor.ok()) return extractor.status();
  absl::StatusOr<BucketRows> rows =
      BucketRows::FromSorted(file.emission_buckets(), extractor->num_buckets());
  if (!rows.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("emission rows: ", rows.status().message()));
  }
  absl::StatusOr<BucketRows> pair_rows =
      BucketRows::FromSorted(file.pair_buckets(), extractor->num_buckets());
  if (!pair_rows.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pair rows: ", pair_rows.status().message()));
  }
  if (file.pair_labels_size() > 0 && extractor->pair_extractor() == nullptr) {
    return absl::InvalidArgumentError(
        "pair weights without pair templates in the features");
  }
  absl::StatusOr<std::shared_ptr<const SecondOrderStructure>> structure =
      ReadStructure(file, labels.names());
  if (!structure.ok()) return structure.status();
  ChainModel model(std::move(file), std::move(labels), std::move(*extractor),
                   std::move(*rows), std::move(*pair_rows),
                   *std::move(structure));
  model.first_stage_ = std::move(first_stage);
  return model;
}

absl::StatusOr<ChainModel> ChainModel::FirstStageFromFile(ModelFile file) {
  auto invalid = [](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("first stage: ", why));
  };
  if (file.magic() != kModelMagic) return invalid("wrong magic");
  absl::Status valid = CheckWeightFields(file);
  if (!valid.ok()) return invalid(valid.message());
  absl::StatusOr<ChainModel> stage = FromFile(std::move(file));
  if (!stage.ok()) return invalid(stage.status().message());
  return stage;
}

ModelFile ChainModel::ToProto() const {
  ModelFile file = file_;
  if (first_stage_ != nullptr) {
    *file.mutable_first_stage() = first_stage_->ToProto();
  }
  return file;
}

absl::Status ChainModel::AddDocumentAttributes(absl::Span<Sentence> document,
                                               TagScratch* scratch) const {
  if (first_stage_ == nullptr) return absl::OkStatus();
  std::vector<std::vector<std::string>> labels;
  absl::Status status =
      first_stage_->DocumentLabels(document, scratch, &labels);
  if (!status.ok()) return status;
  return AppendDocumentAttributes(file_.document_word_attribute(), labels,
                                  document);
}

absl::Status ChainModel::DocumentLabels(
    absl::Span<const Sentence> document, TagScratch* scratch,
    std::vector<std::vector<std::string>>* labels) const {
  absl::Status status = TagDocument(document, scratch, labels);
  if (!status.ok()) return status;
  // The document attributes read IOB2 chunks.
  for (std::vector<std::string>& sentence_labels : *labels) {
    sentence_labels = ConvertTags(sentence_labels, file_.output_scheme(), IOB2);
  }
  return absl::OkStatus();
}

int ChainModel::added_attributes() const {
  return first_stage_ == nullptr
             ? 0
             : first_stage_->added_attributes() + kNumDocumentAttributes;
}

absl::Status ChainModel::TagDocument(
    absl::Span<const Sentence> document, TagScratch* scratch,
    std::vector<std::vector<std::string>>* tags) const {
  tags->resize(document.size());
  if (first_stage_ == nullptr) {
    for (size_t s = 0; s < document.size(); ++s) {
      absl::Status status = Tag(document[s], scratch, &(*tags)[s]);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  std::vector<Sentence> stacked(document.begin(), document.end());
  absl::Status status = AddDocumentAttributes(absl::MakeSpan(stacked), scratch);
  if (!status.ok()) return status;
  for (size_t s = 0; s < stacked.size(); ++s) {
    status = Tag(stacked[s], scratch, &(*tags)[s]);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<ChainModel> ChainModel::Create(
    ModelFile header, const BucketRows& rows,
    absl::Span<const double> weights) {
  return Create(std::move(header), WeightSpace{&rows}, weights);
}

absl::StatusOr<ChainModel> ChainModel::Create(
    ModelFile header, const WeightSpace& space,
    absl::Span<const double> weights) {
  ClearWeights(&header);
  header.set_magic(kModelMagic);
  header.set_format_version(header.has_first_stage() ? kStackedFormatVersion
                            : space.structure == nullptr
                                ? kModelFormatVersion
                                : kSecondOrderFormatVersion);
  const int64_t L = header.labels_size();
  const ChainLayout layout = space.Layout(static_cast<int>(L));
  if (static_cast<int64_t>(weights.size()) != layout.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model has ", weights.size(),
                     " weights, its layout needs ", layout.dim()));
  }
  if (space.rows->num_buckets() != header.features().num_buckets()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the weights' rows are over ", space.rows->num_buckets(),
        " buckets, the features hash into ", header.features().num_buckets()));
  }
  for (double v : weights) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError("model weights are not finite");
    }
  }
  const bool f64 = header.weight_precision() == FLOAT64;
  header.set_weight_precision(f64 ? FLOAT64 : FLOAT32);
  absl::Status stored = StoreRows(
      weights.data(), *space.rows, static_cast<int>(L), f64,
      header.mutable_emission_buckets(), header.mutable_emission_weights_f32(),
      header.mutable_emission_weights_f64());
  if (!stored.ok()) return stored;
  for (int64_t k = layout.transition_offset(); k < layout.start_offset(); ++k) {
    header.add_transitions(weights[k]);
  }
  for (int y = 0; y < L; ++y) {
    header.add_start(weights[layout.start_offset() + y]);
    header.add_end(weights[layout.end_offset() + y]);
  }
  if (space.structure != nullptr) {
    stored = StoreSecondOrder(space, layout, weights, f64, &header);
    if (!stored.ok()) return stored;
  }
  header.set_weights_checksum(WeightsChecksum(header));
  return FromFile(std::move(header));
}

WeightSpace ChainModel::space() const {
  WeightSpace space{&rows_};
  space.structure = structure_.get();
  if (structure_ != nullptr && file_.pair_labels_size() > 0) {
    space.pair_rows = &pair_rows_;
  }
  return space;
}

WeightsView ChainModel::weights() const {
  WeightsView view;
  view.num_labels = labels_.size();
  view.rows = &rows_;
  const bool f64 = file_.weight_precision() == FLOAT64;
  if (f64) {
    view.emission_f64 = file_.emission_weights_f64().data();
  } else {
    view.emission_f32 = file_.emission_weights_f32().data();
  }
  view.tail = tail_.data();
  view.structure = structure_.get();
  view.pair_rows = space().pair_rows;
  if (view.pair_rows != nullptr) {
    if (f64) {
      view.pair_f64 = file_.pair_weights_f64().data();
    } else {
      view.pair_f32 = file_.pair_weights_f32().data();
    }
  }
  return view;
}

namespace {

// Copies the rows a model keeps (`own`, `width` weights each, in float32 or
// float64) into the rows of `target` at `dense`; others stay zero.
void CopyRows(const BucketRows& own, const float* f32, const double* f64,
              int width, const BucketRows& target, double* dense) {
  for (int64_t r = 0; r < target.size(); ++r) {
    const int64_t row = own.Find(target.buckets()[r]);
    if (row < 0) continue;
    for (int y = 0; y < width; ++y) {
      dense[r * width + y] =
          f32 != nullptr ? f32[row * width + y] : f64[row * width + y];
    }
  }
}

}  // namespace

std::vector<double> ChainModel::DenseWeights(const BucketRows& rows) const {
  WeightSpace target = space();
  target.rows = &rows;
  return DenseWeights(target);
}

std::vector<double> ChainModel::DenseWeights(const WeightSpace& target) const {
  const ChainLayout layout = target.Layout(labels_.size());
  std::vector<double> dense(layout.dim(), 0.0);
  const WeightsView view = weights();
  CopyRows(rows_, view.emission_f32, view.emission_f64, layout.num_labels,
           *target.rows, dense.data());
  if (target.pair_rows != nullptr && view.pair_rows != nullptr) {
    CopyRows(pair_rows_, view.pair_f32, view.pair_f64, layout.num_pairs,
             *target.pair_rows, dense.data() + layout.pair_emission_offset());
  }
  std::copy(tail_.begin(), tail_.end(),
            dense.begin() + layout.transition_offset());
  return dense;
}

absl::Status ChainModel::Save(const std::string& path) const {
  std::string bytes;
  // A stacked model nests its first stage again; a plain one is not copied.
  const bool serialised = first_stage_ == nullptr
                              ? file_.SerializeToString(&bytes)
                              : ToProto().SerializeToString(&bytes);
  if (!serialised) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the model"));
  }
  return WriteFileAtomically(path, bytes, "the model file");
}

namespace {

absl::Status CheckVersion(const ModelFile& file) {
  const uint32_t version = file.format_version();
  const uint32_t expected = file.has_first_stage() ? kStackedFormatVersion
                            : file.order() == 2    ? kSecondOrderFormatVersion
                                                   : kModelFormatVersion;
  if (file.order() > 2) {
    return absl::DataLossError(absl::StrCat("model order ", file.order(),
                                            ", this build reads 1 and 2"));
  }
  if (version == expected) return absl::OkStatus();
  if (version == kStackedFormatVersion && !file.has_first_stage()) {
    return absl::DataLossError(absl::StrCat(
        "format version ", version, " (stacked) without a first stage"));
  }
  if (version == kSecondOrderFormatVersion || version == kModelFormatVersion) {
    return absl::DataLossError(absl::StrCat(
        "format version ", version, " does not match order ", file.order(),
        file.has_first_stage() ? " with a first stage" : ""));
  }
  return absl::DataLossError(absl::StrCat(
      "format version ", version, ", this build reads ", kModelFormatVersion,
      " to ", kStackedFormatVersion,
      version < kModelFormatVersion
          ? " (an older chaintag's dense layout): retrain the model"
          : ""));
}

// Sizes, label ids and finiteness of the second-order fields.
absl::Status CheckSecondOrderFields(const ModelFile& file, bool f64) {
  const int64_t L = file.labels_size();
  const int64_t trigrams = file.trigram_weights_size();
  const int64_t pairs = file.pair_labels_size() / 2;
  const int64_t pair_rows = file.pair_buckets_size();
  const int64_t f32_size = file.pair_weights_f32_size();
  const int64_t f64_size = file.pair_weights_f64_size();
  if (file.trigram_labels_size() != 3 * trigrams ||
      file.pair_labels_size() % 2 != 0 ||
      (f64 ? f64_size : f32_size) != pair_rows * pairs ||
      (f64 ? f32_size : f64_size) != 0) {
    return absl::DataLossError(
        "second-order weight sizes do not match their label lists");
  }
  for (const auto& ids : {file.trigram_labels(), file.pair_labels()}) {
    for (int32_t id : ids) {
      if (id < 0 || id >= L) {
        return absl::DataLossError(
            absl::StrCat("a trigram or pair names label ", id));
      }
    }
  }
  if (!AllFinite(file.trigram_weights()) ||
      !AllFinite(file.pair_weights_f32()) ||
      !AllFinite(file.pair_weights_f64())) {
    return absl::DataLossError("non-finite weights");
  }
  return absl::OkStatus();
}

// What Load checks of a parsed file before building the model: version,
// sizes, finite values, the checksum.
absl::Status CheckWeightFields(const ModelFile& file) {
  absl::Status version = CheckVersion(file);
  if (!version.ok()) return version;
  const int64_t L = file.labels_size();
  if (L == 0) return absl::DataLossError("no labels");
  const bool f64 = file.weight_precision() == FLOAT64;
  if (!f64 && file.weight_precision() != FLOAT32) {
    return absl::DataLossError("unknown weight precision");
  }
  const int64_t rows = file.emission_buckets_size();
  const int64_t f32_size = file.emission_weights_f32_size();
  const int64_t f64_size = file.emission_weights_f64_size();
  if ((f64 ? f64_size : f32_size) != rows * L ||
      (f64 ? f32_size : f64_size) != 0 || file.transitions_size() != L * L ||
      file.start_size() != L || file.end_size() != L) {
    return absl::DataLossError("weight sizes do not match the label count");
  }
  if (!AllFinite(file.emission_weights_f32()) ||
      !AllFinite(file.emission_weights_f64()) ||
      !AllFinite(file.transitions()) || !AllFinite(file.start()) ||
      !AllFinite(file.end())) {
    return absl::DataLossError("non-finite weights");
  }
  if (file.order() == 2) {
    absl::Status second = CheckSecondOrderFields(file, f64);
    if (!second.ok()) return second;
  }
  if (!file.has_weights_checksum() ||
      file.weights_checksum() != WeightsChecksum(file)) {
    return absl::DataLossError("weights checksum mismatch (damaged file)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ChainModel> ChainModel::Load(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the model file"));
  }
  ModelFile file;
  bool parsed;
  {
    // Straight from the file into the message's arrays: no copy of the
    // whole file in between.
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    parsed = file.ParseFromZeroCopyStream(&stream) && stream.GetErrno() == 0;
  }
  close(fd);
  auto invalid = [&path](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a valid chaintag model: ", why));
  };
  if (!parsed) {
    return invalid("the file does not parse (truncated or not a model)");
  }
  if (file.magic() != kModelMagic) return invalid("wrong magic");
  absl::Status valid = CheckWeightFields(file);
  if (!valid.ok()) return invalid(valid.message());
  absl::StatusOr<ChainModel> model = FromFile(std::move(file));
  if (!model.ok()) return invalid(model.status().message());
  return model;
}

namespace {

// The first-order scores of the sentence ComputeSentenceUnary scored,
// constrained when `constraints` is given.
absl::StatusOr<ChainScores> FirstOrderView(
    const WeightsView& weights, int length,
    const TransitionConstraints* constraints, TagScratch* scratch) {
  const ChainScores scores = ChainScoresFromTail(
      weights.num_labels, weights.tail, length, scratch->unary.data());
  if (constraints == nullptr) return scores;
  return constraints->Apply(scores, &scratch->constrained);
}

// The best labeling (into `labels`, length entries) and its score.
absl::StatusOr<double> DecodeBest(const WeightsView& weights, int length,
                                  const TransitionConstraints* constraints,
                                  TagScratch* scratch, int32_t* labels) {
  if (weights.structure != nullptr) {
    return scratch->second_order_decoder.Decode(
        *weights.structure, SecondOrderView(weights, length, *scratch), labels);
  }
  absl::StatusOr<ChainScores> scores =
      FirstOrderView(weights, length, constraints, scratch);
  if (!scores.ok()) return scores.status();
  return scratch->decoder.Decode(*scores, labels);
}

// The k best labelings into scratch->top_k_labelings and top_k_scores.
absl::StatusOr<int> DecodeTopK(const WeightsView& weights, int length, int k,
                               const TransitionConstraints* constraints,
                               TagScratch* scratch) {
  if (weights.structure != nullptr) {
    return scratch->second_order_top_k.Decode(
        *weights.structure, SecondOrderView(weights, length, *scratch), k,
        &scratch->top_k_labelings, &scratch->top_k_scores);
  }
  absl::StatusOr<ChainScores> scores =
      FirstOrderView(weights, length, constraints, scratch);
  if (!scores.ok()) return scores.status();
  return scratch->top_k.Decode(*scores, k, &scratch->top_k_labelings,
                               &scratch->top_k_scores);
}

// Second-order labelings are always the allowed ones: errors name the
// structure's constraints.
const TransitionConstraints* EffectiveConstraints(
    const WeightsView& weights, const TransitionConstraints* constraints) {
  return weights.structure != nullptr ? nullptr : constraints;
}

}  // namespace

absl::Status PredictWithWeights(const FeatureExtractor& extractor,
                                const WeightsView& weights,
                                const Sentence& sentence, TagScratch* scratch,
                                std::vector<int32_t>* labels,
                                const TransitionConstraints* constraints) {
  absl::Status status =
      ComputeSentenceUnary(extractor, weights, sentence, scratch);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  constraints = EffectiveConstraints(weights, constraints);
  labels->resize(T);
  absl::StatusOr<double> best =
      DecodeBest(weights, T, constraints, scratch, labels->data());
  if (!best.ok()) return best.status();
  if (*best == -std::numeric_limits<double>::infinity()) {
    labels->clear();
    return NoFiniteLabelingError(T, constraints);
  }
  return absl::OkStatus();
}

absl::Status PredictNBestWithWeights(const FeatureExtractor& extractor,
                                     const WeightsView& weights,
                                     const TransitionConstraints& constraints,
                                     const Sentence& sentence,
                                     const DecodeOptions& options,
                                     TagScratch* scratch, Decoded* decoded) {
  decoded->labelings.clear();
  decoded->scores.clear();
  decoded->margin.reset();
  if (options.nbest < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("nbest must be at least 1, got ", options.nbest));
  }
  absl::Status status =
      ComputeSentenceUnary(extractor, weights, sentence, scratch);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  const TransitionConstraints* used = EffectiveConstraints(
      weights, options.constrained ? &constraints : nullptr);
  if (options.nbest == 1) {
    decoded->labelings.resize(1);
    decoded->labelings[0].resize(T);
    absl::StatusOr<double> best =
        DecodeBest(weights, T, used, scratch, decoded->labelings[0].data());
    if (!best.ok()) return best.status();
    decoded->scores.push_back(*best);
  } else {
    absl::StatusOr<int> m =
        DecodeTopK(weights, T, options.nbest, used, scratch);
    if (!m.ok()) return m.status();
    decoded->labelings.resize(*m);
    for (int j = 0; j < *m; ++j) {
      const auto row =
          scratch->top_k_labelings.begin() + static_cast<ptrdiff_t>(j) * T;
      decoded->labelings[j].assign(row, row + T);
    }
    decoded->scores.assign(scratch->top_k_scores.begin(),
                           scratch->top_k_scores.end());
  }
  // Only −∞ scores (forbidden everywhere) leave nothing to return.
  if (decoded->scores.empty() ||
      decoded->scores[0] == -std::numeric_limits<double>::infinity()) {
    decoded->labelings.clear();
    decoded->scores.clear();
    return NoFiniteLabelingError(T, used);
  }
  if (options.nbest >= 2) {
    decoded->margin = decoded->scores.size() >= 2
                          ? decoded->scores[0] - decoded->scores[1]
                          : std::numeric_limits<double>::infinity();
  }
  return absl::OkStatus();
}

absl::Status ChainModel::PredictNBest(const Sentence& sentence,
                                      const DecodeOptions& options,
                                      TagScratch* scratch,
                                      Decoded* decoded) const {
  return PredictNBestWithWeights(extractor_, weights(), constraints_, sentence,
                                 options, scratch, decoded);
}

absl::Status ChainModel::Predict(const Sentence& sentence, TagScratch* scratch,
                                 std::vector<int32_t>* labels) const {
  return PredictWithWeights(extractor_, weights(), sentence, scratch, labels);
}

std::vector<std::string> LabelsToTags(const LabelSet& labels, TagScheme from,
                                      TagScheme to,
                                      const std::vector<int32_t>& ids) {
  std::vector<std::string> tags;
  tags.reserve(ids.size());
  for (int32_t y : ids) tags.push_back(labels.Name(y));
  // Predictions already in the output scheme are written as decoded, so
  // conlleval reads exactly the chunks the model chose.
  if (from == to) return tags;
  return ConvertTags(tags, from, to);
}

std::vector<std::string> ChainModel::ToOutputTags(
    const std::vector<int32_t>& labels) const {
  return LabelsToTags(labels_, file_.train_scheme(), file_.output_scheme(),
                      labels);
}

absl::Status ChainModel::Tag(const Sentence& sentence, TagScratch* scratch,
                             std::vector<std::string>* tags) const {
  absl::Status status = PredictWithWeights(
      extractor_, weights(), sentence, scratch, &scratch->labels,
      file_.constrained_decoding() ? &constraints_ : nullptr);
  if (!status.ok()) return status;
  *tags = ToOutputTags(scratch->labels);
  return absl::OkStatus();
}

}  // namespace chaintag
