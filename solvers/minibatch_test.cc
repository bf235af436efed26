// Mini-batch BCFW (solver.minibatch τ): τ = 1 is plain BCFW, the iterates
// never depend on the thread count, and every variant still converges to
// the optimum with certified gaps.

#include <string>
#include <thread>
#include <vector>

#include "base/communicator.h"
#include "base/thread_communicator.h"
#include "gtest/gtest.h"
#include "solvers/bcfw.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/shard_problem.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

struct SolveResult {
  TrainingSummary summary;
  std::vector<double> w;
  std::vector<PassRecord> records;
};

SolveResult Solve(const Problem& problem, const SolverConfig& config) {
  SolveResult run;
  BcfwSolver solver(config);
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  absl::StatusOr<TrainingSummary> summary =
      solver.Solve(problem, &monitor, &run.w);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (summary.ok()) run.summary = *summary;
  run.records = monitor.records();
  return run;
}

// The configurations the tests run: FW steps with averaging, pairwise steps
// with gap sampling and the cache, and the fully corrective solver.
std::vector<SolverConfig> Variants() {
  std::vector<SolverConfig> variants(3);
  variants[1].set_sampling(SolverConfig::GAP);
  variants[1].set_weighted_averaging(false);
  variants[1].mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  variants[1].mutable_bcfw()->set_cache(true);
  variants[2].set_name("active_set_bcfw");
  variants[2].set_sampling(SolverConfig::PERMUTATION);
  variants[2].set_weighted_averaging(false);
  for (SolverConfig& config : variants) {
    config.set_lambda(0.05);
    config.set_gap_check(4);
  }
  return variants;
}

TEST(MinibatchTest, OneBlockPerRoundIsPlainBcfw) {
  const MulticlassProblem problem = RandomMulticlassProblem(30, 4, 3, 5);
  for (SolverConfig config : Variants()) {
    config.set_max_passes(12);
    const SolveResult plain = Solve(problem, config);
    config.set_minibatch(1);
    const SolveResult one = Solve(problem, config);
    EXPECT_EQ(one.w, plain.w) << config.ShortDebugString();
    EXPECT_EQ(one.summary.primal(), plain.summary.primal());
  }
}

TEST(MinibatchTest, TheIteratesDoNotDependOnTheThreadCount) {
  const MulticlassProblem problem = RandomMulticlassProblem(40, 5, 4, 6);
  for (SolverConfig config : Variants()) {
    // τ = 1 too: w̄ and the exact gaps use the threads.
    for (int tau : {1, 3, 8, 64}) {
      config.set_max_passes(10);
      config.set_minibatch(tau);
      config.set_num_threads(1);
      const SolveResult one = Solve(problem, config);
      for (int threads : {2, 3}) {
        config.set_num_threads(threads);
        const SolveResult many = Solve(problem, config);
        EXPECT_EQ(many.w, one.w) << "τ " << tau << " threads " << threads;
        EXPECT_EQ(many.summary.gap(), one.summary.gap());
      }
    }
  }
}

TEST(MinibatchTest, RoundsConvergeToTheOptimum) {
  const MulticlassProblem problem = RandomMulticlassProblem(24, 4, 3, 7);
  const double optimum = ReferencePrimal(problem, 0.05);
  for (SolverConfig config : Variants()) {
    // Plain FW steps converge sublinearly: a looser tolerance for them.
    const bool linear = config.has_name() || config.bcfw().has_step();
    const double tolerance = linear ? 1e-7 : 1e-4;
    for (int tau : {4, 24}) {
      config.set_minibatch(tau);
      config.set_num_threads(2);
      config.set_max_passes(100000);
      config.set_gap_tolerance(tolerance);
      const SolveResult run = Solve(problem, config);
      SCOPED_TRACE(testing::Message()
                   << "τ " << tau << " " << config.ShortDebugString());
      EXPECT_EQ(run.summary.stop_reason(), "gap_tolerance");
      EXPECT_LE(run.summary.gap(), tolerance);
      EXPECT_NEAR(run.summary.primal(), optimum, tolerance + 1e-12);
      ExpectExactGapsAreCertificates(run.records);
    }
  }
}

