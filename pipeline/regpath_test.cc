#include "pipeline/regpath.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

PathPoint Point(int index, double lambda, double cumulative_passes,
                double seconds) {
  PathPoint point;
  point.index = index;
  point.lambda = lambda;
  point.lambda_end = lambda / 2;
  point.cumulative_passes = cumulative_passes;
  point.seconds = seconds;
  point.stop_reason = "gap_tolerance";
  return point;
}

// A path of two breakpoints and grids of three values.
RegpathRun HandMadeRun() {
  RegpathRun run;
  run.name = "tiny";
  LambdaPath& path = run.result.path;
  path.score_name = "dev_F1";
  path.best = 1;
  path.points = {Point(0, 8, 3, 0.5), Point(1, 2, 10, 1.5)};
  path.scores = {50, 75};
  run.grid_cold = {Point(0, 2, 10, 1), Point(1, 1, 25, 2),
                   Point(2, 0.5, 40, 3)};
  run.grid_warm = {Point(0, 2, 10, 1), Point(1, 1, 12, 1.25),
                   Point(2, 0.5, 15, 1.5)};
  return run;
}

TEST(RegpathReportTest, GridPassesAreMultiplesOfThePaths) {
  PipelineConfig config;
  config.mutable_solver()->mutable_path()->set_epsilon(0.1);
  RegpathOptions regpath;
  regpath.grid_high = 1;
  regpath.grid_low = -1;
  EXPECT_EQ(FormatGridComparison(HandMadeRun(), config, regpath),
            "\neffective passes over lambda in [2^-1, 2^1] (epsilon 0.1):\n"
            "  path (EPSILON_APPROXIMATE, 2 breakpoints)       10.0      1.5s\n"
            "  grid, cold starts (3 values)       40.0      3.0s   4.00x the "
            "path\n"
            "  grid, warm starts (3 values)       15.0      1.5s   1.50x the "
            "path\n");
}

TEST(RegpathReportTest, RecordHoldsThePathAndBothGrids) {
  const RegpathRun run = HandMadeRun();
  const RegpathRecord record = ToRegpathRecord(run);
  EXPECT_EQ(record.path().score_name(), "dev_F1");
  EXPECT_EQ(record.path().best(), 1);
  ASSERT_EQ(record.path().points_size(), 2);
  EXPECT_EQ(record.path().points(1).score(), 75);
  ASSERT_EQ(record.grid_cold_size(), 3);
  ASSERT_EQ(record.grid_warm_size(), 3);
  EXPECT_EQ(record.grid_cold(2).cumulative_passes(), 40);
  EXPECT_EQ(record.grid_warm(1).lambda(), 1);
  EXPECT_FALSE(record.grid_warm(1).has_score());
}

// A small CoNLL corpus: the same two sentences again and again.
void WriteCorpus(const std::string& name, int copies) {
  std::ofstream out(TmpDir() + "/" + name);
  for (int i = 0; i < copies; ++i) {
    out << "John B-PER\nmet O\nMary B-PER\n\n"
        << "Acme B-ORG\nCorp I-ORG\ngrew O\n\n";
  }
}

std::string ReadAll(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    text.append(buffer, n);
  }
  return text;
}

TEST(RunRegpathTest, RunsThePathAndTheGridAndWritesTheRecord) {
  WriteCorpus("regpath_train.txt", 20);
  WriteCorpus("regpath_dev.txt", 3);
  PipelineConfig config;
  config.set_name("tiny");
  config.set_lambda("path");
  CorpusConfig* corpus = config.mutable_corpus();
  corpus->set_train("regpath_train.txt");
  corpus->set_dev("regpath_dev.txt");
  corpus->set_test("regpath_dev.txt");
  corpus->mutable_format()->add_attribute_columns(0);
  corpus->mutable_format()->set_label_column(1);
  corpus->mutable_format()->set_tag_scheme(IOB2);
  config.mutable_features()->set_num_buckets(256);
  TemplatePart* part = config.mutable_features()->add_templates()->add_parts();
  part->set_attribute(0);
  SolverConfig* solver = config.mutable_solver();
  solver->set_name("bcfw");
  solver->set_max_passes(200);
  solver->mutable_path()->set_epsilon(0.5);
  solver->mutable_path()->set_lambda_min(0.25);
  PipelineOptions options;
  options.corpora_root = TmpDir();
  options.output_dir = TmpDir();
  options.progress = nullptr;
  RegpathOptions regpath;
  regpath.grid_high = 1;
  regpath.grid_low = -2;
  regpath.report = std::tmpfile();
  ASSERT_NE(regpath.report, nullptr);

  absl::StatusOr<RegpathRun> run = RunRegpath(config, options, regpath);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string report = ReadAll(regpath.report);
  std::fclose(regpath.report);
  EXPECT_EQ(run->name, "tiny");
  EXPECT_EQ(run->result.model_path, TmpDir() + "/tiny.regpath.model");
  EXPECT_EQ(run->result.log_path, TmpDir() + "/tiny.regpath.log.json");
  EXPECT_TRUE(run->result.train_only_model_path.empty());
  EXPECT_EQ(run->grid_cold.size(), 4u);
  EXPECT_EQ(run->grid_warm.size(), 4u);
  EXPECT_THAT(report, HasSubstr("<- chosen"));
  EXPECT_THAT(report, HasSubstr("chosen: lambda "));
  EXPECT_THAT(report, HasSubstr(", test F1 "));
  EXPECT_THAT(report, HasSubstr("grid, warm starts (4 values)"));

  // The JSON file is the run's record.
  EXPECT_EQ(run->json_path, TmpDir() + "/tiny.regpath.json");
  std::ifstream in(run->json_path);
  std::stringstream json;
  json << in.rdbuf();
  RegpathRecord parsed;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(json.str(), &parsed).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      parsed, ToRegpathRecord(*run)));
  EXPECT_EQ(parsed.path().points_size(),
            static_cast<int>(run->result.path.points.size()));
}

}  // namespace
}  // namespace chaintag
