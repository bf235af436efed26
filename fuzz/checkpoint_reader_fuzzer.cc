// Fuzz target for the checkpoint loader: ReadCheckpoint (solvers/
// checkpoint.h), which `train --resume` calls on a user-given file, and
// what reads the checkpoint after it: CheckpointReader and the solver's
// LoadState, then the passes of the resumed run.
//
// ReadCheckpoint takes a path, so the input is written to a per-process
// temporary file. As with models, nearly every mutation fails the
// checksum; an input that parses with the right magic and version is read
// a second time with its checksum recomputed (the same XXH3 as solvers/
// checkpoint.cc). A checkpoint that reads is resumed on a small multiclass
// problem with the config its fingerprint names (fuzz/solver_setups.h;
// make_seeds writes the seeds that way).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "fuzz/solver_setups.h"
#include "solvers/checkpoint.h"
#include "solvers/monitor.h"
#include "solvers/registry.h"

namespace chaintag {
namespace {

// Every accessor of CheckpointReader on every array, with and without the
// array's own size.
void ReadArrays(const SolverCheckpoint& checkpoint) {
  CheckpointReader reader(checkpoint);
  for (const CheckpointArray& array : checkpoint.arrays()) {
    const std::string& name = array.name();
    std::vector<double> reals;
    std::vector<int32_t> ints;
    double real;
    int64_t integer;
    std::string text;
    // (Names may repeat: the reader finds the first array of a name.)
    (void)reader.Reals(name, -1, &reals);
    (void)reader.Reals(name, array.reals_size(), &reals);
    // An array kept as its entries is read against a size the run knows;
    // here the one it claims, when a run could hold it.
    if (array.sparse_size() >= 0 && array.sparse_size() <= (1 << 20)) {
      (void)reader.Reals(name, array.sparse_size(), &reals);
      RealEntries entries;
      (void)reader.Entries(name, array.sparse_size(), &entries);
    }
    (void)reader.Real(name, &real);
    if (reader.Integers(name, -1, &ints).ok()) {
      (void)reader.Integers(name, static_cast<int64_t>(ints.size()), &ints);
    }
    (void)reader.Integer(name, &integer);
    (void)reader.Text(name, &text);
  }
}

// Resumes the run the checkpoint's fingerprint names.
void Resume(const SolverCheckpoint& checkpoint) {
  static const MulticlassProblem* problem =
      new MulticlassProblem(fuzzing::SolverSetupProblem());
  static const std::vector<SolverConfig>* configs =
      new std::vector<SolverConfig>(fuzzing::SolverSetupConfigs());
  // The seeds are at pass 2: one more pass (a gap check included) covers
  // the steps after LoadState at a third of the cost of the full run.
  SolverConfig config = (*configs)[checkpoint.fingerprint() % configs->size()];
  config.set_max_passes(3);
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetResume(checkpoint);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  FUZZ_CHECK(solver.ok());
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(*problem, &monitor, &w);
  if (summary.ok()) FUZZ_CHECK(w.size() == static_cast<size_t>(problem->Dim()));
}

void Use(const SolverCheckpoint& checkpoint) {
  ReadArrays(checkpoint);
  Resume(checkpoint);
}

}  // namespace
}  // namespace chaintag

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace chaintag;
  static fuzzing::TempFile file("checkpoint_reader");
  absl::StatusOr<SolverCheckpoint> checkpoint =
      ReadCheckpoint(file.Write(fuzzing::AsText(data, size)));
  if (checkpoint.ok()) {
    Use(*checkpoint);
    return 0;
  }
  SolverCheckpoint parsed;
  if (!parsed.ParseFromArray(data, static_cast<int>(size)) ||
      parsed.magic() != kCheckpointMagic ||
      parsed.format_version() != kCheckpointFormatVersion) {
    return 0;
  }
  parsed.set_checksum(CheckpointChecksum(parsed));
  checkpoint = ReadCheckpoint(file.Write(parsed.SerializeAsString()));
  FUZZ_CHECK(checkpoint.ok());
  Use(*checkpoint);
  return 0;
}
