#include "pipeline/checkpoints.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "pipeline/chain_training.h"
#include "pipeline/pipeline_config.pb.h"
#include "solvers/checkpoint.h"
#include "solvers/checkpoint.pb.h"
#include "solvers/monitor.h"
#include "xxhash.h"

namespace chaintag {
namespace {

// A fresh, empty directory of this test's own under $TEST_TMPDIR.
std::string TestDirectory() {
  const testing::TestInfo* test =
      testing::UnitTest::GetInstance()->current_test_info();
  const std::string directory = absl::StrCat(
      testing::TempDir(), test->test_suite_name(), ".", test->name());
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  return directory;
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

PipelineConfig ParseConfig(const std::string& text) {
  PipelineConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config))
      << text;
  return config;
}

// A run as a user writes it: what decides the result, and how it runs.
constexpr char kConfig[] = R"pb(
  name: "chunking"
  corpus {
    train: "conll2000/train.txt"
    test: "conll2000/test.txt"
    dev_fraction: 0.1
  }
  features {
    num_buckets: 1024
    templates {
      name: "w[0]"
      parts { offset: 0 attribute: 0 }
    }
  }
  model { order: 1 }
  solver { name: "bcfw" lambda: 0.01 max_passes: 20 seed: 3 num_threads: 2 }
  model_path: "runs/chunking.model"
  log_path: "runs/chunking.log"
  predictions_path: "runs/chunking.predictions"
  checkpoint { every_passes: 5 }
)pb";

// The fingerprint the pipeline gives a config (pipeline.cc does the same).
uint64_t RunFingerprint(const PipelineConfig& config) {
  return ConfigFingerprint(RecordedConfig(config));
}

TEST(CheckpointPathTest, IsBesideTheModel) {
  EXPECT_EQ(CheckpointPath("runs/chunking.model"), "runs/chunking.model.ckpt");
  EXPECT_EQ(CheckpointPath("/abs/m"), "/abs/m.ckpt");
}

TEST(ConfigFingerprintTest, IsXxh3OfTheSerialisedConfig) {
  // XXH3-64 of no bytes, the published value (the empty config serialises
  // to nothing).
  EXPECT_EQ(ConfigFingerprint(PipelineConfig()), 0x2D06800538D394C2u);
  // name: "x" serialises to 0a 01 78; eval_every: 5 to 30 05. The values
  // were computed apart from this code, with XXH3's 1-to-3-byte formula.
  PipelineConfig named;
  named.set_name("x");
  EXPECT_EQ(ConfigFingerprint(named), 0x810696E146F1D4E4u);
  EXPECT_EQ(ConfigFingerprint(named), XXH3_64bits("\x0a\x01x", 3));
  PipelineConfig evaluated;
  evaluated.set_eval_every(5);
  EXPECT_EQ(ConfigFingerprint(evaluated), 0x614106AAC6074E40u);
  // A field set to its default is still set (and fingerprinted).
  EXPECT_NE(ConfigFingerprint(evaluated), ConfigFingerprint(PipelineConfig()));
}

TEST(ConfigFingerprintTest, SameConfigSameFingerprintWhateverTheTextOrder) {
  const PipelineConfig config = ParseConfig(kConfig);
  const PipelineConfig reordered = ParseConfig(R"pb(
    checkpoint { every_passes: 5 }
    solver { seed: 3 num_threads: 2 max_passes: 20 lambda: 0.01 name: "bcfw" }
    model { order: 1 }
    predictions_path: "runs/chunking.predictions"
    log_path: "runs/chunking.log"
    model_path: "runs/chunking.model"
    features {
      templates {
        parts { attribute: 0 offset: 0 }
        name: "w[0]"
      }
      num_buckets: 1024
    }
    corpus {
      dev_fraction: 0.1
      test: "conll2000/test.txt"
      train: "conll2000/train.txt"
    }
    name: "chunking"
  )pb");
  EXPECT_EQ(ConfigFingerprint(config), ConfigFingerprint(reordered));
  EXPECT_EQ(ConfigFingerprint(config),
            ConfigFingerprint(PipelineConfig(config)));
}

