#include "solvers/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file_checksum.h"
#include "base/file_io.h"
#include "google/protobuf/io/coded_stream.h"
#include "xxhash.h"

namespace chaintag {
uint64_t CheckpointChecksum(const SolverCheckpoint& checkpoint) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::string bytes;
  for (const CheckpointArray& array : checkpoint.arrays()) {
    bytes.clear();
    array.SerializeToString(&bytes);
    XXH3_64bits_update(state, bytes.data(), bytes.size());
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

CheckpointArray* CheckpointWriter::Add(absl::string_view name) {
  CheckpointArray* array = checkpoint_->add_arrays();
  array->set_name(std::string(name));
  return array;
}

void CheckpointWriter::Reals(absl::string_view name, const double* values,
                             size_t size) {
  CheckpointArray* array = Add(name);
  array->mutable_reals()->Reserve(static_cast<int>(size));
  for (size_t k = 0; k < size; ++k) array->add_reals(values[k]);
}

void CheckpointWriter::SparseReals(absl::string_view name, const double* values,
                                   size_t size) {
  RealEntries entries;
  entries.size = static_cast<int64_t>(size);
  for (size_t k = 0; k < size; ++k) {
    if (!IsEntry(values[k])) continue;
    entries.positions.push_back(static_cast<int64_t>(k));
    entries.values.push_back(values[k]);
  }
  Entries(name, entries);
}

void CheckpointWriter::Entries(absl::string_view name,
                               const RealEntries& entries) {
  // The bytes of each form's numbers: 8 a value; a gap's varint.
  int64_t sparse_bytes = 0;
  int64_t previous = -1;
  for (int64_t position : entries.positions) {
    sparse_bytes += 8 + google::protobuf::io::CodedOutputStream::VarintSize64(
                            static_cast<uint64_t>(position - previous - 1));
    previous = position;
  }
  CheckpointArray* array = Add(name);
  if (sparse_bytes < 8 * entries.size) {
    array->set_sparse_size(entries.size);
    const int count = static_cast<int>(entries.positions.size());
    array->mutable_position_gaps()->Reserve(count);
    array->mutable_reals()->Reserve(count);
    previous = -1;
    for (int e = 0; e < count; ++e) {
      array->add_position_gaps(entries.positions[e] - previous - 1);
      array->add_reals(entries.values[e]);
      previous = entries.positions[e];
    }
    return;
  }
  array->mutable_reals()->Reserve(static_cast<int>(entries.size));
  size_t e = 0;
  for (int64_t k = 0; k < entries.size; ++k) {
    const bool held = e < entries.positions.size() && entries.positions[e] == k;
    array->add_reals(held ? entries.values[e++] : 0.0);
  }
}

CheckpointReader::CheckpointReader(const SolverCheckpoint& checkpoint)
    : checkpoint_(checkpoint) {}

absl::StatusOr<const CheckpointArray*> CheckpointReader::Find(
    absl::string_view name) const {
  for (const CheckpointArray& array : checkpoint_.arrays()) {
    if (array.name() == name) return &array;
  }
  return absl::DataLossError(
      absl::StrCat("checkpoint has no \"", name, "\" (another solver's?)"));
}

absl::Status CheckpointReader::CheckSize(absl::string_view name, int64_t actual,
                                         int64_t expected) {
  if (expected < 0 || actual == expected) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("checkpoint's \"", name, "\" has ",
                                          actual, " values, the run needs ",
                                          expected));
}

namespace {

// No solver state holds a NaN (+∞ marks unvisited blocks' gaps): one read
// back would make every comparison false, e.g. an oracle find no maximiser.
absl::Status CheckNoNan(absl::string_view name, const CheckpointArray& array) {
  for (double v : array.reals()) {
    if (std::isnan(v)) {
      return absl::DataLossError(
          absl::StrCat("checkpoint's \"", name, "\" holds a NaN"));
    }
  }
  return absl::OkStatus();
}

// The entries an array kept as its entries has (FindReals checked them):
// position and value, in order.
template <typename Visit>
void ForEachKeptEntry(const CheckpointArray& array, Visit visit) {
  int64_t position = -1;
  for (int e = 0; e < array.reals_size(); ++e) {
    position += array.position_gaps(e) + 1;
    visit(position, array.reals(e));
  }
}

int64_t RealsSize(const CheckpointArray& array) {
  return array.has_sparse_size() ? array.sparse_size() : array.reals_size();
}

// A checked array of reals into `values` (RealsSize entries).
void Expand(const CheckpointArray& array, double* values) {
  if (!array.has_sparse_size()) {
    std::copy(array.reals().begin(), array.reals().end(), values);
    return;
  }
  std::fill(values, values + array.sparse_size(), 0.0);
  ForEachKeptEntry(array, [values](int64_t position, double value) {
    values[position] = value;
  });
}

}  // namespace

absl::StatusOr<const CheckpointArray*> CheckpointReader::FindReals(
    absl::string_view name, int64_t size) const {
  absl::StatusOr<const CheckpointArray*> found = Find(name);
  if (!found.ok()) return found.status();
  const CheckpointArray& array = **found;
  if (array.has_sparse_size()) {
    if (size < 0) {
      return absl::DataLossError(
          absl::StrCat("checkpoint's \"", name,
                       "\" is kept as its entries, but the run reads it as "
                       "an array of any size"));
    }
    absl::Status sized = CheckSize(name, array.sparse_size(), size);
    if (!sized.ok()) return sized;
    if (array.position_gaps_size() != array.reals_size()) {
      return absl::DataLossError(absl::StrCat(
          "checkpoint's \"", name, "\" has ", array.position_gaps_size(),
          " positions for ", array.reals_size(), " values"));
    }
    int64_t position = -1;
    for (int64_t gap : array.position_gaps()) {
      // position + 1 + gap < size, written so that no sum overflows.
      if (gap < 0 || gap >= size - 1 - position) {
        return absl::DataLossError(absl::StrCat("checkpoint's \"", name,
                                                "\" has an entry outside its ",
                                                size, " values"));
      }
      position += gap + 1;
    }
  } else {
    absl::Status sized = CheckSize(name, array.reals_size(), size);
    if (!sized.ok()) return sized;
  }
  absl::Status clean = CheckNoNan(name, array);
  if (!clean.ok()) return clean;
  return &array;
}

absl::Status CheckpointReader::Reals(absl::string_view name, int64_t size,
                                     std::vector<double>* values) const {
  absl::StatusOr<const CheckpointArray*> array = FindReals(name, size);
  if (!array.ok()) return array.status();
  values->resize(RealsSize(**array));
  Expand(**array, values->data());
  return absl::OkStatus();
}

absl::Status CheckpointReader::Reals(absl::string_view name, int64_t size,
                                     double* values) const {
  absl::StatusOr<const CheckpointArray*> array = FindReals(name, size);
  if (!array.ok()) return array.status();
  Expand(**array, values);
  return absl::OkStatus();
}

absl::Status CheckpointReader::Entries(absl::string_view name, int64_t size,
                                       RealEntries* entries) const {
  if (size < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint's \"", name, "\" read as entries needs its size"));
  }
  absl::StatusOr<const CheckpointArray*> found = FindReals(name, size);
  if (!found.ok()) return found.status();
  const CheckpointArray& array = **found;
  entries->size = size;
  entries->positions.clear();
  entries->values.clear();
  if (array.has_sparse_size()) {
    entries->positions.reserve(array.reals_size());
    entries->values.assign(array.reals().begin(), array.reals().end());
    ForEachKeptEntry(array, [entries](int64_t position, double) {
      entries->positions.push_back(position);
    });
    return absl::OkStatus();
  }
  for (int64_t k = 0; k < size; ++k) {
    if (!IsEntry(array.reals(k))) continue;
    entries->positions.push_back(k);
    entries->values.push_back(array.reals(k));
  }
  return absl::OkStatus();
}

absl::Status CheckpointReader::Real(absl::string_view name,
                                    double* value) const {
  return Reals(name, 1, value);
}

absl::Status CheckpointReader::Text(absl::string_view name,
                                    std::string* text) const {
  absl::StatusOr<const CheckpointArray*> array = Find(name);
  if (!array.ok()) return array.status();
  *text = (*array)->text();
  return absl::OkStatus();
}

absl::Status CheckpointReader::Random(absl::string_view name,
                                      SolverRandom* random) const {
  std::string state;
  absl::Status read = Text(name, &state);
  if (!read.ok()) return read;
  if (!random->LoadState(state)) {
    return absl::DataLossError(
        absl::StrCat("checkpoint's \"", name, "\" is no generator state"));
  }
  return absl::OkStatus();
}

absl::Status WriteCheckpoint(const std::string& path,
                             SolverCheckpoint checkpoint) {
  checkpoint.set_magic(kCheckpointMagic);
  checkpoint.set_format_version(kCheckpointFormatVersion);
  checkpoint.set_checksum(CheckpointChecksum(checkpoint));
  checkpoint.clear_file_checksum();  // appended to the bytes below
  // A protobuf message holds at most 2 GiB: say so, and what is largest,
  // rather than only that serialising failed.
  const size_t needed = checkpoint.ByteSizeLong();
  if (needed > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    const CheckpointArray* largest = nullptr;
    for (const CheckpointArray& array : checkpoint.arrays()) {
      if (largest == nullptr || array.ByteSizeLong() > largest->ByteSizeLong())
        largest = &array;
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": the checkpoint would take ", needed,
        " bytes, more than the 2 GiB a checkpoint file holds; its largest "
        "array is \"",
        largest->name(), "\" (", largest->ByteSizeLong(), " bytes)"));
  }
  std::string bytes;
  if (!checkpoint.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the checkpoint"));
  }
  AppendFileChecksum(SolverCheckpoint::kFileChecksumFieldNumber, &bytes);
  return WriteFileAtomically(path, bytes, "the checkpoint");
}

