// Checkpoints of solver runs: the state a solver writes at the end of a
// pass (named arrays of a SolverCheckpoint) and reads back to continue
// exactly where it stopped, the file's atomic write, and its validation
// when read (magic, version, checksum; sizes when each array is read).
//
// Thread-safety: a writer or reader per checkpoint; the file functions are
// stateless.

#ifndef CHAINTAG_SOLVERS_CHECKPOINT_H_
#define CHAINTAG_SOLVERS_CHECKPOINT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/random.h"
#include "solvers/checkpoint.pb.h"

namespace chaintag {

constexpr char kCheckpointMagic[] = "chaintag-checkpoint";
// Format 2 added arrays kept as their entries; format 1 files are read too.
constexpr uint32_t kCheckpointFormatVersion = 2;
constexpr uint32_t kOldestCheckpointFormatVersion = 1;

// An array of `size` reals given as its entries whose bits are not +0 (a
// -0 is one): ascending positions and their values.
struct RealEntries {
  int64_t size = 0;
  std::vector<int64_t> positions;
  std::vector<double> values;
};

// Whether x is one of an array's entries: its bits are not +0's, so a -0
// reads back as written. Inline: block states test every entry of a step.
inline bool IsEntry(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits != 0;
}

// Adds named arrays to a checkpoint.
class CheckpointWriter {
 public:
  explicit CheckpointWriter(SolverCheckpoint* checkpoint)
      : checkpoint_(checkpoint) {}

  void Reals(absl::string_view name, const double* values, size_t size);
  void Reals(absl::string_view name, const std::vector<double>& values) {
    Reals(name, values.data(), values.size());
  }
  void Real(absl::string_view name, double value) { Reals(name, &value, 1); }
  // The array as its entries when that takes less room than all of it
  // (state that is mostly zeros: a BCFW run's w and block states at
  // hundreds of labels), else as Reals. Such an array is read back only
  // against its size (CheckpointReader::Reals with size >= 0, Entries).
  void SparseReals(absl::string_view name, const double* values, size_t size);
  void SparseReals(absl::string_view name, const std::vector<double>& values) {
    SparseReals(name, values.data(), values.size());
  }
  void Entries(absl::string_view name, const RealEntries& entries);
  template <typename Int>
  void Integers(absl::string_view name, const std::vector<Int>& values) {
    CheckpointArray* array = Add(name);
    for (Int v : values) array->add_integers(static_cast<int64_t>(v));
  }
  void Integer(absl::string_view name, int64_t value) {
    Add(name)->add_integers(value);
  }
  void Text(absl::string_view name, const std::string& text) {
    Add(name)->set_text(text);
  }
  // A generator's state, from which it continues the same sequence.
  void Random(absl::string_view name, const SolverRandom& random) {
    Text(name, random.SaveState());
  }

 private:
  CheckpointArray* Add(absl::string_view name);
  SolverCheckpoint* checkpoint_;
};

// Reads named arrays back; every error names the array.
class CheckpointReader {
 public:
  explicit CheckpointReader(const SolverCheckpoint& checkpoint);

  // `size` < 0 accepts any size, but not an array kept as its entries: its
  // size must be one the run knows, never only what the file claims.
  absl::Status Reals(absl::string_view name, int64_t size,
                     std::vector<double>* values) const;
  absl::Status Reals(absl::string_view name, int64_t size,
                     double* values) const;
  // An array of `size` (>= 0) reals, written either way, as its entries.
  absl::Status Entries(absl::string_view name, int64_t size,
                       RealEntries* entries) const;
  absl::Status Real(absl::string_view name, double* value) const;
  template <typename Int>
  absl::Status Integers(absl::string_view name, int64_t size,
                        std::vector<Int>* values) const {
    absl::StatusOr<const CheckpointArray*> array = Find(name);
    if (!array.ok()) return array.status();
    absl::Status sized = CheckSize(name, (*array)->integers_size(), size);
    if (!sized.ok()) return sized;
    values->assign((*array)->integers().begin(), (*array)->integers().end());
    return absl::OkStatus();
  }
  template <typename Int>
  absl::Status Integer(absl::string_view name, Int* value) const {
    std::vector<int64_t> values;
    absl::Status status = Integers(name, 1, &values);
    if (status.ok()) *value = static_cast<Int>(values[0]);
    return status;
  }
  absl::Status Text(absl::string_view name, std::string* text) const;
  // Whether the checkpoint has the array (one a later version added).
  bool Has(absl::string_view name) const { return Find(name).ok(); }
  absl::Status Random(absl::string_view name, SolverRandom* random) const;

 private:
  absl::StatusOr<const CheckpointArray*> Find(absl::string_view name) const;
  // The named array of reals, checked: its size, no NaN, and for one kept
  // as its entries, positions inside it.
  absl::StatusOr<const CheckpointArray*> FindReals(absl::string_view name,
                                                   int64_t size) const;
  static absl::Status CheckSize(absl::string_view name, int64_t actual,
                                int64_t expected);
  const SolverCheckpoint& checkpoint_;
};

// The checksum a checkpoint file records: XXH3-64 of its arrays' bytes.
uint64_t CheckpointChecksum(const SolverCheckpoint& checkpoint);

// Fills magic, version and checksum, and writes the file atomically.
absl::Status WriteCheckpoint(const std::string& path,
                             SolverCheckpoint checkpoint);
// Reads and validates a checkpoint file; errors name it.
absl::StatusOr<SolverCheckpoint> ReadCheckpoint(const std::string& path);

}  // namespace chaintag

#endif  // CHAINTAG_SOLVERS_CHECKPOINT_H_
