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
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "xxhash.h"

namespace chaintag {
namespace {

// Checksum over the weight fields, in a fixed order, then over the
// precision and the decoding mode when they differ from the defaults: those
// fields are serialised after the rows, so a file cut just before them would
// otherwise load and decode differently.
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
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

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
}

// Extracts the sentence's features into scratch->features (as rows of
// `weights`) and its unary scores into scratch->unary.
absl::Status ComputeSentenceUnary(const FeatureExtractor& extractor,
                                  const WeightsView& weights,
                                  const Sentence& sentence,
                                  TagScratch* scratch) {
  absl::Status status =
      extractor.ExtractRows(sentence, *weights.rows, &scratch->features);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  scratch->unary.resize(static_cast<size_t>(T) * weights.num_labels);
  if (weights.emission_f32 != nullptr) {
    ComputeUnaryScores(weights.num_labels, weights.emission_f32,
                       scratch->features, scratch->unary.data());
  } else {
    ComputeUnaryScores(weights.num_labels, weights.emission_f64,
                       scratch->features, scratch->unary.data());
  }
  return absl::OkStatus();
}

}  // namespace

WeightsView SolverWeightsView(const ChainLayout& layout, const BucketRows& rows,
                              const double* w) {
  WeightsView view;
  view.num_labels = layout.num_labels;
  view.rows = &rows;
  view.emission_f64 = w;
  view.tail = w + layout.transition_offset();
  return view;
}

ChainModel::ChainModel(ModelFile file, LabelSet labels,
                       FeatureExtractor extractor, BucketRows rows)
    : file_(std::move(file)),
      labels_(std::move(labels)),
      extractor_(std::move(extractor)),
      rows_(std::move(rows)),
      constraints_(labels_.names(), file_.train_scheme()) {
  tail_.assign(file_.transitions().begin(), file_.transitions().end());
  tail_.insert(tail_.end(), file_.start().begin(), file_.start().end());
  tail_.insert(tail_.end(), file_.end().begin(), file_.end().end());
}

absl::StatusOr<ChainModel> ChainModel::FromFile(ModelFile file) {
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
  return ChainModel(std::move(file), std::move(labels), std::move(*extractor),
                    std::move(*rows));
}

absl::StatusOr<ChainModel> ChainModel::Create(
    ModelFile header, const BucketRows& rows,
    absl::Span<const double> weights) {
  ClearWeights(&header);
  header.set_magic(kModelMagic);
  header.set_format_version(kModelFormatVersion);
  const int64_t L = header.labels_size();
  const ChainLayout layout{static_cast<int>(L), rows.size()};
  if (static_cast<int64_t>(weights.size()) != layout.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model has ", weights.size(),
                     " weights, its layout needs ", layout.dim()));
  }
  if (rows.num_buckets() != header.features().num_buckets()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the weights' rows are over ", rows.num_buckets(),
        " buckets, the features hash into ", header.features().num_buckets()));
  }
  for (double v : weights) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError("model weights are not finite");
    }
  }
  const bool f64 = header.weight_precision() == FLOAT64;
  header.set_weight_precision(f64 ? FLOAT64 : FLOAT32);
  for (int64_t r = 0; r < rows.size(); ++r) {
    const double* row = weights.data() + r * L;
    bool nonzero = false;
    for (int y = 0; y < L && !nonzero; ++y) nonzero = row[y] != 0;
    if (!nonzero) continue;
    header.add_emission_buckets(rows.buckets()[r]);
    for (int y = 0; y < L; ++y) {
      if (f64) {
        header.add_emission_weights_f64(row[y]);
      } else if (std::abs(row[y]) > std::numeric_limits<float>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("weight ", row[y],
                         " is beyond float32's range: save the model "
                         "with weight_precision FLOAT64"));
      } else {
        header.add_emission_weights_f32(static_cast<float>(row[y]));
      }
    }
  }
  for (int64_t k = layout.transition_offset(); k < layout.start_offset(); ++k) {
    header.add_transitions(weights[k]);
  }
  for (int y = 0; y < L; ++y) {
    header.add_start(weights[layout.start_offset() + y]);
    header.add_end(weights[layout.end_offset() + y]);
  }
  header.set_weights_checksum(WeightsChecksum(header));
  return FromFile(std::move(header));
}

WeightsView ChainModel::weights() const {
  WeightsView view;
  view.num_labels = labels_.size();
  view.rows = &rows_;
  if (file_.weight_precision() == FLOAT64) {
    view.emission_f64 = file_.emission_weights_f64().data();
  } else {
    view.emission_f32 = file_.emission_weights_f32().data();
  }
  view.tail = tail_.data();
  return view;
}

