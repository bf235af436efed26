#include "tools/config_flags.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

// Every table, as a tool defines it. compare_solvers' and regpath's own
// rows are defined in their mains; the tables here are the shared ones.
#define ALL_FLAGS(X)       \
  CHAINTAG_RUN_FLAGS(X)    \
  CHAINTAG_LAMBDA_FLAGS(X) \
  CHAINTAG_SEED_FLAGS(X)   \
  CHAINTAG_SOLVER_FLAGS(X) CHAINTAG_SVRG_FLAGS(X) CHAINTAG_OUTPUT_FLAGS(X)
ALL_FLAGS(CHAINTAG_DEFINE_CONFIG_FLAG)
CHAINTAG_DEFINE_SET_FLAG("Sets config fields by their dotted paths.")

namespace chaintag {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::util::MessageDifferencer;

constexpr ConfigFlag kFlags[] = {ALL_FLAGS(CHAINTAG_CONFIG_ROW)};

// The command line main() parses before the tests run.
const char* const kArgv[] = {
    "config_flags_test",
    "--max_passes=0",    // equal to nothing's default: must not be lost
    "--cache=false",     // a bool flag given as false
    "--threads=2",       // equal to the proto's default: still applied
    "--line_search",     // a bool switch, equal to the proto's default
    "--smoothing=none",  // a word
    "--step=PAIRWISE",   // an enum by name, any case
    "--model=given.model",
    "--predictions=",  // an empty path is a value, not "not given"
    // Every --set applies, lists and all.
    "--set=name=first,corpus.format.attribute_columns=[0,2]",
    "--set=corpus.test=t.txt,name=second",
};

const FieldDescriptor* FindField(const std::string& path) {
  const Descriptor* message = PipelineConfig::descriptor();
  const FieldDescriptor* field = nullptr;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (message == nullptr) return nullptr;
    field = message->FindFieldByName(std::string(part));
    if (field == nullptr) return nullptr;
    message = field->message_type();
  }
  return field;
}

