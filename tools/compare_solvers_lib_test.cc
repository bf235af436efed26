#include "tools/compare_solvers_lib.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

PassRecord Record(int pass, double effective_passes, double seconds, double gap,
                  bool exact) {
  PassRecord r;
  r.set_solver("bcfw");
  r.set_pass(pass);
  r.set_effective_passes(effective_passes);
  r.set_seconds(seconds);
  r.set_gap(gap);
  r.set_gap_exact(exact);
  if (exact) {
    r.set_primal(1 + gap);
    r.set_dual(1);
  }
  return r;
}

TEST(ParseRunSpecTest, NameOnly) {
  absl::StatusOr<RunSpec> spec = ParseRunSpec(" fw ");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->solver_name, "fw");
  EXPECT_EQ(spec->label, "fw");
  EXPECT_TRUE(spec->fields.empty());
}

TEST(ParseRunSpecTest, FieldsAndLabel) {
  absl::StatusOr<RunSpec> spec =
      ParseRunSpec("bcfw:sampling=gap, step=pairwise,cache=true,label=BCPFW");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->solver_name, "bcfw");
  EXPECT_EQ(spec->label, "BCPFW");
  ASSERT_EQ(spec->fields.size(), 3u);
  EXPECT_EQ(spec->fields[1].first, "step");
  EXPECT_EQ(spec->fields[1].second, "pairwise");
}

TEST(ParseRunSpecTest, Malformed) {
  EXPECT_FALSE(ParseRunSpec("").ok());
  EXPECT_FALSE(ParseRunSpec(":sampling=gap").ok());
  EXPECT_FALSE(ParseRunSpec("bcfw:sampling").ok());
  EXPECT_FALSE(ParseRunSpec("bcfw:=gap").ok());
  EXPECT_FALSE(ParseRunSpec("bcfw:step=fw,step=away").ok());
  EXPECT_FALSE(ParseRunSpec("bcfw:label=").ok());
}

TEST(ParseRunSpecsTest, SeveralAppliedToSolverConfig) {
  absl::StatusOr<std::vector<RunSpec>> specs = ParseRunSpecs(
      "bcfw:sampling=uniform;bcfw:sampling=GAP,step=pairwise,cache=true,"
      "cache_factor=0.5,max_cache_size=20;fw;");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 3u);
  SolverConfig config;
  ASSERT_TRUE(ApplyRunSpec((*specs)[1], &config).ok());
  EXPECT_EQ(config.name(), "bcfw");
  EXPECT_EQ(config.sampling(), SolverConfig::GAP);
  EXPECT_EQ(config.bcfw().step(), SolverConfig::PAIRWISE);
  EXPECT_TRUE(config.bcfw().cache());
  EXPECT_DOUBLE_EQ(config.bcfw().cache_factor(), 0.5);
  EXPECT_EQ(config.bcfw().max_cache_size(), 20);
  EXPECT_EQ((*specs)[2].solver_name, "fw");
}

TEST(ParseRunSpecsTest, ErrorsNameTheProblem) {
  absl::Status status = ParseRunSpecs("bcfw:samplng=gap").status();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no field \"samplng\""), std::string::npos)
      << status;
  EXPECT_NE(status.message().find("sampling"), std::string::npos);

  status = ParseRunSpecs("bcfw:sampling=often").status();
  EXPECT_NE(status.message().find("uniform, permutation, gap"),
            std::string::npos)
      << status;
  EXPECT_FALSE(ParseRunSpecs("bcfw:max_passes=ten").ok());
  EXPECT_FALSE(ParseRunSpecs("bcfw:max_passes=1e10").ok());
  EXPECT_FALSE(ParseRunSpecs("bcfw:cache=maybe").ok());
  EXPECT_FALSE(ParseRunSpecs("bcfw:lambda=").ok());
  EXPECT_FALSE(ParseRunSpecs("bcfw:seed=3").ok());
  EXPECT_FALSE(ParseRunSpecs("bcfw:name=fw").ok());
  EXPECT_FALSE(ParseRunSpecs("bcfw;bcfw").ok());                // same label
  EXPECT_FALSE(ParseRunSpecs("a:label=x y;b:label=x:y").ok());  // same stem
  EXPECT_FALSE(ParseRunSpecs(" ; ").ok());
}

TEST(FileStemTest, SafeCharacters) {
  EXPECT_EQ(FileStem("bcfw:sampling=gap,step=pairwise"),
            "bcfw_sampling_gap_step_pairwise");
  EXPECT_EQ(FileStem(".hidden"), "run.hidden");
  EXPECT_EQ(FileStem("a/b"), "a_b");
}

