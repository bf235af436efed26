// Solver bookkeeping against the oracle on CoNLL-2000 (chunking preset): the
// time of one pass of each Frank-Wolfe variant next to the time its oracle
// calls alone take, so that sampling, cache look-ups, active sets, line
// searches and averaging show up as the non-oracle share of a pass.
//
//   bazel run //tools:bench_solvers
//
// Each variant's pass is the third of four passes from a cold start (the
// solver's own per-pass clock; exact gap passes off), so allocation and the
// first touch of the weight vectors are excluded. The oracle time per call
// is measured separately, n calls at the weights of three BCFW passes.

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "pipeline/pipeline.h"
#include "solvers/duality_gap.h"
#include "solvers/solver.h"
#include "tools/bench_corpus.h"

namespace chaintag {
namespace {

struct Variant {
  const char* label;
  const char* solver;
  SolverConfig::Sampling sampling;
  SolverConfig::Step step;
  bool cache;
  bool averaging;
};

// The preset's solver first (BCFW with weighted averaging), then the
// options one at a time, then combined.
constexpr Variant kVariants[] = {
    {"bcfw_wavg(preset)", "bcfw", SolverConfig::UNIFORM, SolverConfig::FW,
     false, true},
    {"bcfw", "bcfw", SolverConfig::UNIFORM, SolverConfig::FW, false, false},
    {"bcfw_gap_sampling", "bcfw", SolverConfig::GAP, SolverConfig::FW, false,
     false},
    {"bcfw_pairwise", "bcfw", SolverConfig::UNIFORM, SolverConfig::PAIRWISE,
     false, false},
    {"bcfw_best", "bcfw", SolverConfig::UNIFORM, SolverConfig::BEST, false,
     false},
    {"bcfw_cache", "bcfw", SolverConfig::UNIFORM, SolverConfig::FW, true,
     false},
    {"bcfw_pairwise_gap_cache", "bcfw", SolverConfig::GAP,
     SolverConfig::PAIRWISE, true, false},
    {"active_set_bcfw", "active_set_bcfw", SolverConfig::UNIFORM,
     SolverConfig::FW, false, false},
};

SolverConfig VariantConfig(const Variant& variant, int passes) {
  SolverConfig config = BenchCorpus()->config.solver();
  config.set_lambda(
      ResolveLambda(config, BenchCorpus()->problem->NumExamples()));
  config.set_name(variant.solver);
  config.set_sampling(variant.sampling);
  config.set_step(variant.step);
  config.set_cache(variant.cache);
  config.set_weighted_averaging(variant.averaging);
  config.set_max_passes(passes);
  config.set_gap_check(1 << 30);
  config.set_final_gap(false);
  config.set_gap_tolerance(0);
  return config;
}

// Seconds per oracle call (loss-augmented Viterbi with the block-state dot
// product), one thread, at the weights of three BCFW passes.
double OracleSecondsPerCall() {
  static const double seconds = [] {
    const Problem& problem = *BenchCorpus()->problem;
    std::unique_ptr<Solver> solver =
        *CreateSolver(VariantConfig(kVariants[1], 3));
    std::vector<double> w;
    if (!solver->Solve(problem, nullptr, &w).ok()) return 0.0;
    const int n = problem.NumExamples();
    std::vector<double> state;
    OracleResult result;
    double best = 1e300;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        state.resize(problem.BlockStateSize(i));
        problem.InitBlockState(i, state.data());
        problem.MaxOracle(i, w.data(), state.data(), &result);
        benchmark::DoNotOptimize(result.score);
      }
      best = std::min(best, std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    }
    return best / n;
  }();
  return seconds;
}

void BM_OraclePass(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  for (auto _ : state) {
    state.SetIterationTime(OracleSecondsPerCall() *
                           BenchCorpus()->problem->NumExamples());
  }
}
BENCHMARK(BM_OraclePass)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_SolverPass(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  const Variant& variant = kVariants[state.range(0)];
  state.SetLabel(variant.label);
  const int n = BenchCorpus()->problem->NumExamples();
  double oracle_share = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Solver>> solver =
        CreateSolver(VariantConfig(variant, 4));
    if (!solver.ok()) {
      state.SkipWithError("bad solver config");
      return;
    }
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    if (!(*solver)->Solve(*BenchCorpus()->problem, &monitor, &w).ok()) {
      state.SkipWithError("solver failed");
      return;
    }
    const std::vector<PassRecord>& records = monitor.records();
    const double seconds = records[2].seconds() - records[1].seconds();
    const double calls = records[2].oracle_calls() - records[1].oracle_calls();
    state.SetIterationTime(seconds);
    oracle_share = calls * OracleSecondsPerCall() / seconds;
    state.counters["oracle_calls_per_n"] = calls / n;
  }
  state.counters["oracle_share"] = oracle_share;
  state.counters["non_oracle_share"] = 1 - oracle_share;
}
BENCHMARK(BM_SolverPass)
    ->DenseRange(0, sizeof(kVariants) / sizeof(kVariants[0]) - 1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!chaintag::ParseBenchConfigFlag(argc, argv, "bench_solvers")) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
