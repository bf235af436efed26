#include "models/model_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/file_checksum.h"
#include "base/file_io.h"
#include "base/huge_pages.h"
#include "features/feature_keys.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/wire_format_lite.h"
#include "models/sparse_rows.h"
#include "models/transition_constraints.h"
#include "xxhash.h"

namespace chaintag {

bool HasSparseRows(const ModelFile& file) {
  return file.emission_row_sizes_size() > 0;
}

uint32_t FormatKind(const ModelFile& file) {
  const uint32_t version = file.format_version();
  return HasSparseRows(file) && version > kSparseRowsVersionOffset
             ? version - kSparseRowsVersionOffset
             : version;
}

bool HasFirstOrderPairRows(const ModelFile& file) {
  return file.order() != 2 && FormatKind(file) == kFirstOrderPairFormatVersion;
}

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
  auto add_pair_rows = [&] {
    add(file.pair_buckets().data(),
        file.pair_buckets_size() * sizeof(uint32_t));
    add(file.pair_weights_f32().data(),
        file.pair_weights_f32_size() * sizeof(float));
    add(file.pair_weights_f64().data(),
        file.pair_weights_f64_size() * sizeof(double));
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
    add_pair_rows();
  }
  if (HasFirstOrderPairRows(file)) {
    // Likewise after the first-order part.
    constexpr char kPairs[] = "first-order pair rows";
    add(kPairs, sizeof(kPairs));
    add_pair_rows();
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
  if (file.features().exact() || file.feature_keys_size() > 0) {
    // Only in exact files, so that the others keep their checksum.
    constexpr char kKeys[] = "exact feature keys";
    add(kKeys, sizeof(kKeys));
    add(file.feature_keys().data(),
        file.feature_keys_size() * sizeof(uint64_t));
  }
  if (HasSparseRows(file) || file.emission_labels_size() > 0) {
    // Only in sparse files, so that the others keep their checksum.
    constexpr char kSparse[] = "sparse emission rows";
    add(kSparse, sizeof(kSparse));
    add(file.emission_row_sizes().data(),
        file.emission_row_sizes_size() * sizeof(uint32_t));
    add(file.emission_labels().data(),
        file.emission_labels_size() * sizeof(uint32_t));
  }
  if (file.name_buckets_size() + file.pair_name_buckets_size() > 0) {
    // Last, so that a file without names keeps its checksum. Each name's
    // length goes before it, so that bytes cannot move between names.
    constexpr char kNames[] = "attribute names";
    add(kNames, sizeof(kNames));
    for (const auto* names : {&file.names(), &file.pair_names()}) {
      for (const std::string& name : *names) {
        const uint64_t length = name.size();
        add(&length, sizeof(length));
        add(name.data(), name.size());
      }
    }
    add(file.name_buckets().data(),
        file.name_buckets_size() * sizeof(uint32_t));
    add(file.pair_name_buckets().data(),
        file.pair_name_buckets_size() * sizeof(uint32_t));
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

absl::Status CheckVersion(const ModelFile& file) {
  const uint32_t stored = file.format_version();
  const bool sparse_version =
      stored >= kModelFormatVersion + kSparseRowsVersionOffset &&
      stored <= kExactFormatVersion + kSparseRowsVersionOffset;
  if (HasSparseRows(file) != sparse_version &&
      (sparse_version || stored <= kExactFormatVersion)) {
    return absl::DataLossError(absl::StrCat(
        "format version ", stored,
        HasSparseRows(file) ? " with sparse emission rows"
                            : " without sparse emission rows",
        " (formats ", kModelFormatVersion + kSparseRowsVersionOffset, " to ",
        kExactFormatVersion + kSparseRowsVersionOffset, " have them)"));
  }
  const uint32_t version = FormatKind(file);
  const uint32_t expected = file.features().exact()  ? kExactFormatVersion
                            : file.has_first_stage() ? kStackedFormatVersion
                            : file.order() == 2      ? kSecondOrderFormatVersion
                            : version == kFirstOrderPairFormatVersion
                                ? kFirstOrderPairFormatVersion
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
  if (version == kSecondOrderFormatVersion || version == kModelFormatVersion ||
      version == kFirstOrderPairFormatVersion ||
      version == kExactFormatVersion) {
    return absl::DataLossError(absl::StrCat(
        "format version ", version, " does not match order ", file.order(),
        file.has_first_stage() ? " with a first stage" : "",
        file.features().exact() ? " with exact features" : "",
        version == kExactFormatVersion ? " (10 is for exact features)" : ""));
  }
  return absl::DataLossError(absl::StrCat(
      "format version ", stored, ", this build reads ", kModelFormatVersion,
      " to ", kExactFormatVersion, " and ",
      kModelFormatVersion + kSparseRowsVersionOffset, " to ",
      kExactFormatVersion + kSparseRowsVersionOffset,
      version < kModelFormatVersion
          ? " (an older chaintag's feature hashing): retrain the model"
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

// The pair rows of a first-order file: L² weights per row, no pair labels
// or trigrams (format 9); none in another first-order file.
absl::Status CheckFirstOrderPairFields(const ModelFile& file, bool f64) {
  const int64_t L = file.labels_size();
  const int64_t rows = file.pair_buckets_size();
  const int64_t f32_size = file.pair_weights_f32_size();
  const int64_t f64_size = file.pair_weights_f64_size();
  if (!HasFirstOrderPairRows(file)) {
    if (rows > 0 || f32_size > 0 || f64_size > 0 ||
        file.pair_labels_size() > 0) {
      return absl::DataLossError(absl::StrCat(
          "pair rows in a first-order file of format ", file.format_version(),
          " (first-order pair rows are format ", kFirstOrderPairFormatVersion,
          ")"));
    }
    return absl::OkStatus();
  }
  if (file.pair_labels_size() > 0 || file.trigram_labels_size() > 0 ||
      file.trigram_weights_size() > 0 ||
      (f64 ? f64_size : f32_size) != rows * L * L ||
      (f64 ? f32_size : f64_size) != 0) {
    return absl::DataLossError(absl::StrCat(
        "first-order pair rows must hold ", L * L,
        " weights each (one per label pair) and no pair labels or trigrams"));
  }
  if (!AllFinite(file.pair_weights_f32()) ||
      !AllFinite(file.pair_weights_f64())) {
    return absl::DataLossError("non-finite weights");
  }
  return absl::OkStatus();
}

// An exact file's feature keys: ascending and distinct, in place of the
// emission buckets, with no pair rows (exact features have no pair
// templates); none in a hashed file. Their count is the rows' count,
// which CheckWeightFields compares with the weights.
absl::Status CheckFeatureKeys(const ModelFile& file) {
  if (!file.features().exact()) {
    if (file.feature_keys_size() == 0) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat(
        file.feature_keys_size(),
        " feature keys in a model with hashed features (keys are for "
        "features.exact)"));
  }
  if (file.emission_buckets_size() > 0 || file.pair_buckets_size() > 0) {
    return absl::DataLossError(
        "buckets in a model with exact features (its rows are keyed by "
        "feature_keys)");
  }
  const auto& keys = file.feature_keys();
  for (int k = 1; k < keys.size(); ++k) {
    if (keys[k] <= keys[k - 1]) {
      return absl::DataLossError(absl::StrCat(
          "feature key ", k, " of ", keys.size(),
          " is not above the one before it (the key table must be sorted "
          "and distinct)"));
    }
  }
  if (static_cast<uint64_t>(keys.size()) > FeatureKeys::kMaxKeys) {
    return absl::DataLossError("too many feature keys");
  }
  return absl::OkStatus();
}

// A sparse file's row sizes, one per row; a full-row file lists no labels.
// The sizes and labels against the weights are checked where the model
// builds their index (SparseRows::Create, in ChainModel), so that a load
// walks them once.
absl::Status CheckSparseRows(const ModelFile& file, int64_t rows) {
  if (!HasSparseRows(file)) {
    if (file.emission_labels_size() == 0) return absl::OkStatus();
    return absl::DataLossError("emission labels without emission row sizes");
  }
  if (file.emission_row_sizes_size() != rows) {
    return absl::DataLossError(absl::StrCat(file.emission_row_sizes_size(),
                                            " emission row sizes for ", rows,
                                            " emission rows"));
  }
  return absl::OkStatus();
}

// What Load checks of a parsed file before building the model: version,
// sizes, finite values, the checksum.
absl::Status CheckWeightFields(const ModelFile& file) {
  absl::Status version = CheckVersion(file);
  if (!version.ok()) return version;
  const int64_t L = file.labels_size();
  const bool f64 = file.weight_precision() == FLOAT64;
  if (!f64 && file.weight_precision() != FLOAT32) {
    return absl::DataLossError("unknown weight precision");
  }
  absl::Status keys = CheckFeatureKeys(file);
  if (!keys.ok()) return keys;
  const int64_t rows = file.features().exact() ? file.feature_keys_size()
                                               : file.emission_buckets_size();
  // A model trained on no sentences has no labels, and then no weights.
  if (L == 0 && rows > 0) return absl::DataLossError("weights but no labels");
  const int64_t f32_size = file.emission_weights_f32_size();
  const int64_t f64_size = file.emission_weights_f64_size();
  // Full rows hold L weights each; sparse ones what their sizes say.
  absl::Status sparse = CheckSparseRows(file, rows);
  if (!sparse.ok()) return sparse;
  if ((!HasSparseRows(file) && (f64 ? f64_size : f32_size) != rows * L) ||
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
  absl::Status part = file.order() == 2 ? CheckSecondOrderFields(file, f64)
                                        : CheckFirstOrderPairFields(file, f64);
  if (!part.ok()) return part;
  if (!file.has_weights_checksum() ||
      file.weights_checksum() != WeightsChecksum(file)) {
    return absl::DataLossError("weights checksum mismatch (damaged file)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const SecondOrderStructure>>
ReadSecondOrderStructure(const ModelFile& file,
                         const std::vector<std::string>& labels) {
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

// A table of attribute names: one per bucket, buckets ascending and within
// the hash's range.
absl::Status CheckNames(
    absl::string_view what,
    const google::protobuf::RepeatedField<uint32_t>& buckets, int num_names,
    uint64_t num_buckets) {
  if (buckets.size() != num_names) {
    return absl::DataLossError(absl::StrCat(
        buckets.size(), " ", what, " buckets but ", num_names, " names"));
  }
  for (int k = 0; k < buckets.size(); ++k) {
    if (buckets[k] >= num_buckets || (k > 0 && buckets[k] <= buckets[k - 1])) {
      return absl::DataLossError(
          absl::StrCat(what, " bucket ", k, " is out of order or range"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckModelFile(const ModelFile& file) {
  if (file.magic() != kModelMagic) return absl::DataLossError("wrong magic");
  absl::Status weights = CheckWeightFields(file);
  if (!weights.ok()) return weights;
  // An exact file names rows, a hashed one buckets.
  const uint64_t num_buckets =
      file.features().exact() ? static_cast<uint64_t>(file.feature_keys_size())
                              : file.features().num_buckets();
  absl::Status names =
      CheckNames("named", file.name_buckets(), file.names_size(), num_buckets);
  if (!names.ok()) return names;
  return CheckNames("named pair", file.pair_name_buckets(),
                    file.pair_names_size(), num_buckets);
}

namespace {

template <typename T>
void ReserveHugePageHinted(uint32_t bytes,
                           google::protobuf::RepeatedField<T>* field) {
  const int count = static_cast<int>(bytes / sizeof(T));
  if (count <= field->Capacity()) return;
  field->Reserve(count);
  AdviseHugePages(field->mutable_data(), count * sizeof(T));
}

// Gives the weight arrays of `file` the capacity the serialised ModelFile in
// [data, data + size) needs, marked for huge pages, before it is parsed:
// the parser keeps a capacity, so the rows land on huge pages and the copy
// faults in 2 MiB at a time instead of 4 KiB: fewer page faults, and a
// shorter start-up for `tag` (docs/experiments.md#tagging-speed-and-memory).
// Only the fields' lengths are read; a malformed file is the parser's to
// refuse.
void ReserveWeightArrays(const uint8_t* data, int size, ModelFile* file) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(data, size);
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (WireFormatLite::GetTagWireType(tag) !=
        WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) return;
      continue;
    }
    uint32_t length = 0;
    if (!in.ReadVarint32(&length) || length > static_cast<uint32_t>(size)) {
      return;
    }
    const int offset = in.CurrentPosition();
    switch (WireFormatLite::GetTagFieldNumber(tag)) {
      case ModelFile::kEmissionWeightsF32FieldNumber:
        ReserveHugePageHinted(length, file->mutable_emission_weights_f32());
        break;
      case ModelFile::kEmissionWeightsF64FieldNumber:
        ReserveHugePageHinted(length, file->mutable_emission_weights_f64());
        break;
      case ModelFile::kPairWeightsF32FieldNumber:
        ReserveHugePageHinted(length, file->mutable_pair_weights_f32());
        break;
      case ModelFile::kPairWeightsF64FieldNumber:
        ReserveHugePageHinted(length, file->mutable_pair_weights_f64());
        break;
      case ModelFile::kFeatureKeysFieldNumber:
        ReserveHugePageHinted(length, file->mutable_feature_keys());
        break;
      case ModelFile::kFirstStageFieldNumber:
        if (length <= static_cast<uint32_t>(size - offset)) {
          ReserveWeightArrays(data + offset, static_cast<int>(length),
                              file->mutable_first_stage());
        }
        break;
      default:
        break;
    }
    if (!in.Skip(static_cast<int>(length))) return;
  }
}

// Why a file that does not parse is no model: another tagger's model,
// named by its first bytes, or a damaged one.
std::string UnparsedModelReason(int fd) {
  char head[16] = {};
  const ssize_t got = pread(fd, head, sizeof(head), 0);
  const absl::string_view start(head, got > 0 ? static_cast<size_t>(got) : 0);
  const char* peer = nullptr;
  if (absl::StartsWith(start, "lCRF")) {
    peer = "a CRFsuite model";
  } else if (absl::StartsWith(start, "#mdl#")) {
    peer = "a Wapiti model";
  } else if (absl::StartsWith(start, "version: ") ||
             absl::StartsWith(start, absl::string_view("d\0\0\0", 4))) {
    peer = "a CRF++ model";
  }
  if (peer == nullptr) {
    return "the file does not parse (truncated or not a model)";
  }
  return absl::StrCat(
      "it is ", peer,
      ", which chaintag does not read: train a chaintag model from the same "
      "training file (docs/coming-from-other-taggers.md)");
}

}  // namespace

absl::StatusOr<ModelFile> ReadModelFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the model file"));
  }
  // The file mapped and parsed in place: with every packed array's bytes
  // at hand, the parser sizes each array once and copies it in one go
  // (parsing a stream grew them by doubling), and no buffer of the whole
  // file is allocated and faulted in.
  struct stat status;
  const bool stated = fstat(fd, &status) == 0;
  if (stated && S_ISDIR(status.st_mode)) {
    close(fd);
    return InvalidModelFileError(path, "a directory, not a model file");
  }
  bool parsed = stated && status.st_size > 0;
  ModelFile file;
  absl::Status file_checksum = absl::OkStatus();
  if (parsed) {
    const size_t size = static_cast<size_t>(status.st_size);
    void* mapped =
        mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    parsed = mapped != MAP_FAILED && size <= INT32_MAX;
    if (parsed) {
      ReserveWeightArrays(static_cast<const uint8_t*>(mapped),
                          static_cast<int>(size), &file);
      parsed = file.ParseFromArray(mapped, static_cast<int>(size));
      if (parsed && file.has_file_checksum()) {
        file_checksum = CheckFileChecksum(
            absl::string_view(static_cast<const char*>(mapped), size),
            ModelFile::kFileChecksumFieldNumber, file.file_checksum());
      }
    }
    if (mapped != MAP_FAILED) munmap(mapped, size);
  }
  const std::string unparsed = parsed ? "" : UnparsedModelReason(fd);
  close(fd);
  if (!parsed) return InvalidModelFileError(path, unparsed);
  if (!file_checksum.ok()) {
    return InvalidModelFileError(path, file_checksum.message());
  }
  file.clear_file_checksum();
  absl::Status valid = CheckModelFile(file);
  if (!valid.ok()) return InvalidModelFileError(path, valid.message());
  return file;
}

absl::Status InvalidModelFileError(absl::string_view path,
                                   absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat(path, ": not a valid chaintag model: ", why));
}

absl::Status WriteModelFile(const ModelFile& file, const std::string& path) {
  // ReadModelFile clears file_checksum; were one left set, it would be
  // serialised inside the checksummed bytes and the appended field, parsed
  // last, would still be the one that counts.
  std::string bytes;
  if (!file.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the model"));
  }
  AppendFileChecksum(ModelFile::kFileChecksumFieldNumber, &bytes);
  return WriteFileAtomically(path, bytes, "the model file");
}

}  // namespace chaintag