TEST(ParsePassLogTest, MonitorLines) {
  const std::string log =
      "{\"solver\":\"bcfw\",\"pass\":1,\"effective_passes\":1,"
      "\"seconds\":0.5,\"oracle_calls\":\"100\",\"gap\":0.2,"
      "\"gap_exact\":false}\n"
      "\n"
      "{\"solver\":\"bcfw\",\"pass\":2,\"effective_passes\":2.01,"
      "\"seconds\":1.1,\"primal\":1.5,\"dual\":1.4,\"gap\":0.1,"
      "\"gap_exact\":true,\"eval_score\":91.5,\"eval_metric\":\"F1\"}\n";
  absl::StatusOr<std::vector<PassRecord>> records =
      ParsePassLog(log, "test.jsonl");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].oracle_calls(), 100);
  EXPECT_TRUE((*records)[1].gap_exact());
  EXPECT_EQ((*records)[1].eval_metric(), "F1");

  absl::Status bad = ParsePassLog("{\"pass\":1}\n{\"pas\":2}\n", "x").status();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("x:2"), std::string::npos) << bad;
}

TEST(MedianTest, OddEvenInfinite) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isinf(Median({1, INFINITY})));
  EXPECT_DOUBLE_EQ(Median({1, 2, INFINITY}), 2);
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST(AggregateOverSeedsTest, MedianAndRangeByPass) {
  std::vector<std::vector<PassRecord>> seeds = {
      {Record(1, 1.0, 1.0, 0.5, false), Record(2, 2.0, 2.0, 0.10, true)},
      {Record(1, 1.0, 3.0, 0.7, false), Record(2, 2.2, 4.0, 0.30, true)},
      {Record(1, 1.0, 2.0, 0.6, false), Record(2, 2.1, 9.0, 0.20, true),
       Record(3, 3.0, 10.0, 0.05, true)},
  };
  std::vector<AggregatePoint> exact =
      AggregateOverSeeds(seeds, XValue::kEffectivePasses, YValue::kExactGap);
  ASSERT_EQ(exact.size(), 2u);
  EXPECT_EQ(exact[0].pass, 2);
  EXPECT_EQ(exact[0].num_seeds, 3);
  EXPECT_DOUBLE_EQ(exact[0].x_median, 2.1);
  EXPECT_DOUBLE_EQ(exact[0].x_min, 2.0);
  EXPECT_DOUBLE_EQ(exact[0].x_max, 2.2);
  EXPECT_DOUBLE_EQ(exact[0].y_median, 0.2);
  EXPECT_DOUBLE_EQ(exact[0].y_min, 0.1);
  EXPECT_DOUBLE_EQ(exact[0].y_max, 0.3);
  EXPECT_EQ(exact[1].pass, 3);
  EXPECT_EQ(exact[1].num_seeds, 1);
  EXPECT_DOUBLE_EQ(exact[1].y_median, 0.05);

  std::vector<AggregatePoint> estimated =
      AggregateOverSeeds(seeds, XValue::kSeconds, YValue::kEstimatedGap);
  ASSERT_EQ(estimated.size(), 1u);
  EXPECT_EQ(estimated[0].pass, 1);
  EXPECT_DOUBLE_EQ(estimated[0].x_median, 2.0);
  EXPECT_DOUBLE_EQ(estimated[0].y_median, 0.6);
  EXPECT_DOUBLE_EQ(estimated[0].y_min, 0.5);
  EXPECT_DOUBLE_EQ(estimated[0].y_max, 0.7);

  EXPECT_TRUE(
      AggregateOverSeeds(seeds, XValue::kSeconds, YValue::kEvalScore).empty());
  EXPECT_TRUE(
      AggregateOverSeeds({}, XValue::kSeconds, YValue::kExactGap).empty());
}

TEST(AggregateOverSeedsTest, LaterRecordOfAPassWins) {
  std::vector<std::vector<PassRecord>> seeds = {
      {Record(5, 5.0, 1.0, 0.5, true), Record(5, 5.0, 1.5, 0.4, true)}};
  std::vector<AggregatePoint> exact =
      AggregateOverSeeds(seeds, XValue::kSeconds, YValue::kExactGap);
  ASSERT_EQ(exact.size(), 1u);
  EXPECT_DOUBLE_EQ(exact[0].y_median, 0.4);
  EXPECT_DOUBLE_EQ(exact[0].x_median, 1.5);
}

TEST(FirstReachingGapTest, ExactGapsOnly) {
  std::vector<PassRecord> records = {
      Record(1, 1, 0.1, 1e-4, false),  // an estimate below target: ignored
      Record(10, 10.5, 1.0, 5e-3, true), Record(20, 21, 2.0, 1e-3, true),
      Record(30, 31, 3.0, 1e-4, true)};
  std::optional<GapCrossing> crossing = FirstReachingGap(records, 1e-3);
  ASSERT_TRUE(crossing.has_value());
  EXPECT_EQ(crossing->pass, 20);
  EXPECT_DOUBLE_EQ(crossing->effective_passes, 21);
  EXPECT_DOUBLE_EQ(crossing->seconds, 2.0);
  EXPECT_FALSE(FirstReachingGap(records, 1e-5).has_value());
  EXPECT_FALSE(FirstReachingGap({}, 1).has_value());
}

