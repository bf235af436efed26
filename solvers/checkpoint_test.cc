// Checkpoints: a run resumed from any pass's checkpoint ends exactly as the
// uninterrupted run, for every solver and bcfw variant; damaged or foreign
// checkpoints are refused.

#include "solvers/checkpoint.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

struct Outcome {
  TrainingSummary summary;
  std::vector<double> w;
  std::vector<std::string> log;
  // The training seconds of this run's records and of its summary.
  std::vector<double> record_seconds;
  double seconds = 0;
};

// Solves with a log (and checkpoints every `every` passes to `path`, or a
// resume from `resume`).
Outcome Solve(const Problem& problem, const SolverConfig& config,
              const std::string& name, int every,
              const SolverCheckpoint* resume) {
  Outcome outcome;
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  const std::string log = TempPath(name + ".log");
  Monitor::CheckpointPlan plan;
  plan.path = TempPath(name + ".ckpt");
  plan.every_passes = every;
  plan.fingerprint = 42;
  monitor.SetCheckpointPlan(plan);
  if (resume != nullptr) {
    EXPECT_TRUE(monitor.ResumeLog(log, resume->records()).ok());
    monitor.SetResume(*resume);
  } else {
    EXPECT_TRUE(monitor.OpenLog(log).ok());
  }
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  EXPECT_TRUE(solver.ok()) << solver.status();
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, &monitor, &outcome.w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (summary.ok()) outcome.summary = *summary;
  outcome.seconds = outcome.summary.seconds();
  outcome.summary.clear_seconds();
  for (const PassRecord& record : monitor.records()) {
    outcome.record_seconds.push_back(record.seconds());
  }
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    // The seconds differ; everything else must not.
    const size_t seconds = line.find("\"seconds\"");
    if (seconds != std::string::npos) {
      line.erase(seconds, line.find(',', seconds) - seconds);
    }
    outcome.log.push_back(line);
  }
  return outcome;
}

// FW steps with a cache too small for the classes: some blocks' stores
// lose α to evictions (their checks then read the state), others keep it.
SolverConfig FwCacheConfig() {
  SolverConfig config;
  config.set_name("bcfw");
  config.set_lambda(0.05);
  config.set_gap_check(3);
  config.set_max_passes(11);
  config.set_gap_tolerance(1e-12);
  config.set_weighted_averaging(false);
  config.mutable_bcfw()->set_step(SolverConfig::FW);
  config.mutable_bcfw()->set_cache(true);
  config.mutable_bcfw()->set_max_cache_size(2);
  return config;
}

std::vector<SolverConfig> Configs() {
  std::vector<SolverConfig> configs;
  auto add = [&configs](const std::string& name) -> SolverConfig& {
    configs.emplace_back();
    configs.back().set_name(name);
    configs.back().set_lambda(0.05);
    configs.back().set_gap_check(3);
    configs.back().set_max_passes(11);
    configs.back().set_gap_tolerance(1e-12);
    return configs.back();
  };
  add("bcfw");  // FW steps, averaging, uniform
  SolverConfig& gap = add("bcfw");
  gap.set_sampling(SolverConfig::GAP);
  gap.set_weighted_averaging(false);
  gap.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  gap.mutable_bcfw()->set_cache(true);
  gap.mutable_bcfw()->set_max_cache_size(3);
  add("bcfw") = FwCacheConfig();
  SolverConfig& away = add("bcfw");
  away.set_sampling(SolverConfig::PERMUTATION);
  away.mutable_bcfw()->set_step(SolverConfig::BEST);
  SolverConfig& rounds = add("bcfw");
  rounds.set_minibatch(5);
  rounds.set_num_threads(2);
  add("active_set_bcfw").mutable_bcfw()->set_cache(true);
  SolverConfig& mp = add("mp_bcfw");
  mp.mutable_mp_bcfw()->set_max_approx_passes(3);
  add("fw");
  add("ssg");
  SolverConfig& svrg = add("svrg");
  svrg.mutable_svrg()->set_learning_rate(0.05);
  svrg.set_max_passes(12);
  SolverConfig& casimir = add("casimir_svrg");
  casimir.mutable_svrg()->set_learning_rate(0.05);
  casimir.mutable_casimir()->set_variant(SolverConfig::CASIMIR_ADAPT);
  casimir.mutable_casimir()->set_warm_start(SolverConfig::EXTRAPOLATION);
  casimir.set_max_passes(12);
  SolverConfig& lbfgs = add("lbfgs");
  lbfgs.set_objective(SolverConfig::LOG_SUM_EXP);
  lbfgs.set_l1(0.01);
  lbfgs.mutable_lbfgs()->set_num_memories(3);
  return configs;
}