// Help is printed to any terminal: plain ASCII, Greek letters in words.
bool IsAscii(absl::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// The flag type a field of this kind needs (enums are named by strings).
template <typename T>
FieldDescriptor::CppType FlagCppType() {
  if (std::is_same_v<T, int32_t>) return FieldDescriptor::CPPTYPE_INT32;
  if (std::is_same_v<T, int64_t>) return FieldDescriptor::CPPTYPE_INT64;
  if (std::is_same_v<T, uint64_t>) return FieldDescriptor::CPPTYPE_UINT64;
  if (std::is_same_v<T, double>) return FieldDescriptor::CPPTYPE_DOUBLE;
  if (std::is_same_v<T, bool>) return FieldDescriptor::CPPTYPE_BOOL;
  return FieldDescriptor::CPPTYPE_STRING;
}

TEST(ConfigFlagsTest, EveryRowNamesAScalarFieldOfItsTypeAndItsWordsExist) {
  std::map<std::string, int> names;
  int rows = 0;
#define CHECK_ROW(type, flag, path, words, help)                           \
  {                                                                        \
    ++rows;                                                                \
    EXPECT_EQ(++names[#flag], 1) << #flag " twice";                        \
    const FieldDescriptor* field = FindField(path);                        \
    ASSERT_NE(field, nullptr) << #flag " -> " path;                        \
    EXPECT_FALSE(field->is_repeated()) << path;                            \
    EXPECT_TRUE(IsAscii(help)) << #flag ": " help;                         \
    const FieldDescriptor::CppType want =                                  \
        field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM                 \
            ? FieldDescriptor::CPPTYPE_STRING                              \
            : field->cpp_type();                                           \
    EXPECT_EQ(FlagCppType<type>(), want)                                   \
        << #flag " is not of its field's type";                            \
    for (absl::string_view pair :                                          \
         absl::StrSplit(words, ',', absl::SkipEmpty())) {                  \
      const std::vector<std::string> word = absl::StrSplit(pair, ':');     \
      ASSERT_EQ(word.size(), 2u) << pair;                                  \
      ASSERT_EQ(field->cpp_type(), FieldDescriptor::CPPTYPE_ENUM) << pair; \
      EXPECT_NE(field->enum_type()->FindValueByName(word[1]), nullptr)     \
          << #flag ": " << pair;                                           \
    }                                                                      \
  }
  ALL_FLAGS(CHECK_ROW)
#undef CHECK_ROW
  EXPECT_EQ(rows, static_cast<int>(std::size(kFlags)));
}

TEST(ConfigFlagsTest, DefaultsAreTheProtosDefaults) {
  EXPECT_EQ(ConfigFieldDefault<int32_t>("solver.max_passes"), 100);
  EXPECT_EQ(ConfigFieldDefault<int32_t>("solver.gap_check"), 10);
  EXPECT_EQ(ConfigFieldDefault<uint64_t>("solver.seed"), 1u);
  EXPECT_EQ(ConfigFieldDefault<uint64_t>("features.num_buckets"), 1u << 20);
  EXPECT_EQ(ConfigFieldDefault<bool>("solver.line_search"), true);
  EXPECT_EQ(ConfigFieldDefault<double>("solver.svrg.smoothing_mu"), 1.0);
  EXPECT_EQ(ConfigFieldDefault<std::string>("solver.sampling"), "uniform");
  EXPECT_EQ(ConfigFieldDefault<std::string>("solver.svrg.smoothing"),
            "l2_top_k");
  EXPECT_EQ(ConfigFieldDefault<int32_t>("solver.no_such_field"), 0);
  // Flags that were not given keep them.
  EXPECT_EQ(absl::GetFlag(FLAGS_gap_check), 10);
  EXPECT_EQ(absl::GetFlag(FLAGS_sampling), "uniform");
  EXPECT_EQ(absl::GetFlag(FLAGS_line_search), true);
  // --help shows them.
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag("gap_check");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(flag->DefaultValue(), "10");
  EXPECT_EQ(flag->Help(),
            "Passes between exact duality gaps. [config: solver.gap_check]");
  flag = absl::FindCommandLineFlag("sampling");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(flag->DefaultValue(), "uniform");
}

TEST(ConfigFlagsTest, WhatWasGivenIsKnownWhateverItsValue) {
  EXPECT_TRUE(FlagWasGiven("max_passes"));
  EXPECT_TRUE(FlagWasGiven("threads"));
  EXPECT_TRUE(FlagWasGiven("cache"));
  EXPECT_TRUE(FlagWasGiven("line_search"));
  EXPECT_TRUE(FlagWasGiven("predictions"));
  EXPECT_FALSE(FlagWasGiven("gap_check"));
  EXPECT_FALSE(FlagWasGiven("lambda"));
  EXPECT_FALSE(FlagWasGiven("no_such_flag"));
}

TEST(ConfigFlagsTest, SettingAFlagInCodeIsNotGivingIt) {
  absl::FlagSaver saver;
  absl::SetFlag(&FLAGS_gap_check, 3);
  EXPECT_FALSE(FlagWasGiven("gap_check"));
}

TEST(ConfigFlagsTest, GivenFlagsAreAppliedWhateverTheirValueAndNoOthers) {
  // A config whose fields differ from what the command line gives and from
  // the proto's defaults, and some fields of flags not given.
  PipelineConfig config;
  SolverConfig* solver = config.mutable_solver();
  solver->set_max_passes(50);
  solver->set_num_threads(7);
  solver->set_line_search(false);
  solver->set_gap_check(7);
  solver->set_weighted_averaging(false);
  solver->set_sampling(SolverConfig::GAP);
  solver->mutable_bcfw()->set_cache(true);
  config.set_predictions_path("p.txt");
  config.set_eval_every(3);
  ASSERT_EQ(ConfigFieldDefault<int32_t>("solver.num_threads"), 2);
  ASSERT_TRUE(ConfigFieldDefault<bool>("solver.line_search"));

  PipelineConfig expected = config;
  SolverConfig* want = expected.mutable_solver();
  want->set_max_passes(0);
  want->set_num_threads(2);
  want->set_line_search(true);
  want->mutable_bcfw()->set_cache(false);
  want->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  want->mutable_svrg()->set_smoothing(SolverConfig::NO_SMOOTHING);
  expected.set_model_path("given.model");
  expected.set_predictions_path("");

  ASSERT_TRUE(ApplyGivenConfigFlags(kFlags, &config).ok());
  EXPECT_EQ(solver->max_passes(), 0);
  EXPECT_EQ(solver->num_threads(), 2);  // the default, given
  EXPECT_TRUE(solver->line_search());   // the default, given as a switch
  EXPECT_FALSE(solver->bcfw().cache());
  EXPECT_TRUE(config.has_predictions_path());
  EXPECT_EQ(config.predictions_path(), "");
  // Not given: the config's values, and no field set that it left unset.
  EXPECT_EQ(solver->gap_check(), 7);
  EXPECT_FALSE(solver->weighted_averaging());
  EXPECT_EQ(solver->sampling(), SolverConfig::GAP);
  EXPECT_EQ(config.eval_every(), 3);
  EXPECT_FALSE(solver->has_lambda());
  EXPECT_FALSE(solver->has_seed());
  EXPECT_FALSE(config.has_log_path());
  std::string differences;
  MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differencer.Compare(expected, config)) << differences;

  // On an empty config, exactly the given fields are set.
  PipelineConfig empty;
  ASSERT_TRUE(ApplyGivenConfigFlags(kFlags, &empty).ok());
  PipelineConfig given;
  given.mutable_solver()->set_max_passes(0);
  given.mutable_solver()->set_num_threads(2);
  given.mutable_solver()->set_line_search(true);
  given.mutable_solver()->mutable_bcfw()->set_cache(false);
  given.mutable_solver()->mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  given.mutable_solver()->mutable_svrg()->set_smoothing(
      SolverConfig::NO_SMOOTHING);
  given.set_model_path("given.model");
  given.set_predictions_path("");
  differences.clear();
  MessageDifferencer exact;
  exact.ReportDifferencesToString(&differences);
  EXPECT_TRUE(exact.Compare(given, empty)) << differences;
}

std::string WriteConfig(const std::string& text) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/config.textproto";
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigFlagsTest, GivenFlagsWinOverTheFileAndSetWinsOverThem) {
  const std::string path = WriteConfig(R"pb(
    name: "c"
    solver {
      max_passes: 50
      gap_check: 7
      num_threads: 1
      sampling: GAP
      bcfw { cache: true step: FW }
      svrg { smoothing: ENTROPY }
    }
  )pb");
  absl::StatusOr<PipelineConfig> config =
      LoadConfig(kFlags, path, {"solver.num_threads=4"});
  ASSERT_TRUE(config.ok()) << config.status();
  const SolverConfig& solver = config->solver();
  EXPECT_EQ(solver.max_passes(), 0);  // honoured, never taken for "unset"
  EXPECT_FALSE(solver.bcfw().cache());
  EXPECT_EQ(solver.bcfw().step(), SolverConfig::PAIRWISE);
  EXPECT_EQ(solver.svrg().smoothing(), SolverConfig::NO_SMOOTHING);
  EXPECT_EQ(config->model_path(), "given.model");
  EXPECT_EQ(solver.num_threads(), 4);  // --set after --threads=2
  // Not given: the file's values, not the flags' defaults.
  EXPECT_EQ(solver.gap_check(), 7);
  EXPECT_EQ(solver.sampling(), SolverConfig::GAP);
  EXPECT_FALSE(solver.has_lambda());
}

TEST(ConfigFlagsTest, EverySetFlagAppliesInOrder) {
  // As Abseil splits them, at every comma.
  EXPECT_EQ(GivenSetAssignments(),
            std::vector<std::string>(
                {"name=first", "corpus.format.attribute_columns=[0", "2]",
                 "corpus.test=t.txt", "name=second"}));
  absl::StatusOr<PipelineConfig> config =
      LoadConfig(kFlags, WriteConfig("corpus { format { label_column: 3 } }"),
                 GivenSetAssignments());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->name(), "second");
  EXPECT_EQ(config->corpus().test(), "t.txt");
  EXPECT_EQ(config->corpus().format().label_column(), 3);
  ASSERT_EQ(config->corpus().format().attribute_columns_size(), 2);
  EXPECT_EQ(config->corpus().format().attribute_columns(1), 2);
  // Abseil's own value is the last flag's.
  EXPECT_EQ(absl::GetFlag(FLAGS_set),
            std::vector<std::string>({"corpus.test=t.txt", "name=second"}));
  // A list left open is the command line's error.
  EXPECT_EQ(LoadConfig(kFlags, WriteConfig(""),
                       {"corpus.format.attribute_columns=[0"})
                .status(),
            absl::InvalidArgumentError(
                "\"corpus.format.attribute_columns=[0\": the list has no "
                "closing ']' (a list is [v1,v2,...])"));
}