// What does not decide the result is left out by RecordedConfig: threads,
// output paths, checkpointing, the clusters built from cluster_source.
TEST(ConfigFingerprintTest, IgnoresHowAndWhereTheRunIsExecuted) {
  const PipelineConfig config = ParseConfig(kConfig);
  const uint64_t fingerprint = RunFingerprint(config);

  PipelineConfig other = config;
  other.mutable_solver()->set_num_threads(16);
  EXPECT_EQ(RunFingerprint(other), fingerprint) << "num_threads";
  other.mutable_solver()->clear_num_threads();
  EXPECT_EQ(RunFingerprint(other), fingerprint) << "no num_threads";

  other = config;
  other.set_model_path("/elsewhere/m.model");
  other.set_log_path("/elsewhere/m.log");
  other.clear_predictions_path();
  EXPECT_EQ(RunFingerprint(other), fingerprint) << "output paths";

  other = config;
  other.mutable_checkpoint()->set_every_passes(1);
  other.mutable_checkpoint()->set_every_seconds(60);
  EXPECT_EQ(RunFingerprint(other), fingerprint) << "checkpointing";
  other.clear_checkpoint();
  EXPECT_EQ(RunFingerprint(other), fingerprint) << "no checkpointing";

  other = config;
  other.mutable_features()->mutable_clusters()->add_bit_string("0");
  other.mutable_features()->mutable_clusters()->add_word("the");
  EXPECT_EQ(RunFingerprint(other), fingerprint) << "built clusters";
}

TEST(ConfigFingerprintTest, ChangesWithWhatDecidesTheResult) {
  const PipelineConfig config = ParseConfig(kConfig);
  const uint64_t fingerprint = RunFingerprint(config);
  auto changed = [&config](void (*change)(PipelineConfig*)) {
    PipelineConfig other = config;
    change(&other);
    return RunFingerprint(other);
  };
  EXPECT_NE(
      changed([](PipelineConfig* c) { c->mutable_solver()->set_lambda(0.02); }),
      fingerprint);
  EXPECT_NE(
      changed([](PipelineConfig* c) { c->mutable_solver()->set_seed(4); }),
      fingerprint);
  EXPECT_NE(changed([](PipelineConfig* c) {
              c->mutable_solver()->set_max_passes(21);
            }),
            fingerprint);
  EXPECT_NE(changed([](PipelineConfig* c) {
              c->mutable_corpus()->set_train("conll2000/other.txt");
            }),
            fingerprint);
  EXPECT_NE(changed([](PipelineConfig* c) {
              c->mutable_features()->set_num_buckets(2048);
            }),
            fingerprint);
  EXPECT_NE(changed([](PipelineConfig* c) {
              c->mutable_features()->mutable_templates(0)->set_name("w0");
            }),
            fingerprint);
  EXPECT_NE(
      changed([](PipelineConfig* c) { c->mutable_model()->set_order(2); }),
      fingerprint);
}

TEST(CheckpointPlanForTest, EmptyWithoutCheckpointing) {
  for (const char* text : {"", "every_passes: 0 every_seconds: 0",
                           "every_passes: -1 every_seconds: -5"}) {
    CheckpointConfig checkpoint;
    ASSERT_TRUE(
        google::protobuf::TextFormat::ParseFromString(text, &checkpoint));
    const Monitor::CheckpointPlan plan =
        CheckpointPlanFor(checkpoint, 1234, "runs/m.model", kTrainRun);
    EXPECT_EQ(plan.path, "") << text;
    EXPECT_EQ(plan.every_passes, 0) << text;
    EXPECT_EQ(plan.every_seconds, 0) << text;
    EXPECT_EQ(plan.fingerprint, 0u) << text;
    // A plan without a path writes nothing.
    Monitor monitor;
    monitor.SetCheckpointPlan(plan);
    EXPECT_FALSE(monitor.CheckpointDue(5, 1e6)) << text;
  }
}

TEST(CheckpointPlanForTest, EveryFewPasses) {
  CheckpointConfig checkpoint;
  checkpoint.set_every_passes(5);
  const Monitor::CheckpointPlan plan =
      CheckpointPlanFor(checkpoint, 0xABCDEFu, "runs/m.model", kTrainRun);
  EXPECT_EQ(plan.path, "runs/m.model.ckpt");
  EXPECT_EQ(plan.every_passes, 5);
  EXPECT_EQ(plan.every_seconds, 0);
  EXPECT_EQ(plan.fingerprint, 0xABCDEFu);
  EXPECT_EQ(plan.run, "train");
}

