#include "base/config_override.h"

#include <string>

#include "base/config_override_test.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

using override_test::Inner;
using override_test::Outer;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ConfigOverrideTest, AllScalarKinds) {
  Inner config;
  ASSERT_TRUE(SetFieldByPath("lambda", "1e-4", &config).ok());
  ASSERT_TRUE(SetFieldByPath("gap_check", "1", &config).ok());
  ASSERT_TRUE(SetFieldByPath("seed", "18446744073709551615", &config).ok());
  ASSERT_TRUE(SetFieldByPath("line_search", "false", &config).ok());
  ASSERT_TRUE(SetFieldByPath("name", "ssg", &config).ok());
  ASSERT_TRUE(SetFieldByPath("mp_rule", "wall_clock", &config).ok());
  ASSERT_TRUE(SetFieldByPath("ratio", "0.25", &config).ok());
  ASSERT_TRUE(SetFieldByPath("budget", "-3", &config).ok());
  ASSERT_TRUE(SetFieldByPath("count", "7", &config).ok());
  EXPECT_DOUBLE_EQ(config.lambda(), 1e-4);
  EXPECT_EQ(config.gap_check(), 1);
  EXPECT_EQ(config.seed(), 18446744073709551615ull);
  EXPECT_FALSE(config.line_search());
  EXPECT_EQ(config.name(), "ssg");
  EXPECT_EQ(config.mp_rule(), Inner::WALL_CLOCK);
  EXPECT_EQ(config.ratio(), 0.25f);
  EXPECT_EQ(config.budget(), -3);
  EXPECT_EQ(config.count(), 7u);
  EXPECT_FALSE(SetFieldByPath("seed", "-1", &config).ok());
  EXPECT_FALSE(SetFieldByPath("count", "-1", &config).ok());
  EXPECT_FALSE(SetFieldByPath("gap_check", "1.5", &config).ok());
  EXPECT_FALSE(SetFieldByPath("line_search", "maybe", &config).ok());
}

TEST(ConfigOverrideTest, DottedPathsReachNestedFields) {
  Outer config;
  ASSERT_TRUE(SetFieldByPath("solver.lambda", "3e-4", &config).ok());
  ASSERT_TRUE(ApplyAssignment("model.gap_check=12", &config).ok());
  ASSERT_TRUE(ApplyAssignment("model.scheme=iobes", &config).ok());
  ASSERT_TRUE(ApplyAssignment("solver.scheme=IOB2", &config).ok());
  ASSERT_TRUE(ApplyAssignment("solver.name=a=b.txt", &config).ok());
  ASSERT_TRUE(ApplyAssignment("name=", &config).ok());
  EXPECT_DOUBLE_EQ(config.solver().lambda(), 3e-4);
  EXPECT_EQ(config.model().gap_check(), 12);
  EXPECT_EQ(config.model().scheme(), override_test::IOBES);
  EXPECT_EQ(config.solver().scheme(), override_test::IOB2);
  EXPECT_EQ(config.solver().name(), "a=b.txt");  // split at the first '='
  EXPECT_TRUE(config.has_name());
  EXPECT_EQ(config.name(), "");
}

TEST(ConfigOverrideTest, ErrorsNameThePathAndWhatExists) {
  Outer config;
  absl::Status status = SetFieldByPath("solver.lamda", "1", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("solver.lamda"), std::string::npos);
  EXPECT_NE(status.message().find("lambda"), std::string::npos) << status;
  status = SetFieldByPath("solvr.lambda", "1", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("solvr"), std::string::npos);
  status = SetFieldByPath("solver.scheme", "bio", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("iobes"), std::string::npos) << status;
  EXPECT_FALSE(SetFieldByPath("solver", "1", &config).ok());       // a message
  EXPECT_FALSE(SetFieldByPath("runs.lambda", "1", &config).ok());  // repeated
  EXPECT_FALSE(SetFieldByPath("solver.lambda", "fast", &config).ok());
  EXPECT_FALSE(ApplyAssignment("solver.lambda", &config).ok());  // no '='
  EXPECT_FALSE(ApplyAssignment("=1", &config).ok());
  // A failed override changes no value.
  EXPECT_FALSE(config.solver().has_lambda());
}