TEST(SummarizeCrossingsTest, NeverCountsAsInfinity) {
  std::vector<std::vector<PassRecord>> seeds = {
      {Record(10, 10, 1, 1e-4, true)},
      {Record(10, 10, 1, 1e-2, true), Record(20, 20, 2, 1e-4, true)},
      {Record(10, 10, 1, 1e-2, true)}};
  CrossingSummary summary = SummarizeCrossings(seeds, 1e-3);
  EXPECT_EQ(summary.seeds_reached, 2);
  EXPECT_EQ(summary.num_seeds, 3);
  ASSERT_TRUE(summary.median_effective_passes.has_value());
  EXPECT_DOUBLE_EQ(*summary.median_effective_passes, 20);
  EXPECT_DOUBLE_EQ(*summary.median_seconds, 2);

  seeds.pop_back();
  seeds.push_back({});
  seeds.push_back({});
  summary = SummarizeCrossings(seeds, 1e-3);  // 2 of 4: median is ∞
  EXPECT_FALSE(summary.median_effective_passes.has_value());
}

TEST(FinalOfTest, LastExactGapAndEval) {
  PassRecord eval = Record(2, 2, 2, 0.3, false);
  eval.set_eval_score(90);
  eval.set_eval_metric("F1");
  RunFinal f = FinalOf({Record(1, 1, 1, 0.1, true), eval});
  EXPECT_EQ(f.passes, 2);
  EXPECT_TRUE(f.gap_exact);
  EXPECT_DOUBLE_EQ(*f.gap, 0.1);
  EXPECT_DOUBLE_EQ(*f.primal, 1.1);
  EXPECT_DOUBLE_EQ(*f.eval_score, 90);
}

TEST(ReportsTest, FiguresTsvAndTable) {
  RunLogs a{"uniform", {1, 2}, {}};
  a.records = {{Record(1, 1, 1, 0.5, false), Record(10, 10, 2, 1e-3, true)},
               {Record(1, 1, 1, 0.4, false), Record(10, 10, 3, 1e-2, true),
                Record(20, 20, 6, 1e-4, true)}};
  RunLogs b{"gap", {1, 2}, {}};
  b.records = {{Record(5, 5, 1, 1e-3, true)}, {Record(5, 5, 1, 1e-3, true)}};
  Figures figures = MakeFigures({a, b}, "test");
  EXPECT_NE(figures.gap_vs_passes.find("<svg"), std::string::npos);
  EXPECT_NE(figures.gap_vs_passes.find("dashed: gap estimate"),
            std::string::npos);
  EXPECT_NE(figures.gap_vs_seconds.find(">seconds<"), std::string::npos);
  EXPECT_TRUE(figures.eval_vs_passes.empty());
  // Exact records carry a primal (1 + gap here): one line per run.
  EXPECT_NE(figures.primal_vs_passes.find("Training objective"),
            std::string::npos);
  EXPECT_NE(figures.primal_vs_passes.find(">uniform<"), std::string::npos);
  RunLogs estimates_only{"estimates", {1}, {{Record(1, 1, 1, 0.5, false)}}};
  EXPECT_TRUE(MakeFigures({estimates_only}, "").primal_vs_passes.empty());
  // A solver without a dual logs a primal alone; it reaches the summaries.
  PassRecord no_dual;
  no_dual.set_solver("svrg");
  no_dual.set_pass(1);
  no_dual.set_effective_passes(2);
  no_dual.set_primal(0.625);
  RunLogs svrg{"svrg", {1}, {{no_dual}}};
  EXPECT_NE(SummaryTable({svrg}, 1e-3).find("0.625"), std::string::npos);
  EXPECT_NE(SummaryTsv({svrg}).find("\t0.625\t"), std::string::npos);

  const std::string tsv = SummaryTsv({a, b});
  EXPECT_EQ(tsv.rfind("label\tseed\t", 0), 0u);
  EXPECT_NE(tsv.find("uniform\t2\t20\t20\t6\t"), std::string::npos) << tsv;

  const std::string table = SummaryTable({a, b}, 1e-3);
  EXPECT_NE(table.find("15 (2/2)"), std::string::npos) << table;
  EXPECT_NE(table.find("0.33x"), std::string::npos) << table;  // 5 / 15
}

}  // namespace
}  // namespace chaintag