TEST(ConfigFlagsTest, LambdaGivenOneWayReplacesTheConfigsOtherWays) {
  const std::string path = WriteConfig("solver { c: 0.1 l1: 0.5 }");
  absl::StatusOr<PipelineConfig> config =
      LoadConfig({}, path, {"solver.lambda=0.001", "solver.c1=2"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_DOUBLE_EQ(config->solver().lambda(), 0.001);
  EXPECT_FALSE(config->solver().has_c());
  EXPECT_DOUBLE_EQ(config->solver().c1(), 2);
  EXPECT_FALSE(config->solver().has_l1());
  config = LoadConfig({}, path, {"solver.c2=1"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_DOUBLE_EQ(config->solver().c2(), 1);
  EXPECT_FALSE(config->solver().has_c());
  EXPECT_DOUBLE_EQ(config->solver().l1(), 0.5);
  // Nothing given: the file's form stays.
  config = LoadConfig({}, path, {});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_DOUBLE_EQ(config->solver().c(), 0.1);
  EXPECT_FALSE(config->solver().has_lambda());
}

TEST(ConfigFlagsTest, ToolDefaultsComeBeforeTheFlags) {
  const std::string path = WriteConfig("solver { max_passes: 50 }");
  absl::StatusOr<PipelineConfig> config =
      LoadConfig(kFlags, path, {}, [](PipelineConfig* config) {
        config->mutable_solver()->set_max_passes(9);
        config->mutable_solver()->set_gap_check(3);
        return absl::OkStatus();
      });
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->solver().max_passes(), 0);
  EXPECT_EQ(config->solver().gap_check(), 3);
}

TEST(ConfigFlagsTest, ErrorsSayWhoIsAtFault) {
  const std::string path = WriteConfig("solver { max_passes: 50 }");
  absl::StatusOr<PipelineConfig> config =
      LoadConfig(kFlags, path, {"solver.lamda=1"});
  EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << config.status();
  EXPECT_NE(config.status().message().find("lamda"), std::string::npos);
  config = LoadConfig(kFlags, "", {});
  EXPECT_TRUE(absl::IsInvalidArgument(config.status()));
  EXPECT_NE(config.status().message().find("--config"), std::string::npos);
  config = LoadConfig(kFlags, path + ".missing", {});
  EXPECT_TRUE(absl::IsNotFound(config.status())) << config.status();
  config = LoadConfig(kFlags, WriteConfig("solver { max_passes: many }"), {});
  EXPECT_TRUE(absl::IsDataLoss(config.status())) << config.status();
  EXPECT_NE(config.status().message().find("config.textproto:1:"),
            std::string::npos)
      << config.status();
}

TEST(ConfigFlagsTest, TemplateFileIsExpandedAgainstTheConfigsDirectory) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/cfg";
  ASSERT_EQ(system(("mkdir -p " + dir + "/t").c_str()), 0);
  std::ofstream(dir + "/t/c.template") << "U00:%x[0,0]\nB\nB01:%x[-1,1]\n";
  const std::string path = dir + "/c.textproto";
  std::ofstream(path) << R"pb(
    features {
      templates { name: "first" }
      template_file: "t/c.template"
    }
  )pb";
  absl::StatusOr<PipelineConfig> config = LoadConfig(kFlags, path, {});
  ASSERT_TRUE(config.ok()) << config.status();
  const FeatureConfig& features = config->features();
  EXPECT_FALSE(features.has_template_file());
  ASSERT_EQ(features.templates_size(), 2);
  EXPECT_EQ(features.templates(0).name(), "first");
  EXPECT_EQ(features.templates(1).name(), "U00:%x[0,0]");
  ASSERT_EQ(features.pair_templates_size(), 1);
  EXPECT_EQ(features.pair_templates(0).parts(0).attribute(), 1);
  // A file missing or bad: the error names it (and the line).
  std::ofstream(dir + "/t/c.template") << "U00:%x[0,0\n";
  config = LoadConfig(kFlags, path, {});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("/t/c.template:1:"),
            std::string::npos)
      << config.status();
  // --set names a file against the caller's directory, not the config's.
  config = LoadConfig(kFlags, path, {"features.template_file=t/c.template"});
  EXPECT_TRUE(absl::IsNotFound(config.status())) << config.status();
}

TEST(ConfigFlagsTest, RunSpecKeysAreFlagNamesOrPaths) {
  SolverConfig solver;
  ASSERT_TRUE(SetSolverOption("step", "pairwise", &solver).ok());
  ASSERT_TRUE(SetSolverOption("smoothing", "none", &solver).ok());
  ASSERT_TRUE(SetSolverOption("lr", "0.02", &solver).ok());
  ASSERT_TRUE(SetSolverOption("bcfw.cache_factor", "0.5", &solver).ok());
  EXPECT_EQ(solver.bcfw().step(), SolverConfig::PAIRWISE);
  EXPECT_EQ(solver.svrg().smoothing(), SolverConfig::NO_SMOOTHING);
  EXPECT_EQ(solver.svrg().learning_rate(), 0.02);
  EXPECT_EQ(solver.bcfw().cache_factor(), 0.5);
  // A flag outside SolverConfig is not a run spec key.
  EXPECT_FALSE(SetSolverOption("model", "x", &solver).ok());
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::vector<char*> args;
  for (const char* arg : chaintag::kArgv)
    args.push_back(const_cast<char*>(arg));
  chaintag::ParseToolCommandLine(static_cast<int>(args.size()), args.data());
  return RUN_ALL_TESTS();
}
