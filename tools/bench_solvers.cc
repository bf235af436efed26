// Solver bookkeeping against the oracle on CoNLL-2000 (chunking preset): the
// time of one pass of each Frank-Wolfe variant next to the time its oracle
// calls alone take, so that sampling, cache look-ups, active sets, line
// searches and averaging show up as the non-oracle share of a pass.
//
//   bazel run //tools:bench_solvers
//
// Each variant's pass is the third of four passes from a cold start, or the
// twentieth of 21 (BM_SolverPass/<variant>/<pass>; the solver's own
// per-pass clock; exact gap passes off), so allocation and the first touch
// of the weight vectors are excluded. Its time is split into
// shares: the oracle calls it made in that pass; cache checks (the stored
// corners' scores and ⟨v_i, w⟩ of a block whose cache might hit); the line
// search's distances; the updates of w and of the block states; and the
// rest, bookkeeping (sampling, the cache's own records, active sets,
// averaging). BM_OraclePass is n oracle calls in index order at the weights
// of three BCFW passes.
//
// Weighted averaging forms w̄ only when it is read: the preset reads it at
// its evaluations (every eval_every passes) and gap checks; the variant that
// reads it after every pass shows what one formation costs.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/random.h"
#include "benchmark/benchmark.h"
#include "pipeline/pipeline.h"
#include "solvers/duality_gap.h"
#include "solvers/problem.h"
#include "solvers/registry.h"
#include "solvers/solver.h"
#include "solvers/svrg.h"
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
  // Whether w̄ is read after every pass (an evaluation every pass) rather
  // than only at the end: averaging forms w̄ only when it is read.
  bool read_every_pass = false;
};

// The preset's solver first (BCFW with weighted averaging), then the
// options one at a time, then combined.
constexpr Variant kVariants[] = {
    {"bcfw_wavg(preset)", "bcfw", SolverConfig::UNIFORM, SolverConfig::FW,
     false, true},
    {"bcfw_wavg(w̄ read every pass)", "bcfw", SolverConfig::UNIFORM,
     SolverConfig::FW, false, true, true},
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
    {"mp_bcfw", "mp_bcfw", SolverConfig::UNIFORM, SolverConfig::FW, false,
     false},
};

SolverConfig VariantConfig(const Variant& variant, int passes) {
  SolverConfig config = BenchCorpus()->config.solver();
  config.set_lambda(
      ResolveLambda(config, BenchCorpus()->problem->NumExamples()));
  config.set_name(variant.solver);
  config.set_sampling(variant.sampling);
  config.mutable_bcfw()->set_step(variant.step);
  config.mutable_bcfw()->set_cache(variant.cache);
  config.set_weighted_averaging(variant.averaging);
  config.set_max_passes(passes);
  config.set_gap_check(1 << 30);
  config.set_final_gap(false);
  config.set_gap_tolerance(0);
  return config;
}

// The parts of a block step that TimedProblem clocks apart.
enum StepPart {
  kOracle,      // max-oracle calls (with the stored corners' scores)
  kCacheCheck,  // the stored corners' scores and ⟨v_i, w⟩ without an oracle
  kLineSearch,  // distances between block states and corners
  kUpdate,      // changes to w and to the block states
  kStepParts,
};
using PartSeconds = std::array<double, kStepParts>;

// Forwards to a Problem and clocks its calls by StepPart, so that a pass's
// shares are measured on the blocks the solver actually visited (gap
// sampling favours long sentences). seconds_at_call()[k] holds each part's
// seconds when the (k+1)-th oracle call begins, so that a pass's shares are
// differences between two of them. Not thread-safe: the benchmarked
// passes run on one thread.
class TimedProblem : public Problem {
 public:
  explicit TimedProblem(const Problem& base) : base_(base) {}

  const std::vector<PartSeconds>& seconds_at_call() const { return at_call_; }