TEST(ConfigOverrideTest, RepeatedFieldsTakeAListThatReplacesThem) {
  Outer config;
  config.mutable_solver()->add_columns(7);
  ASSERT_TRUE(ApplyAssignment("solver.columns=[0,2]", &config).ok());
  EXPECT_THAT(config.solver().columns(), ElementsAre(0, 2));
  ASSERT_TRUE(ApplyAssignment("solver.columns=[ 3 , 1 ]", &config).ok());
  EXPECT_THAT(config.solver().columns(), ElementsAre(3, 1));
  ASSERT_TRUE(ApplyAssignment("solver.paths=[a.txt,b=c.txt]", &config).ok());
  EXPECT_THAT(config.solver().paths(), ElementsAre("a.txt", "b=c.txt"));
  ASSERT_TRUE(ApplyAssignment("solver.schemes=[iobes,IOB2]", &config).ok());
  EXPECT_THAT(config.solver().schemes(),
              ElementsAre(override_test::IOBES, override_test::IOB2));
  ASSERT_TRUE(ApplyAssignment("solver.columns=[]", &config).ok());
  EXPECT_THAT(config.solver().columns(), IsEmpty());
  ASSERT_TRUE(ApplyAssignment("solver.columns=[5]", &config).ok());
  EXPECT_THAT(config.solver().columns(), ElementsAre(5));

  // Errors say what a list is; a bad element changes nothing.
  absl::Status status = ApplyAssignment("solver.columns=4", &config);
  EXPECT_EQ(status.message(),
            "solver.columns: Inner.columns is a repeated field: give its "
            "values as a list in brackets, which replaces them "
            "(columns=[v1,v2], or [] for none), not \"4\"");
  status = ApplyAssignment("solver.columns=[1,x]", &config);
  EXPECT_EQ(status.message(),
            "solver.columns: Inner.columns: \"x\" is not a 32-bit integer");
  status = ApplyAssignment("solver.columns=[1,,2]", &config);
  EXPECT_EQ(status.message(),
            "solver.columns: Inner.columns: \"\" is not a 32-bit integer");
  EXPECT_THAT(config.solver().columns(), ElementsAre(5));
  EXPECT_EQ(ApplyAssignment("runs=[1]", &config).message(),
            "Outer.runs is a list of messages, not a scalar field; set it in "
            "the config file");
}

TEST(ConfigOverrideTest, ListsSplitAtTheirCommasAreJoined) {
  // --set=name=x,solver.columns=[0,2],model.columns=[1] as Abseil splits it.
  Outer config;
  ASSERT_TRUE(ApplyAssignments({"name=x", "solver.columns=[0", "2]",
                                "model.columns=[1]", "solver.gap_check=3"},
                               &config)
                  .ok());
  EXPECT_EQ(config.name(), "x");
  EXPECT_THAT(config.solver().columns(), ElementsAre(0, 2));
  EXPECT_THAT(config.model().columns(), ElementsAre(1));
  EXPECT_EQ(config.solver().gap_check(), 3);
  EXPECT_EQ(ApplyAssignments({"solver.columns=[0", "2"}, &config).message(),
            "\"solver.columns=[0,2\": the list has no closing ']' (a list is "
            "[v1,v2,...])");
  // A piece outside a list is an assignment of its own.
  EXPECT_EQ(ApplyAssignments({"solver.lambda=1", "2]"}, &config).message(),
            "\"2]\" is not path=value (e.g. solver.lambda=1e-4)");
}

TEST(ConfigOverrideTest, FieldDefaultsReadBackAsTheirValues) {
  const auto& outer = *Outer::descriptor();
  EXPECT_EQ(FieldDefaultByPath(outer, "solver.line_search").value(), "true");
  EXPECT_EQ(FieldDefaultByPath(outer, "solver.gap_check").value(), "0");
  EXPECT_EQ(FieldDefaultByPath(outer, "solver.mp_rule").value(),
            "deterministic");
  EXPECT_EQ(FieldDefaultByPath(outer, "solver.scheme").value(),
            "scheme_unspecified");
  EXPECT_EQ(FieldDefaultByPath(outer, "name").value(), "");
  // A default set back through SetFieldByPath gives the default.
  Outer config;
  for (const char* path :
       {"solver.lambda", "solver.seed", "solver.mp_rule", "solver.ratio",
        "solver.budget", "solver.count", "solver.tolerance"}) {
    ASSERT_TRUE(
        SetFieldByPath(path, FieldDefaultByPath(outer, path).value(), &config)
            .ok())
        << path;
  }
  EXPECT_EQ(config.solver().SerializeAsString(), [] {
    Outer defaults;
    auto* solver = defaults.mutable_solver();
    solver->set_lambda(solver->lambda());
    solver->set_seed(solver->seed());
    solver->set_mp_rule(solver->mp_rule());
    solver->set_ratio(solver->ratio());
    solver->set_budget(solver->budget());
    solver->set_count(solver->count());
    solver->set_tolerance(solver->tolerance());
    return defaults.solver().SerializeAsString();
  }());
  EXPECT_EQ(config.solver().tolerance(), 0.1);  // to the last bit
  // Only single scalar fields have one.
  EXPECT_FALSE(FieldDefaultByPath(outer, "solver").ok());
  EXPECT_FALSE(FieldDefaultByPath(outer, "solver.lamda").ok());
  EXPECT_FALSE(FieldDefaultByPath(outer, "name.x").ok());
  EXPECT_FALSE(FieldDefaultByPath(outer, "runs.lambda").ok());
}

}  // namespace
}  // namespace chaintag