absl::StatusOr<SolverCheckpoint> ReadCheckpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open the checkpoint"));
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto invalid = [&path](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a valid chaintag checkpoint: ", why));
  };
  SolverCheckpoint checkpoint;
  const std::string read = bytes.str();
  if (!checkpoint.ParseFromString(read)) {
    return invalid("the file does not parse (truncated?)");
  }
  if (checkpoint.has_file_checksum()) {
    absl::Status whole =
        CheckFileChecksum(read, SolverCheckpoint::kFileChecksumFieldNumber,
                          checkpoint.file_checksum());
    if (!whole.ok()) return invalid(whole.message());
    checkpoint.clear_file_checksum();
  }
  if (checkpoint.magic() != kCheckpointMagic) return invalid("wrong magic");
  if (checkpoint.format_version() < kOldestCheckpointFormatVersion ||
      checkpoint.format_version() > kCheckpointFormatVersion) {
    return invalid(absl::StrCat(
        "format version ", checkpoint.format_version(), ", this build reads ",
        kOldestCheckpointFormatVersion, " to ", kCheckpointFormatVersion));
  }
  if (!checkpoint.has_checksum() ||
      checkpoint.checksum() != CheckpointChecksum(checkpoint)) {
    return invalid("checksum mismatch (damaged file)");
  }
  return checkpoint;
}

}  // namespace chaintag