  int NumExamples() const override { return base_.NumExamples(); }
  int64_t Dim() const override { return base_.Dim(); }
  void MaxOracle(int i, const double* w, OracleResult* result) const override {
    MaxOracleWithStateDot(i, w, nullptr, result);
  }
  double StateDot(int i, const double* state, const double* w) const override {
    return base_.StateDot(i, state, w);
  }
  bool SupportsSmoothing(Smoothing::Kind kind) const override {
    return base_.SupportsSmoothing(kind);
  }
  void MaxOracleWithStateDot(int i, const double* w, const double* state,
                             OracleResult* result) const override {
    const auto start = StartOracle();
    base_.MaxOracleWithStateDot(i, w, state, result);
    Clock(kOracle, start);
  }
  void MaxOracleScaled(int i, const double* v, double scale,
                       OracleResult* result) const override {
    const auto start = StartOracle();
    base_.MaxOracleScaled(i, v, scale, result);
    Clock(kOracle, start);
  }
  void ScoreCornersAndMaxOracle(int i, const double* w, const double* state,
                                const Corner* const* corners, int count,
                                double* scores,
                                OracleResult* result) const override {
    const auto start = StartOracle();
    base_.ScoreCornersAndMaxOracle(i, w, state, corners, count, scores, result);
    Clock(kOracle, start);
  }
  void Decode(int i, const double* w, Corner* corner) const override {
    base_.Decode(i, w, corner);
  }
  double Loss(int i, const Corner& y) const override {
    return base_.Loss(i, y);
  }
  double Score(int i, const double* w, const Corner& y) const override {
    return base_.Score(i, w, y);
  }
  void AddScaled(int i, const Corner& y, double c, double* w) const override {
    const auto start = Now();
    base_.AddScaled(i, y, c, w);
    Clock(kUpdate, start);
  }
  void AddCornerDifference(int i, const Corner& a, const Corner& b, double c,
                           double* w) const override {
    const auto start = Now();
    base_.AddCornerDifference(i, a, b, c, w);
    Clock(kUpdate, start);
  }
  int64_t BlockStateSize(int i) const override {
    return base_.BlockStateSize(i);
  }
  void InitBlockState(int i, double* state) const override {
    base_.InitBlockState(i, state);
  }
  void MixCorner(int i, const Corner& y, double gamma,
                 double* state) const override {
    const auto start = Now();
    base_.MixCorner(i, y, gamma, state);
    Clock(kUpdate, start);
  }
  void ScaleBlockState(int i, double factor, double* state) const override {
    const auto start = Now();
    base_.ScaleBlockState(i, factor, state);
    Clock(kUpdate, start);
  }
  double StateDistanceSquared(int i, const double* state,
                              const Corner& y) const override {
    const auto start = Now();
    const double distance = base_.StateDistanceSquared(i, state, y);
    Clock(kLineSearch, start);
    return distance;
  }
  void AddCornerMinusState(int i, const Corner& y, const double* state,
                           double c, double* w) const override {
    const auto start = Now();
    base_.AddCornerMinusState(i, y, state, c, w);
    Clock(kUpdate, start);
  }
  void AddCornerMinusMixture(int i, const Corner& y, const double* state,
                             const Corner* const* corners,
                             const double* weights, int count, double c,
                             double* w) const override {
    const auto start = Now();
    base_.AddCornerMinusMixture(i, y, state, corners, weights, count, c, w);
    Clock(kUpdate, start);
  }
  void AddCornerMinusStateInSlice(int i, const Corner& y, const double* state,
                                  double c, int64_t begin, int64_t end,
                                  double* w) const override {
    const auto start = Now();
    base_.AddCornerMinusStateInSlice(i, y, state, c, begin, end, w);
    Clock(kUpdate, start);
  }
  void EncodeCornerMinusState(int i, const Corner& y, const double* state,
                              double c, BlockUpdate* update) const override {
    const auto start = Now();
    base_.EncodeCornerMinusState(i, y, state, c, update);
    Clock(kUpdate, start);
  }
  void EncodeScaled(int i, const Corner& y, double c,
                    BlockUpdate* update) const override {
    const auto start = Now();
    base_.EncodeScaled(i, y, c, update);
    Clock(kUpdate, start);
  }
  void AddCornerToState(int i, const Corner& y, double c,
                        double* state) const override {
    const auto start = Now();
    base_.AddCornerToState(i, y, c, state);
    Clock(kUpdate, start);
  }
  void ScoreCorners(int i, const double* w, const double* state,
                    const Corner* const* corners, int count, double* scores,
                    double* state_dot) const override {
    const auto start = Now();
    base_.ScoreCorners(i, w, state, corners, count, scores, state_dot);
    Clock(kCacheCheck, start);
  }
  double CornerDistanceSquared(int i, const Corner& a,
                               const Corner& b) const override {
    const auto start = Now();
    const double distance = base_.CornerDistanceSquared(i, a, b);
    Clock(kLineSearch, start);
    return distance;
  }
  const Corner& GoldCorner(int i) const override { return base_.GoldCorner(i); }
  double SmoothedOracle(int i, const double* w, const Smoothing& smoothing,
                        double* state) const override {
    const auto start = StartOracle();
    const double value = base_.SmoothedOracle(i, w, smoothing, state);
    Clock(kOracle, start);
    return value;
  }
  double SmoothedOracleWithStateDot(int i, const double* w,
                                    const Smoothing& smoothing, double* state,
                                    double* state_dot) const override {
    const auto start = StartOracle();
    const double value =
        base_.SmoothedOracleWithStateDot(i, w, smoothing, state, state_dot);
    Clock(kOracle, start);
    return value;
  }
  void TouchedRanges(int i,
                     std::vector<CoordinateRange>* ranges) const override {
    base_.TouchedRanges(i, ranges);
  }
  bool FreeCoordinates(std::vector<int64_t>* coordinates) const override {
    return base_.FreeCoordinates(coordinates);
  }

