#include "pipeline/flag_aliases.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// The field at `path`, or nullptr.
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

TEST(FlagAliasesTest, EveryAliasNamesAScalarFieldAndItsWordsExist) {
  std::map<std::string, int> flags;
  for (const FlagAlias& alias : PipelineFlagAliases()) {
    EXPECT_EQ(++flags[alias.flag], 1) << alias.flag << " twice";
    const FieldDescriptor* field = FindField(alias.path);
    ASSERT_NE(field, nullptr) << alias.flag << " -> " << alias.path;
    EXPECT_FALSE(field->is_repeated()) << alias.path;
    EXPECT_NE(field->cpp_type(), FieldDescriptor::CPPTYPE_MESSAGE)
        << alias.path;
    for (absl::string_view pair :
         absl::StrSplit(alias.words, ',', absl::SkipEmpty())) {
      const std::vector<std::string> word = absl::StrSplit(pair, ':');
      ASSERT_EQ(word.size(), 2u) << pair;
      ASSERT_EQ(field->cpp_type(), FieldDescriptor::CPPTYPE_ENUM) << pair;
      EXPECT_NE(field->enum_type()->FindValueByName(word[1]), nullptr)
          << alias.flag << ": " << pair;
    }
  }
}

TEST(FlagAliasesTest, GivenFlagsSetTheirFieldsAndWordsTranslate) {
  const std::map<std::string, std::string> values = {
      {"lambda", "3e-4"},
      {"smoothing", "none"},
      {"decay_q", "reference_code"},
      {"casimir_variant", "adapt"},
      {"sampling", "gap"},
      {"train_scheme", "iobes"},
      {"threads", "3"},
      {"lr", "0.05"},
      {"model", "out.model"},
      {"cache", "true"},
  };
  PipelineConfig config;
  ASSERT_TRUE(ApplyFlagAliases(
                  PipelineFlagAliases(),
                  [&](absl::string_view flag) -> std::optional<std::string> {
                    auto it = values.find(std::string(flag));
                    if (it == values.end()) return std::nullopt;
                    return it->second;
                  },
                  &config)
                  .ok());
  EXPECT_DOUBLE_EQ(config.solver().lambda(), 3e-4);
  EXPECT_EQ(config.solver().svrg().smoothing(), SolverConfig::NO_SMOOTHING);
  EXPECT_EQ(config.solver().casimir().decay_q(),
            SolverConfig::Q_REFERENCE_CODE);
  EXPECT_EQ(config.solver().casimir().variant(), SolverConfig::CASIMIR_ADAPT);
  EXPECT_EQ(config.solver().sampling(), SolverConfig::GAP);
  EXPECT_EQ(config.model().train_scheme(), IOBES);
  EXPECT_EQ(config.solver().num_threads(), 3);
  EXPECT_DOUBLE_EQ(config.solver().svrg().learning_rate(), 0.05);
  EXPECT_EQ(config.model_path(), "out.model");
  EXPECT_TRUE(config.solver().bcfw().cache());
  // Flags not given set nothing.
  EXPECT_FALSE(config.solver().bcfw().has_step());
  EXPECT_FALSE(config.has_eval_every());
}

TEST(FlagAliasesTest, ErrorsNameTheFlag) {
  PipelineConfig config;
  absl::Status status = ApplyFlagAliases(
      PipelineFlagAliases(),
      [](absl::string_view flag) -> std::optional<std::string> {
        if (flag == "step") return "sideways";
        return std::nullopt;
      },
      &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("--step"), std::string::npos) << status;
  EXPECT_NE(status.message().find("pairwise"), std::string::npos) << status;
}

TEST(FlagAliasesTest, SolverOptionsByFlagNameOrPath) {
  SolverConfig config;
  ASSERT_TRUE(SetSolverOption("step", "pairwise", &config).ok());
  ASSERT_TRUE(SetSolverOption("lr", "0.02", &config).ok());
  ASSERT_TRUE(SetSolverOption("smoothing", "none", &config).ok());
  ASSERT_TRUE(SetSolverOption("mp_max_planes", "7", &config).ok());
  ASSERT_TRUE(SetSolverOption("bcfw.cache_factor", "0.5", &config).ok());
  ASSERT_TRUE(
      SetSolverOption("casimir.variant", "casimir_adapt", &config).ok());
  ASSERT_TRUE(SetSolverOption("gap_check", "3", &config).ok());
  EXPECT_EQ(config.bcfw().step(), SolverConfig::PAIRWISE);
  EXPECT_DOUBLE_EQ(config.svrg().learning_rate(), 0.02);
  EXPECT_EQ(config.svrg().smoothing(), SolverConfig::NO_SMOOTHING);
  EXPECT_EQ(config.mp_bcfw().max_planes(), 7);
  EXPECT_DOUBLE_EQ(config.bcfw().cache_factor(), 0.5);
  EXPECT_EQ(config.casimir().variant(), SolverConfig::CASIMIR_ADAPT);
  EXPECT_EQ(config.gap_check(), 3);
  // Flags outside the solver section are not solver options.
  EXPECT_FALSE(SetSolverOption("num_buckets", "8", &config).ok());
  absl::Status status = SetSolverOption("bcfw.stepp", "fw", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("step"), std::string::npos) << status;
}

}  // namespace
}  // namespace chaintag
