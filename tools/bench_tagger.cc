// Benchmarks on CoNLL-2000 with the chunking preset: tagging throughput on
// the test set (feature extraction + unary scores + Viterbi, one thread)
// and the time of one BCFW pass over the training set.
//
//   bazel run //tools:bench_tagger
//
// The corpora come from $CHAINTAG_CORPORA or ../shared/corpora beside the
// workspace; the preset config is passed by the target's args.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "models/chain_model.h"
#include "pipeline/pipeline.h"
#include "solvers/bcfw.h"
#include "tools/bench_corpus.h"

namespace chaintag {
namespace {

SolverConfig PassConfig(int passes) {
  SolverConfig config = BenchCorpus()->config.solver();
  config.set_lambda(
      ResolveLambda(config, BenchCorpus()->problem->NumExamples()));
  config.set_max_passes(passes);
  config.set_gap_check(1 << 30);
  config.set_final_gap(false);
  return config;
}

// One BCFW pass (n oracle calls and block steps, plus the per-pass O(dim)
// bookkeeping of the averaged point), timed from the solver's own per-pass
// clock: the second of three passes, so allocation, the first touch of the
// weight vectors and the final hand-over are excluded.
void BM_BcfwPass(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  for (auto _ : state) {
    BcfwSolver solver(PassConfig(3));
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    if (!solver.Solve(*BenchCorpus()->problem, &monitor, &w).ok()) {
      state.SkipWithError("solver failed");
      return;
    }
    state.SetIterationTime(monitor.records()[1].seconds() -
                           monitor.records()[0].seconds());
  }
  state.counters["examples"] = BenchCorpus()->problem->NumExamples();
}
BENCHMARK(BM_BcfwPass)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Tagging the test set with a model trained for a few passes: features,
// unary scores, Viterbi and label conversion, single thread.
void BM_TagTestSet(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  static ChainModel* model = [] {
    BcfwSolver solver(PassConfig(3));
    std::vector<double> w;
    if (!solver.Solve(*BenchCorpus()->problem, nullptr, &w).ok()) {
      return static_cast<ChainModel*>(nullptr);
    }
    ModelFile header;
    for (const std::string& name : BenchCorpus()->labels.names()) {
      header.add_labels(name);
    }
    *header.mutable_features() = BenchCorpus()->config.features();
    header.set_train_scheme(BenchCorpus()->config.model().train_scheme());
    header.set_output_scheme(BenchCorpus()->format.tag_scheme());
    absl::StatusOr<ChainModel> created =
        ChainModel::Create(std::move(header), *BenchCorpus()->rows, w);
    return created.ok() ? new ChainModel(std::move(*created)) : nullptr;
  }();
  if (model == nullptr) {
    state.SkipWithError("training failed");
    return;
  }
  TagScratch scratch;
  std::vector<std::string> tags;
  int64_t tokens = 0;
  for (auto _ : state) {
    for (const Sentence& sentence : BenchCorpus()->test) {
      if (!model->Tag(sentence, &scratch, &tags).ok()) {
        state.SkipWithError("tagging failed");
        return;
      }
      tokens += sentence.size();
    }
    benchmark::DoNotOptimize(tags.data());
  }
  state.counters["tokens_per_second"] = benchmark::Counter(
      static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TagTestSet)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!chaintag::ParseBenchConfigFlag(argc, argv, "bench_tagger")) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