 private:
  static std::chrono::steady_clock::time_point Now() {
    return std::chrono::steady_clock::now();
  }
  void Clock(StepPart part, std::chrono::steady_clock::time_point start) const {
    totals_[part] += std::chrono::duration<double>(Now() - start).count();
  }
  // Before each oracle call: a pass's time then runs from its first oracle
  // call to the next pass's first.
  std::chrono::steady_clock::time_point StartOracle() const {
    at_call_.push_back(totals_);
    return Now();
  }

  const Problem& base_;
  mutable PartSeconds totals_{};
  mutable std::vector<PartSeconds> at_call_;
};

// Seconds per oracle call (loss-augmented Viterbi with the block-state dot
// product), one thread, at the weights of three BCFW passes.
double OracleSecondsPerCall() {
  static const double seconds = [] {
    const Problem& problem = *BenchCorpus()->problem;
    std::unique_ptr<Solver> solver =
        *CreateSolver(VariantConfig(kVariants[2], 3));
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
        problem.MaxOracleWithStateDot(i, w.data(), state.data(), &result);
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

// The records that bound a run's pass `pass` (from 2): the end of the one
// before and its own end. MP-BCFW logs each of its approximate passes too,
// so its passes are told apart by their oracle calls: a pass with calls
// begins an outer iteration, whose time includes the approximate passes
// after it.
std::pair<int, int> PassRecords(const std::vector<PassRecord>& records,
                                int pass) {
  std::vector<int> exact;  // records whose pass called the oracle
  for (int k = 0; k < static_cast<int>(records.size()); ++k) {
    const int64_t before = k == 0 ? 0 : records[k - 1].oracle_calls();
    if (records[k].oracle_calls() > before) exact.push_back(k);
  }
  const int last_record = static_cast<int>(records.size()) - 1;
  if (static_cast<int>(exact.size()) < pass) return {pass - 2, pass - 1};
  return {exact[pass - 1] - 1, static_cast<int>(exact.size()) > pass
                                   ? exact[pass] - 1
                                   : last_record};
}

void BM_SolverPass(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  const Variant& variant = kVariants[state.range(0)];
  const int pass = state.range(1);
  state.SetLabel(variant.label);
  const int n = BenchCorpus()->problem->NumExamples();
  PartSeconds shares{};
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Solver>> solver =
        CreateSolver(VariantConfig(variant, pass + 1));
    if (!solver.ok()) {
      state.SkipWithError("bad solver config");
      return;
    }
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    if (variant.read_every_pass) {
      monitor.SetEvaluator("nothing", 1, [](absl::Span<const double> w) {
        return absl::StatusOr<double>(w.empty() ? 0.0 : w[0]);
      });
    }
    std::vector<double> w;
    const TimedProblem problem(*BenchCorpus()->problem);
    if (!(*solver)->Solve(problem, &monitor, &w).ok()) {
      state.SkipWithError("solver failed");
      return;
    }
    const std::vector<PassRecord>& records = monitor.records();
    const auto [first, last] = PassRecords(records, pass);
    const double seconds = records[last].seconds() - records[first].seconds();
    const int64_t first_call = records[first].oracle_calls();
    const int64_t last_call = records[last].oracle_calls();
    const std::vector<PartSeconds>& at_call = problem.seconds_at_call();
    if (last_call >= static_cast<int64_t>(at_call.size())) {
      state.SkipWithError("oracle calls went unclocked");
      return;
    }
    state.SetIterationTime(seconds);
    for (int part = 0; part < kStepParts; ++part) {
      shares[part] =
          (at_call[last_call][part] - at_call[first_call][part]) / seconds;
    }
    state.counters["oracle_calls_per_n"] =
        static_cast<double>(last_call - first_call) / n;
  }
  state.counters["oracle_share"] = shares[kOracle];
  state.counters["cache_check_share"] = shares[kCacheCheck];
  state.counters["line_search_share"] = shares[kLineSearch];
  state.counters["update_share"] = shares[kUpdate];
  state.counters["bookkeeping_share"] = 1 - shares[kOracle] -
                                        shares[kCacheCheck] -
                                        shares[kLineSearch] - shares[kUpdate];
}
// The third pass, as the solvers start, and the twentieth, once FW steps
// have spread a block's state over many labelings.
BENCHMARK(BM_SolverPass)
    ->ArgsProduct({benchmark::CreateDenseRange(
                       0, sizeof(kVariants) / sizeof(kVariants[0]) - 1, 1),
                   {3, 20}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// What a cache hit costs against the oracle call it saves, at the weights
// of three BCFW passes: per block, the stored corners' scores and ⟨v_i, w⟩
// (Problem::ScoreCorners, what the cache test and MP-BCFW's working sets
// pay) against MaxOracle with the same state. The state mixes the gold
// labeling with the oracle's and the decoder's corners, and those two are
// the stored corners, as after a few passes with the cache. Each side is
// the best of 3 sweeps over every block; hit_over_oracle is their ratio.
// alpha_hit_over_oracle is the check of a block whose stored corners hold
// all of its α (active sets, and FW steps with the cache until a full store
// evicts): the three corners' scores alone, ⟨v_i, w⟩ = Σ_k α_k·score_k,
// without reading the block state.
void BM_CacheHitCost(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  const Problem& problem = *BenchCorpus()->problem;
  const int n = problem.NumExamples();
  std::unique_ptr<Solver> solver =
      *CreateSolver(VariantConfig(kVariants[2], 3));
  std::vector<double> w;
  if (!solver->Solve(problem, nullptr, &w).ok()) {
    state.SkipWithError("solver failed");
    return;
  }
  std::vector<std::vector<double>> states(n);
  std::vector<std::vector<Corner>> stored(n);
  OracleResult result;
  for (int i = 0; i < n; ++i) {
    states[i].resize(problem.BlockStateSize(i));
    problem.InitBlockState(i, states[i].data());
    problem.MaxOracle(i, w.data(), &result);
    Corner decoded;
    problem.Decode(i, w.data(), &decoded);
    problem.MixCorner(i, result.corner, 0.5, states[i].data());
    problem.MixCorner(i, decoded, 0.25, states[i].data());
    stored[i] = {result.corner, decoded};
  }
  enum Side { kHit, kAlphaHit, kOracle };
  auto sweep = [&](Side side) {
    double best = 1e300;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        if (side != kOracle) {
          // The state's α: gold 0.375, oracle's 0.375, decoder's 0.25.
          const Corner* corners[3] = {&problem.GoldCorner(i), &stored[i][0],
                                      &stored[i][1]};
          double scores[3], state_dot = 0;
          if (side == kHit) {
            problem.ScoreCorners(i, w.data(), states[i].data(), corners + 1, 2,
                                 scores + 1, &state_dot);
          } else {
            problem.ScoreCorners(i, w.data(), nullptr, corners, 3, scores,
                                 nullptr);
            state_dot =
                0.375 * scores[0] + 0.375 * scores[1] + 0.25 * scores[2];
          }
          benchmark::DoNotOptimize(state_dot);
        } else {
          problem.MaxOracleWithStateDot(i, w.data(), states[i].data(), &result);
          benchmark::DoNotOptimize(result.score);
        }
      }
      best = std::min(best, std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    }
    return best / n;
  };
  double hit = 0, alpha_hit = 0, oracle = 0;
  for (auto _ : state) {
    hit = sweep(kHit);
    alpha_hit = sweep(kAlphaHit);
    oracle = sweep(kOracle);
    state.SetIterationTime(hit * n);
  }
  state.counters["hit_us"] = hit * 1e6;
  state.counters["alpha_hit_us"] = alpha_hit * 1e6;
  state.counters["oracle_us"] = oracle * 1e6;
  state.counters["hit_over_oracle"] = hit / oracle;
  state.counters["alpha_hit_over_oracle"] = alpha_hit / oracle;
}
BENCHMARK(BM_CacheHitCost)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Seconds of one step of the preset's solver (BCFW with weighted
// averaging): its third pass from a cold start over n.
double BcfwStepSeconds() {
  static const double seconds = [] {
    const Problem& problem = *BenchCorpus()->problem;
    std::unique_ptr<Solver> solver =
        *CreateSolver(VariantConfig(kVariants[0], 4));
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    if (!solver->Solve(problem, &monitor, &w).ok()) return 0.0;
    const std::vector<PassRecord>& records = monitor.records();
    return (records[2].seconds() - records[1].seconds()) /
           problem.NumExamples();
  }();
  return seconds;
}

struct SmoothedVariant {
  const char* label;
  Smoothing::Kind smoothing;
  bool proximal;  // casimir_svrg's κ(w − z) term, κ = λ
};

constexpr SmoothedVariant kSmoothedVariants[] = {
    {"svrg_l2_top5", Smoothing::Kind::kTopKL2, false},
    {"svrg_entropy", Smoothing::Kind::kEntropy, false},
    {"casimir_svrg_l2_top5", Smoothing::Kind::kTopKL2, true},
    {"svrg_no_smoothing", Smoothing::Kind::kNone, false},
};

// The n steps of an SVRG epoch (lazy updates; the full-gradient pass is not
// timed), from the output of one warm-up epoch, per step and against a
// BCFW step: the "within 3×"; and with the forming of the epoch's
// average (finish) spread over the steps.
void BM_SvrgStep(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  const SmoothedVariant& variant = kSmoothedVariants[state.range(0)];
  state.SetLabel(variant.label);
  const Problem& problem = *BenchCorpus()->problem;
  const int n = problem.NumExamples();
  SvrgEpochSettings settings;
  settings.lambda =
      ResolveLambda(BenchCorpus()->config.solver(), problem.NumExamples());
  settings.kappa = variant.proximal ? settings.lambda : 0;
  settings.learning_rate = 0.02;
  settings.smoothing.kind = variant.smoothing;
  settings.smoothing.mu = 1;
  settings.smoothing.top_k = 5;
  settings.num_threads = 1;
  SvrgEpoch epoch(problem);
  SolverRandom random(1);
  const std::vector<double> zero(problem.Dim(), 0.0);
  std::vector<double> start;
  epoch.Run(settings, zero, zero.data(), &random, &start, nullptr);
  // Sized (and its pages touched) beforehand, as the solvers' output vector
  // is after their first epoch.
  std::vector<double> output(problem.Dim(), 0.0);
  for (auto _ : state) {
    epoch.Run(settings, start, zero.data(), &random, &output, nullptr);
    state.SetIterationTime(epoch.steps_seconds());
  }
  const double step = epoch.steps_seconds() / n;
  // Forming the epoch's average, per step: the lazy steps leave part of it
  // (the block sums' map into w) to the end of the epoch.
  const double finish = epoch.finish_seconds() / n;
  state.counters["step_us"] = step * 1e6;
  state.counters["vs_bcfw_step"] = step / BcfwStepSeconds();
  state.counters["finish_us"] = finish * 1e6;
  state.counters["vs_bcfw_step_with_finish"] =
      (step + finish) / BcfwStepSeconds();
  state.counters["full_gradient_s"] = epoch.full_gradient_seconds();
}
BENCHMARK(BM_SvrgStep)
    ->DenseRange(0,
                 sizeof(kSmoothedVariants) / sizeof(kSmoothedVariants[0]) - 1)
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