TEST(CheckpointTest, ResumedRunsEndExactlyAsUninterruptedOnes) {
  const MulticlassProblem problem = RandomMulticlassProblem(30, 4, 3, 11);
  int k = 0;
  for (const SolverConfig& config : Configs()) {
    const std::string name = absl::StrCat("run", k++);
    SCOPED_TRACE(config.ShortDebugString());
    // The uninterrupted run, checkpointing every 4 passes (epochs for svrg;
    // outer iterations for mp_bcfw): its last checkpoint is then a run
    // "interrupted" after it.
    const Outcome whole = Solve(problem, config, name, 4, nullptr);
    absl::StatusOr<SolverCheckpoint> checkpoint =
        ReadCheckpoint(TempPath(name + ".ckpt"));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_GT(checkpoint->passes(), 0);
    EXPECT_EQ(checkpoint->fingerprint(), 42u);
    const Outcome resumed = Solve(problem, config, name, 0, &*checkpoint);
    EXPECT_EQ(resumed.w, whole.w);
    EXPECT_EQ(resumed.summary.SerializeAsString(),
              whole.summary.SerializeAsString())
        << resumed.summary.ShortDebugString() << "\nvs\n"
        << whole.summary.ShortDebugString();
    EXPECT_EQ(resumed.log, whole.log);
  }
}