std::vector<double> ChainModel::DenseWeights(const BucketRows& rows) const {
  const int L = labels_.size();
  const ChainLayout layout{L, rows.size()};
  std::vector<double> dense(layout.dim(), 0.0);
  const WeightsView view = weights();
  for (int64_t r = 0; r < rows.size(); ++r) {
    const int64_t own = rows_.Find(rows.buckets()[r]);
    if (own < 0) continue;
    for (int y = 0; y < L; ++y) {
      dense[r * L + y] = view.emission_f32 != nullptr
                             ? view.emission_f32[own * L + y]
                             : view.emission_f64[own * L + y];
    }
  }
  std::copy(tail_.begin(), tail_.end(),
            dense.begin() + layout.transition_offset());
  return dense;
}

absl::Status ChainModel::Save(const std::string& path) const {
  std::string bytes;
  if (!file_.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the model"));
  }
  return WriteFileAtomically(path, bytes, "the model file");
}

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
  if (file.format_version() != kModelFormatVersion) {
    return invalid(absl::StrCat(
        "format version ", file.format_version(), ", this build reads ",
        kModelFormatVersion,
        file.format_version() < kModelFormatVersion
            ? " (an older chaintag's dense layout): retrain the model"
            : ""));
  }
  const int64_t L = file.labels_size();
  if (L == 0) return invalid("no labels");
  const bool f64 = file.weight_precision() == FLOAT64;
  if (!f64 && file.weight_precision() != FLOAT32) {
    return invalid("unknown weight precision");
  }
  const int64_t rows = file.emission_buckets_size();
  const int64_t f32_size = file.emission_weights_f32_size();
  const int64_t f64_size = file.emission_weights_f64_size();
  if ((f64 ? f64_size : f32_size) != rows * L ||
      (f64 ? f32_size : f64_size) != 0 || file.transitions_size() != L * L ||
      file.start_size() != L || file.end_size() != L) {
    return invalid("weight sizes do not match the label count");
  }
  if (!AllFinite(file.emission_weights_f32()) ||
      !AllFinite(file.emission_weights_f64()) ||
      !AllFinite(file.transitions()) || !AllFinite(file.start()) ||
      !AllFinite(file.end())) {
    return invalid("non-finite weights");
  }
  if (!file.has_weights_checksum() ||
      file.weights_checksum() != WeightsChecksum(file)) {
    return invalid("weights checksum mismatch (damaged file)");
  }
  absl::StatusOr<ChainModel> model = FromFile(std::move(file));
  if (!model.ok()) return invalid(model.status().message());
  return model;
}

absl::Status PredictWithWeights(const FeatureExtractor& extractor,
                                const WeightsView& weights,
                                const Sentence& sentence, TagScratch* scratch,
                                std::vector<int32_t>* labels,
                                const TransitionConstraints* constraints) {
  absl::Status status =
      ComputeSentenceUnary(extractor, weights, sentence, scratch);
  if (!status.ok()) return status;
  const int T = scratch->features.size();
  ChainScores scores = ChainScoresFromTail(weights.num_labels, weights.tail, T,
                                           scratch->unary.data());
  if (constraints != nullptr) {
    absl::StatusOr<ChainScores> constrained =
        constraints->Apply(scores, &scratch->constrained);
    if (!constrained.ok()) return constrained.status();
    scores = *constrained;
  }
  labels->resize(T);
  const double best = scratch->decoder.Decode(scores, labels->data());
  if (best == -std::numeric_limits<double>::infinity()) {
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
  ChainScores scores = ChainScoresFromTail(weights.num_labels, weights.tail, T,
                                           scratch->unary.data());
  if (options.constrained) {
    absl::StatusOr<ChainScores> constrained =
        constraints.Apply(scores, &scratch->constrained);
    if (!constrained.ok()) return constrained.status();
    scores = *constrained;
  }
  if (options.nbest == 1) {
    decoded->labelings.resize(1);
    decoded->labelings[0].resize(T);
    decoded->scores.push_back(
        scratch->decoder.Decode(scores, decoded->labelings[0].data()));
  } else {
    const int m =
        scratch->top_k.Decode(scores, options.nbest, &scratch->top_k_labelings,
                              &scratch->top_k_scores);
    decoded->labelings.resize(m);
    for (int j = 0; j < m; ++j) {
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
    return NoFiniteLabelingError(T,
                                 options.constrained ? &constraints : nullptr);
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
