#include "solvers/checkpoint.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
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

}  // namespace

absl::Status CheckpointReader::Reals(absl::string_view name, int64_t size,
                                     std::vector<double>* values) const {
  absl::StatusOr<const CheckpointArray*> array = Find(name);
  if (!array.ok()) return array.status();
  absl::Status sized = CheckSize(name, (*array)->reals_size(), size);
  if (sized.ok()) sized = CheckNoNan(name, **array);
  if (!sized.ok()) return sized;
  values->assign((*array)->reals().begin(), (*array)->reals().end());
  return absl::OkStatus();
}

absl::Status CheckpointReader::Reals(absl::string_view name, int64_t size,
                                     double* values) const {
  absl::StatusOr<const CheckpointArray*> array = Find(name);
  if (!array.ok()) return array.status();
  absl::Status sized = CheckSize(name, (*array)->reals_size(), size);
  if (sized.ok()) sized = CheckNoNan(name, **array);
  if (!sized.ok()) return sized;
  std::copy((*array)->reals().begin(), (*array)->reals().end(), values);
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
  std::string bytes;
  if (!checkpoint.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the checkpoint"));
  }
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
  if (!checkpoint.ParseFromString(bytes.str())) {
    return invalid("the file does not parse (truncated?)");
  }
  if (checkpoint.magic() != kCheckpointMagic) return invalid("wrong magic");
  if (checkpoint.format_version() != kCheckpointFormatVersion) {
    return invalid(absl::StrCat("format version ", checkpoint.format_version(),
                                ", this build reads ",
                                kCheckpointFormatVersion));
  }
  if (!checkpoint.has_checksum() ||
      checkpoint.checksum() != CheckpointChecksum(checkpoint)) {
    return invalid("checksum mismatch (damaged file)");
  }
  return checkpoint;
}

}  // namespace chaintag