// A resumed run's records and summary count training seconds on from the
// checkpoint's, so that a log's time axis never goes back.
TEST(CheckpointTest, ResumedRunsCountSecondsOnFromTheCheckpoints) {
  const MulticlassProblem problem = RandomMulticlassProblem(30, 4, 3, 11);
  const SolverConfig config = Configs()[0];
  const Outcome whole = Solve(problem, config, "seconds", 4, nullptr);
  absl::StatusOr<SolverCheckpoint> checkpoint =
      ReadCheckpoint(TempPath("seconds.ckpt"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  int found = 0;
  for (CheckpointArray& array : *checkpoint->mutable_arrays()) {
    if (array.name() != "pass_driver.training_seconds") continue;
    ASSERT_EQ(array.reals_size(), 1);
    EXPECT_LE(array.reals(0), whole.seconds);
    array.set_reals(0, 1000);  // as if the first run had taken that long
    ++found;
  }
  ASSERT_EQ(found, 1);
  const Outcome resumed = Solve(problem, config, "seconds", 0, &*checkpoint);
  ASSERT_FALSE(resumed.record_seconds.empty());
  for (double seconds : resumed.record_seconds) EXPECT_GE(seconds, 1000);
  EXPECT_GE(resumed.seconds, 1000);
  EXPECT_LT(whole.seconds, 1000);
}

// lbfgs and sag on a problem that fixes coordinates at 0 keep their
// vectors over the free ones: the checkpoint holds those, and the resumed
// run ends as the uninterrupted one, returning w at the free coordinates.
TEST(CheckpointTest, ARestrictedRunResumesExactly) {
  const RestrictedProblem problem(RandomMulticlassProblem(30, 4, 3, 11));
  std::vector<int64_t> free;
  ASSERT_TRUE(problem.FreeCoordinates(&free));
  SolverConfig lbfgs = Configs().back();
  ASSERT_EQ(lbfgs.name(), "lbfgs");
  SolverConfig sag = lbfgs;
  sag.clear_lbfgs();
  sag.set_name("sag");
  sag.mutable_sag()->set_learning_rate(0.05);
  sag.set_minibatch(4);
  sag.set_num_threads(2);
  for (const SolverConfig& config : {lbfgs, sag}) {
    SCOPED_TRACE(config.name());
    const std::string name = "restricted_" + config.name();
    const Outcome whole = Solve(problem, config, name, 4, nullptr);
    absl::StatusOr<SolverCheckpoint> checkpoint =
        ReadCheckpoint(TempPath(name + ".ckpt"));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    EXPECT_GT(checkpoint->passes(), 0);
    const Outcome resumed = Solve(problem, config, name, 0, &*checkpoint);
    EXPECT_EQ(resumed.w, whole.w);
    EXPECT_EQ(resumed.summary.SerializeAsString(),
              whole.summary.SerializeAsString());
    EXPECT_EQ(resumed.log, whole.log);
    EXPECT_EQ(whole.w.size(), free.size());
  }
}

// A checkpoint of FW steps with the cache written before its stores kept
// inner products and α-completeness: the run resumes with every block
// reading its state, and ends where the uninterrupted run does, up to
// rounding.
TEST(CheckpointTest, FwCacheResumesFromACheckpointWithoutDotsOrFlags) {
  const MulticlassProblem problem = RandomMulticlassProblem(30, 4, 3, 11);
  SolverConfig config = FwCacheConfig();
  config.set_max_passes(40);
  const Outcome whole = Solve(problem, config, "old_fw_cache", 4, nullptr);
  absl::StatusOr<SolverCheckpoint> checkpoint =
      ReadCheckpoint(TempPath("old_fw_cache.ckpt"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  SolverCheckpoint old = *checkpoint;
  old.clear_arrays();
  int removed = 0;
  for (const CheckpointArray& array : checkpoint->arrays()) {
    if (array.name() == "alpha_complete") {
      ++removed;
      continue;
    }
    CheckpointArray* copy = old.add_arrays();
    *copy = array;
    if (array.name() == "corner_dots") {
      ++removed;
      copy->clear_reals();
    }
  }
  ASSERT_EQ(removed, 2);
  const Outcome resumed = Solve(problem, config, "old_fw_cache", 0, &old);
  ASSERT_EQ(resumed.w.size(), whole.w.size());
  // Both certified: each primal is within its gap of the optimum.
  EXPECT_GT(resumed.summary.gap(), 0);
  EXPECT_LE(std::abs(resumed.summary.primal() - whole.summary.primal()),
            resumed.summary.gap() + whole.summary.gap());
}

// Twelve classes: a block's state is nonzero on its labelings' classes
// alone, so w, the states and their sums are kept as their entries, and a
// resumed run still ends exactly as the uninterrupted one.
TEST(CheckpointTest, RunsWithMostlyZeroStatesResumeFromTheirEntries) {
  const MulticlassProblem problem = RandomMulticlassProblem(30, 3, 12, 5);
  std::vector<SolverConfig> configs = Configs();
  configs.resize(5);  // the bcfw variants
  int k = 0;
  for (const SolverConfig& config : configs) {
    const std::string name = absl::StrCat("sparse", k++);
    SCOPED_TRACE(config.ShortDebugString());
    const Outcome whole = Solve(problem, config, name, 4, nullptr);
    absl::StatusOr<SolverCheckpoint> checkpoint =
        ReadCheckpoint(TempPath(name + ".ckpt"));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    int kept_as_entries = 0;
    for (const CheckpointArray& array : checkpoint->arrays()) {
      if (array.name() == "states" || array.name() == "average_state_sums") {
        kept_as_entries += array.has_sparse_size();
        if (array.has_sparse_size()) {
          EXPECT_LT(array.reals_size(), array.sparse_size() / 2);
        }
      }
    }
    EXPECT_GE(kept_as_entries, 1);
    const Outcome resumed = Solve(problem, config, name, 0, &*checkpoint);
    EXPECT_EQ(resumed.w, whole.w);
    EXPECT_EQ(resumed.summary.SerializeAsString(),
              whole.summary.SerializeAsString());
    EXPECT_EQ(resumed.log, whole.log);
  }
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// An array of mostly zeros is kept as its entries and reads back to the
// bit (a -0 too), whole or as entries; one with few zeros is kept whole.
TEST(CheckpointTest, SparseArraysReadBackToTheBit) {
  std::vector<double> mostly_zero(1000, 0.0);
  mostly_zero[0] = 1.5;
  mostly_zero[3] = -0.0;
  mostly_zero[500] = 1e-300;
  mostly_zero[999] = -2.25;
  std::vector<double> full(10);
  for (int k = 0; k < 10; ++k) full[k] = k - 2;  // one zero, at 2
  SolverCheckpoint written;
  CheckpointWriter writer(&written);
  writer.SparseReals("sparse", mostly_zero.data(), mostly_zero.size());
  writer.SparseReals("full", full.data(), full.size());
  RealEntries given;
  given.size = 6;
  given.positions = {1, 4};
  given.values = {7.0, -0.0};
  writer.Entries("given", given);
  ASSERT_EQ(written.arrays_size(), 3);
  const CheckpointArray& sparse = written.arrays(0);
  EXPECT_EQ(sparse.sparse_size(), 1000);
  EXPECT_EQ(std::vector<int64_t>(sparse.position_gaps().begin(),
                                 sparse.position_gaps().end()),
            (std::vector<int64_t>{0, 2, 496, 498}));
  EXPECT_FALSE(written.arrays(1).has_sparse_size());
  EXPECT_TRUE(written.arrays(2).has_sparse_size());

  // Through the file.
  const std::string path = TempPath("sparse_arrays.ckpt");
  ASSERT_TRUE(WriteCheckpoint(path, written).ok());
  absl::StatusOr<SolverCheckpoint> read = ReadCheckpoint(path);
  ASSERT_TRUE(read.ok()) << read.status();
  CheckpointReader reader(*read);
  std::vector<double> back;
  ASSERT_TRUE(reader.Reals("sparse", 1000, &back).ok());
  EXPECT_TRUE(SameBits(back, mostly_zero));
  std::vector<double> buffer(1000, 9.0);
  ASSERT_TRUE(reader.Reals("sparse", 1000, buffer.data()).ok());
  EXPECT_TRUE(SameBits(buffer, mostly_zero));
  ASSERT_TRUE(reader.Reals("full", -1, &back).ok());
  EXPECT_TRUE(SameBits(back, full));
  ASSERT_TRUE(reader.Reals("given", 6, &back).ok());
  EXPECT_TRUE(SameBits(back, {0, 7, 0, 0, -0.0, 0}));

  RealEntries entries;
  ASSERT_TRUE(reader.Entries("sparse", 1000, &entries).ok());
  EXPECT_EQ(entries.size, 1000);
  EXPECT_EQ(entries.positions, (std::vector<int64_t>{0, 3, 500, 999}));
  EXPECT_TRUE(SameBits(entries.values, {1.5, -0.0, 1e-300, -2.25}));
  ASSERT_TRUE(reader.Entries("full", 10, &entries).ok());
  EXPECT_EQ(entries.positions,
            (std::vector<int64_t>{0, 1, 3, 4, 5, 6, 7, 8, 9}));

  // Its size comes from the run, never from the file alone.
  EXPECT_FALSE(reader.Reals("sparse", -1, &back).ok());
  EXPECT_FALSE(reader.Reals("sparse", 999, &back).ok());
  EXPECT_FALSE(reader.Entries("sparse", -1, &entries).ok());
  EXPECT_FALSE(reader.Entries("full", 11, &entries).ok());
}

TEST(CheckpointTest, SparseArraysWithBadPositionsAreRefused) {
  std::vector<double> values(100, 0.0);
  values[10] = 1;
  values[20] = 2;
  SolverCheckpoint good;
  CheckpointWriter(&good).SparseReals("a", values.data(), values.size());
  ASSERT_TRUE(good.arrays(0).has_sparse_size());
  std::vector<std::function<void(CheckpointArray*)>> damages = {
      [](CheckpointArray* a) { a->set_position_gaps(1, -1); },
      [](CheckpointArray* a) { a->set_position_gaps(1, 89); },
      [](CheckpointArray* a) { a->set_position_gaps(0, INT64_MAX); },
      [](CheckpointArray* a) { a->add_position_gaps(0); },
      [](CheckpointArray* a) { a->set_reals(1, std::nan("")); },
  };
  for (size_t d = 0; d < damages.size(); ++d) {
    SCOPED_TRACE(d);
    SolverCheckpoint damaged = good;
    damages[d](damaged.mutable_arrays(0));
    CheckpointReader reader(damaged);
    std::vector<double> back;
    absl::Status status = reader.Reals("a", 100, &back);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(status.message().find("\"a\""), std::string::npos) << status;
    RealEntries entries;
    EXPECT_FALSE(reader.Entries("a", 100, &entries).ok());
  }
  // The last entry may sit at the array's end, no further.
  SolverCheckpoint last = good;
  last.mutable_arrays(0)->set_position_gaps(1, 88);
  std::vector<double> back;
  ASSERT_TRUE(CheckpointReader(last).Reals("a", 100, &back).ok());
  EXPECT_EQ(back[99], 2);
}

// Format 1 (before arrays kept as entries) is read; a later one is not.
TEST(CheckpointTest, FormatVersionsOneAndTwoAreRead) {
  SolverCheckpoint checkpoint;
  CheckpointWriter(&checkpoint).Real("x", 2.5);
  const std::string path = TempPath("versions.ckpt");
  ASSERT_TRUE(WriteCheckpoint(path, checkpoint).ok());
  absl::StatusOr<SolverCheckpoint> read = ReadCheckpoint(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->format_version(), kCheckpointFormatVersion);
  for (uint32_t version : {1u, 3u}) {
    SolverCheckpoint other = *read;
    other.set_format_version(version);
    std::ofstream(path, std::ios::binary) << other.SerializeAsString();
    absl::StatusOr<SolverCheckpoint> again = ReadCheckpoint(path);
    EXPECT_EQ(again.ok(), version == 1) << version;
    if (!again.ok()) {
      EXPECT_NE(again.status().message().find("format version 3"),
                std::string::npos);
    }
  }
}

TEST(CheckpointTest, DamagedAndForeignCheckpointsAreRefused) {
  const MulticlassProblem problem = RandomMulticlassProblem(10, 3, 2, 3);
  SolverConfig config;
  config.set_max_passes(5);
  Solve(problem, config, "good", 2, nullptr);
  const std::string path = TempPath("good.ckpt");
  absl::StatusOr<SolverCheckpoint> good = ReadCheckpoint(path);
  ASSERT_TRUE(good.ok());
  // A changed number fails the checksum.
  SolverCheckpoint damaged = *good;
  damaged.mutable_arrays(0)->set_reals(0, 1.5);
  std::ofstream(TempPath("damaged.ckpt"), std::ios::binary)
      << damaged.SerializeAsString();
  absl::StatusOr<SolverCheckpoint> read =
      ReadCheckpoint(TempPath("damaged.ckpt"));
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("damaged.ckpt"), std::string::npos);
  EXPECT_NE(read.status().message().find("checksum"), std::string::npos);
  // A truncated file does not parse.
  std::string bytes = good->SerializeAsString();
  std::ofstream(TempPath("cut.ckpt"), std::ios::binary)
      << bytes.substr(0, bytes.size() / 2);
  EXPECT_FALSE(ReadCheckpoint(TempPath("cut.ckpt")).ok());
  // Every byte of a written file is covered, the pass count and the
  // certificate too: a flip anywhere is refused, or (only where it makes
  // the whole-file checksum's own tag unknown) reads the same checkpoint.
  std::ifstream in(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
  const std::string body = good->SerializeAsString();
  ASSERT_EQ(written.substr(0, body.size()), body);
  ASSERT_EQ(written.size(), body.size() + 9);  // a 1-byte tag, 8 of value
  for (size_t at = 0; at < written.size(); ++at) {
    std::string flipped = written;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x01);
    std::ofstream(TempPath("flipped.ckpt"), std::ios::binary) << flipped;
    absl::StatusOr<SolverCheckpoint> flipped_read =
        ReadCheckpoint(TempPath("flipped.ckpt"));
    if (!flipped_read.ok()) continue;
    EXPECT_GE(at, body.size()) << at;
    EXPECT_EQ(flipped_read->SerializeAsString().substr(0, body.size()), body);
  }
  // Another solver's state is refused by name.
  config.set_name("ssg");
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetResume(*good);
  absl::StatusOr<std::unique_ptr<Solver>> solver = CreateSolver(config);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary =
      (*solver)->Solve(problem, &monitor, &w);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("bcfw"), std::string::npos);
}

}  // namespace
}  // namespace chaintag
