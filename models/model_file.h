// The model file (models/model_file.proto): how it is written, read back and
// checked, apart from the model that tags with it (models/chain_model.h) and
// the encoding of a solver's weights into it (models/model_encoding.h), so
// that a change to the format is a change to these two modules alone.
//
// Only emission rows with a non-zero weight are stored, sorted by bucket (by
// feature key for exact features), in float32 or float64; a second-order
// file adds its trigrams, pairs and pair rows. Reading parses straight from the
// file into the message's arrays and checks everything the model then trusts
// without looking again: magic, version, field sizes, label ids, finite values
// and a checksum that also covers the fields that change decoding; then a
// checksum of the whole file, written as its last field. Writing goes
// through a temporary file and a rename, so an interrupted save never leaves a
// broken model behind.
//
// Thread-safety: stateless functions over caller-owned values.

#ifndef CHAINTAG_MODELS_MODEL_FILE_H_
#define CHAINTAG_MODELS_MODEL_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/model_file.pb.h"
#include "models/second_order.h"

namespace chaintag {

// 6: compact rows (fixed32 buckets, float32 or float64 rows); 7: the same
// with a second-order part (written only for second-order models, so a
// first-order file stays readable by builds without it). Formats 1 to 5
// are refused with a request to retrain: format 1 stored dense double rows,
// and 2 to 5 (the kinds of 6 to 9) hashed a template's parts as one joined
// string (features/feature_extractor.h), so their rows are other features'.
constexpr uint32_t kModelFormatVersion = 6;
constexpr uint32_t kSecondOrderFormatVersion = 7;
// A stacked model (ModelFile.first_stage), of either order.
constexpr uint32_t kStackedFormatVersion = 8;
// A first-order model with observation-conditioned transitions (pair
// templates): format 6 plus pair rows of L² weights each (pair (a, b) at
// a·L + b, no pair_labels), in the pair fields. Its own version, so that a
// build that reads pair rows only at second order refuses the file rather
// than decoding without them.
constexpr uint32_t kFirstOrderPairFormatVersion = 9;
// Exact features (FeatureConfig.exact), of any order, stacked or not: the
// emission rows are keyed by 64-bit feature keys (ModelFile.feature_keys)
// instead of buckets. Its own version, so that a build that knows only
// buckets refuses the file rather than reading it without rows.
constexpr uint32_t kExactFormatVersion = 10;
// Each of the formats above with sparse emission rows
// (ModelFile.emission_row_sizes): its version plus this offset, so that a
// build that reads only full rows refuses the file.
constexpr uint32_t kSparseRowsVersionOffset = 10;
// Emission rows are stored sparse from this many labels up (and only when
// that stores under half of the full rows' weights). Below, a full row is a
// few cache lines that the scoring loop reads in one vectorised sweep, and
// tags faster than a sparse row's label lookups
// (docs/experiments.md#sparse-emission-rows-in-the-model-file-2026-11-28).
constexpr int kSparseRowsFromLabels = 100;
constexpr char kModelMagic[] = "chaintag-model";

// Whether `file` is a first-order model with pair rows (format 9 or 19).
bool HasFirstOrderPairRows(const ModelFile& file);
// Whether `file`'s emission rows are sparse (ModelFile.emission_row_sizes).
bool HasSparseRows(const ModelFile& file);
// The format's kind: its version, less kSparseRowsVersionOffset for a file
// with sparse rows.
uint32_t FormatKind(const ModelFile& file);

// The checksum a model file records (ModelFile.weights_checksum): XXH3-64
// of its weights, of the flags and first stage that change decoding, and
// of the attribute names.
uint64_t WeightsChecksum(const ModelFile& file);

// The structure a second-order file describes (its trigrams and pairs,
// constrained by its training scheme) over `labels`; null for a first-order
// file.
absl::StatusOr<std::shared_ptr<const SecondOrderStructure>>
ReadSecondOrderStructure(const ModelFile& file,
                         const std::vector<std::string>& labels);

// DataLoss naming the first fault of a parsed file: the magic, the version
// (and whether it matches the order, the first stage and exact features),
// field sizes, label ids, non-finite weights, the feature keys (ascending,
// distinct, one per row), the checksum. A first stage is not looked into:
// its checksum is covered, and it is checked as a file of its own when the
// model is built from it. Sparse rows' sizes and labels are checked against
// the weights when the model builds their index (ChainModel), so a file
// that passes here can still fail to load there.
absl::Status CheckModelFile(const ModelFile& file);

// Parses the file at `path` and checks it (CheckModelFile), and, when it
// has one, its whole-file checksum (base/file_checksum.h; the ModelFile
// returned does not keep it). Errors: NotFound
// "<path>: cannot open the model file", or InvalidModelFileError.
absl::StatusOr<ModelFile> ReadModelFile(const std::string& path);

// DataLoss "<path>: not a valid chaintag model: <why>": ReadModelFile's
// error, and the loader's for faults found while building the model.
absl::Status InvalidModelFileError(absl::string_view path,
                                   absl::string_view why);

// Serialises `file` with its whole-file checksum last (base/file_checksum.h)
// and replaces `path` with it atomically (base/file_io.h).
absl::Status WriteModelFile(const ModelFile& file, const std::string& path);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_MODEL_FILE_H_