// `config` on `ranks` ranks (threads with a ThreadCommunicator), each
// holding only its shard of `problem`: every rank's result.
std::vector<SolveResult> SolveDistributed(const MulticlassProblem& problem,
                                          const SolverConfig& config,
                                          int ranks) {
  ThreadHub hub(ranks);
  std::vector<SolveResult> results(ranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      ThreadCommunicator communicator(&hub, rank);
      const BlockShard shard = ShardOf(problem.NumExamples(), rank, ranks);
      const MulticlassProblem local = problem.Slice(shard.begin, shard.end);
      const ShardProblem view(local, problem.NumExamples(), shard);
      BcfwSolver solver(config);
      ASSERT_TRUE(solver.SetDistribution({&communicator, shard}).ok());
      Monitor monitor;
      monitor.set_progress_stream(nullptr);
      absl::StatusOr<TrainingSummary> summary =
          solver.Solve(view, &monitor, &results[rank].w);
      ASSERT_TRUE(summary.ok()) << summary.status();
      results[rank].summary = *summary;
      results[rank].records = monitor.records();
    });
  }
  for (std::thread& thread : threads) thread.join();
  return results;
}

// Every rank holds w, the gaps and the records of the run in one process,
// to the bit, for each variant (FW with averaging, pairwise with gap
// sampling and the cache, fully corrective).
TEST(MinibatchTest, DistributedRanksEqualOneProcess) {
  const MulticlassProblem problem = RandomMulticlassProblem(37, 5, 4, 8);
  for (SolverConfig config : Variants()) {
    config.set_max_passes(9);
    config.set_minibatch(6);
    config.set_num_threads(2);
    const SolveResult one = Solve(problem, config);
    for (int ranks : {2, 3}) {
      config.set_num_threads(1 + ranks % 2);
      const std::vector<SolveResult> distributed =
          SolveDistributed(problem, config, ranks);
      for (int rank = 0; rank < ranks; ++rank) {
        SCOPED_TRACE(testing::Message() << ranks << " ranks, rank " << rank
                                        << ": " << config.ShortDebugString());
        const SolveResult& run = distributed[rank];
        EXPECT_EQ(run.w, one.w);
        EXPECT_EQ(run.summary.gap(), one.summary.gap());
        EXPECT_EQ(run.summary.primal(), one.summary.primal());
        EXPECT_EQ(run.summary.oracle_calls(), one.summary.oracle_calls());
        ASSERT_EQ(run.records.size(), one.records.size());
        for (size_t p = 0; p < one.records.size(); ++p) {
          EXPECT_EQ(run.records[p].dual(), one.records[p].dual());
          EXPECT_EQ(run.records[p].gap(), one.records[p].gap());
        }
      }
    }
  }
}

TEST(MinibatchTest, DistributedRefusesPlainBcfwAndTimeBudgets) {
  const MulticlassProblem problem = RandomMulticlassProblem(8, 2, 2, 1);
  std::vector<SolverConfig> configs(2);
  configs[0].set_minibatch(1);
  configs[1].set_minibatch(4);
  configs[1].set_max_seconds(10);
  for (const SolverConfig& config : configs) {
    ThreadHub hub(1);
    ThreadCommunicator communicator(&hub, 0);
    const BlockShard shard = ShardOf(8, 0, 1);
    const ShardProblem view(problem, 8, shard);
    BcfwSolver solver(config);
    ASSERT_TRUE(solver.SetDistribution({&communicator, shard}).ok());
    std::vector<double> w;
    absl::StatusOr<TrainingSummary> summary = solver.Solve(view, nullptr, &w);
    ASSERT_FALSE(summary.ok());
    EXPECT_NE(summary.status().message().find("distributed"),
              std::string::npos);
  }
}

TEST(MinibatchTest, OneExampleOptimumWithRounds) {
  // τ larger than n: every round is all blocks, once each.
  MulticlassProblem problem({{1.0}}, {0}, 2);
  SolverConfig config;
  config.set_lambda(0.5);
  config.set_minibatch(4);
  config.set_max_passes(50);
  config.set_gap_check(1);
  config.set_gap_tolerance(1e-12);
  config.set_weighted_averaging(false);
  const SolveResult run = Solve(problem, config);
  ExpectOneExampleOptimum(0.5, run.w, run.summary);
}

TEST(MinibatchTest, RefusesAnEmptyRound) {
  const MulticlassProblem problem = RandomMulticlassProblem(4, 2, 2, 1);
  SolverConfig config;
  config.set_minibatch(0);
  BcfwSolver solver(config);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, nullptr, &w);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("minibatch"), std::string::npos);
}

}  // namespace
}  // namespace chaintag