TEST(CheckpointPlanForTest, EveryFewSecondsOrBoth) {
  CheckpointConfig checkpoint;
  checkpoint.set_every_seconds(600);
  Monitor::CheckpointPlan plan =
      CheckpointPlanFor(checkpoint, 42, "m.model", kTrainAndDevRun);
  EXPECT_EQ(plan.path, "m.model.ckpt");
  EXPECT_EQ(plan.every_passes, 0);
  EXPECT_EQ(plan.every_seconds, 600);
  EXPECT_EQ(plan.fingerprint, 42u);
  EXPECT_EQ(plan.run, "train_and_dev");

  checkpoint.set_every_passes(3);
  plan = CheckpointPlanFor(checkpoint, 42, "m.model", kTrainRun);
  EXPECT_EQ(plan.every_passes, 3);
  EXPECT_EQ(plan.every_seconds, 600);
  EXPECT_EQ(plan.run, "train");
}

SolverCheckpoint CheckpointOf(uint64_t fingerprint, const std::string& run) {
  SolverCheckpoint checkpoint;
  checkpoint.set_fingerprint(fingerprint);
  checkpoint.set_run(run);
  checkpoint.set_passes(7);
  return checkpoint;
}

TEST(CheckResumeCheckpointTest, AcceptsTheSameConfigAndRun) {
  EXPECT_TRUE(CheckResumeCheckpoint(CheckpointOf(99, kTrainRun), "m.ckpt", 99,
                                    kTrainRun)
                  .ok());
  EXPECT_TRUE(CheckResumeCheckpoint(CheckpointOf(99, kTrainAndDevRun), "m.ckpt",
                                    99, kTrainAndDevRun)
                  .ok());
}

TEST(CheckResumeCheckpointTest, RefusesAnotherConfig) {
  const absl::Status status = CheckResumeCheckpoint(
      CheckpointOf(99, kTrainRun), "runs/m.model.ckpt", 100, kTrainRun);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(status.message()),
            "runs/m.model.ckpt: a checkpoint of another config (its "
            "fingerprint differs from this run's: the corpus, features, model "
            "or solver settings changed); resume with the config that wrote "
            "it");
  // A checkpoint without a fingerprint (0) is another config's too.
  EXPECT_EQ(
      CheckResumeCheckpoint(SolverCheckpoint(), "c", 100, kTrainRun).code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST(CheckResumeCheckpointTest, RefusesAnotherRunNamingBoth) {
  absl::Status status = CheckResumeCheckpoint(CheckpointOf(99, kTrainAndDevRun),
                                              "m.ckpt", 99, kTrainRun);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(status.message()),
            "m.ckpt: a checkpoint of the \"train_and_dev\" run, not of "
            "\"train\"");
  status = CheckResumeCheckpoint(CheckpointOf(99, kTrainRun), "m.ckpt", 99,
                                 kTrainAndDevRun);
  EXPECT_EQ(std::string(status.message()),
            "m.ckpt: a checkpoint of the \"train\" run, not of "
            "\"train_and_dev\"");
  // Both differ: the config is what the user must fix first.
  status = CheckResumeCheckpoint(CheckpointOf(99, kTrainAndDevRun), "m.ckpt",
                                 100, kTrainRun);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(status.message()).find("another config"),
            std::string::npos);
}

// The whole round: a run checkpoints through its monitor's plan, the file
// is read back, and resuming accepts it under a config that differs only
// in threads, output paths and checkpointing, and refuses it under one
// with another λ.
TEST(CheckResumeCheckpointTest, ThroughTheFileAcceptsAnEquivalentConfig) {
  const std::string directory = TestDirectory();
  const PipelineConfig config = ParseConfig(kConfig);
  const std::string model_path = directory + "/chunking.model";
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  monitor.SetCheckpointPlan(CheckpointPlanFor(
      config.checkpoint(), RunFingerprint(config), model_path, kTrainRun));
  ASSERT_TRUE(monitor.CheckpointDue(5, 0));
  SolverCheckpoint state;
  state.set_solver("bcfw");
  state.set_passes(5);
  monitor.WriteCheckpoint(state);
  EXPECT_EQ(monitor.checkpoint_error(), "");
  EXPECT_EQ(monitor.checkpoint_passes(), 5);
  const std::string path = model_path + ".ckpt";
  absl::StatusOr<SolverCheckpoint> read = ReadCheckpoint(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->passes(), 5);

  PipelineConfig resumed = config;
  resumed.mutable_solver()->set_num_threads(8);
  resumed.set_model_path("/other/place.model");
  resumed.set_log_path("/other/place.log");
  resumed.clear_checkpoint();
  EXPECT_TRUE(
      CheckResumeCheckpoint(*read, path, RunFingerprint(resumed), kTrainRun)
          .ok());
  // The retraining run of the same config is another run.
  EXPECT_EQ(CheckResumeCheckpoint(*read, path, RunFingerprint(resumed),
                                  kTrainAndDevRun)
                .code(),
            absl::StatusCode::kFailedPrecondition);

  PipelineConfig changed = config;
  changed.mutable_solver()->set_lambda(0.1);
  const absl::Status refused =
      CheckResumeCheckpoint(*read, path, RunFingerprint(changed), kTrainRun);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(refused.message()).rfind(path + ": ", 0), 0u);
}

constexpr char kLog[] =
    "{\"pass\":1}\n"
    "{\"pass\":2}\n"
    "{\"pass\":3}\n";

TEST(StartMonitorTest, NewRunSetsThePlanAndStartsAFreshLog) {
  const std::string directory = TestDirectory();
  const std::string log = directory + "/run.log";
  WriteText(log, kLog);  // an earlier run's
  Monitor::CheckpointPlan plan;
  plan.path = directory + "/m.ckpt";
  plan.every_passes = 4;
  plan.fingerprint = 77;
  plan.run = kTrainRun;
  Monitor monitor;
  monitor.set_progress_stream(nullptr);

  ASSERT_TRUE(StartMonitor(log, plan, nullptr, &monitor).ok());

  EXPECT_EQ(monitor.checkpoint_plan().path, directory + "/m.ckpt");
  EXPECT_EQ(monitor.checkpoint_plan().every_passes, 4);
  EXPECT_EQ(monitor.checkpoint_plan().fingerprint, 77u);
  EXPECT_EQ(monitor.resume(), nullptr);
  EXPECT_EQ(monitor.records_written(), 0);
  EXPECT_EQ(Contents(log), "");
}

TEST(StartMonitorTest, ResumingKeepsTheCountedRecordsAndHandsOverTheState) {
  const std::string directory = TestDirectory();
  const std::string log = directory + "/run.log";
  // Pass 3 was logged after the checkpoint of pass 2 was written.
  WriteText(log, kLog);
  SolverCheckpoint resume = CheckpointOf(77, kTrainRun);
  resume.set_passes(2);
  resume.set_records(2);
  resume.add_arrays()->set_name("w");
  Monitor::CheckpointPlan plan;
  plan.fingerprint = 77;
  Monitor monitor;
  monitor.set_progress_stream(nullptr);

  ASSERT_TRUE(StartMonitor(log, plan, &resume, &monitor).ok());

  EXPECT_EQ(Contents(log), "{\"pass\":1}\n{\"pass\":2}\n");
  EXPECT_EQ(monitor.records_written(), 2);
  ASSERT_NE(monitor.resume(), nullptr);
  EXPECT_EQ(monitor.resume()->passes(), 2);
  EXPECT_EQ(monitor.resume()->fingerprint(), 77u);
  ASSERT_EQ(monitor.resume()->arrays_size(), 1);
  EXPECT_EQ(monitor.resume()->arrays(0).name(), "w");
  EXPECT_EQ(monitor.checkpoint_plan().fingerprint, 77u);

  // The run goes on from there: pass 3 again, as the third record.
  PassRecord record;
  record.set_pass(3);
  ASSERT_TRUE(monitor.Record(record, {}, false).ok());
  EXPECT_EQ(monitor.records_written(), 3);
  EXPECT_EQ(Contents(log), "{\"pass\":1}\n{\"pass\":2}\n{\"pass\":3}\n");
}

TEST(StartMonitorTest, ResumingWithAShorterLogIsAnError) {
  const std::string directory = TestDirectory();
  const std::string log = directory + "/run.log";
  WriteText(log, kLog);
  SolverCheckpoint resume = CheckpointOf(77, kTrainRun);
  resume.set_records(5);
  Monitor monitor;
  monitor.set_progress_stream(nullptr);

  const absl::Status status =
      StartMonitor(log, Monitor::CheckpointPlan(), &resume, &monitor);

  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(status.message()),
            log +
                ": the training log has 3 records, the checkpoint was "
                "written after 5");
  EXPECT_EQ(monitor.resume(), nullptr);
  // The log is left as it was.
  EXPECT_EQ(Contents(log), kLog);
}

TEST(StartMonitorTest, UnwritableLogIsAnError) {
  const std::string log = TestDirectory() + "/missing/run.log";
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  const absl::Status status =
      StartMonitor(log, Monitor::CheckpointPlan(), nullptr, &monitor);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            log + ": cannot open the training log for writing");
}

}  // namespace
}  // namespace chaintag
