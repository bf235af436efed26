// Benchmarks on CoNLL-2000 with the chunking preset: tagging throughput on
// the test set (feature extraction + unary scores + Viterbi, one thread)
// and the time of one BCFW pass over the training set.
//
//   bazel run //tools:bench_tagger
//
// The corpora come from $CHAINTAG_CORPORA or ../shared/corpora beside the
// workspace; the preset config is passed by the target's args.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "models/chain_model.h"
#include "pipeline/pipeline.h"
#include "solvers/bcfw.h"

namespace chaintag {
namespace {

std::string g_config_path;

// Prepared once: reading and featurising the corpus is not what is timed.
PreparedCorpus* Corpus() {
  static PreparedCorpus* corpus = [] {
    absl::StatusOr<PipelineConfig> config = ReadPipelineConfig(g_config_path);
    if (!config.ok()) return static_cast<PreparedCorpus*>(nullptr);
    PipelineOptions options;
    options.corpora_root = DefaultCorporaRoot();
    options.progress = nullptr;
    absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(*config, options);
    if (!prepared.ok()) return static_cast<PreparedCorpus*>(nullptr);
    return new PreparedCorpus(std::move(*prepared));
  }();
  return corpus;
}

SolverConfig PassConfig(int passes) {
  SolverConfig config = Corpus()->config.solver();
  config.set_lambda(ResolveLambda(config, Corpus()->problem->NumExamples()));
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
  if (Corpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  for (auto _ : state) {
    BcfwSolver solver(PassConfig(3));
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    std::vector<double> w;
    if (!solver.Solve(*Corpus()->problem, &monitor, &w).ok()) {
      state.SkipWithError("solver failed");
      return;
    }
    state.SetIterationTime(monitor.records()[1].seconds() -
                           monitor.records()[0].seconds());
  }
  state.counters["examples"] = Corpus()->problem->NumExamples();
}
BENCHMARK(BM_BcfwPass)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// Tagging the test set with a model trained for a few passes: features,
// unary scores, Viterbi and label conversion, single thread.
void BM_TagTestSet(benchmark::State& state) {
  if (Corpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  static ChainModel* model = [] {
    BcfwSolver solver(PassConfig(3));
    std::vector<double> w;
    if (!solver.Solve(*Corpus()->problem, nullptr, &w).ok()) {
      return static_cast<ChainModel*>(nullptr);
    }
    ModelFile header;
    for (const std::string& name : Corpus()->labels.names()) {
      header.add_labels(name);
    }
    *header.mutable_features() = Corpus()->config.features();
    header.set_train_scheme(Corpus()->config.model().train_scheme());
    header.set_output_scheme(Corpus()->format.tag_scheme());
    absl::StatusOr<ChainModel> created =
        ChainModel::Create(std::move(header), std::move(w));
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
    for (const Sentence& sentence : Corpus()->test) {
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
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--config=", 0) == 0) {
      chaintag::g_config_path = arg.substr(9);
    }
  }
  if (chaintag::g_config_path.empty()) {
    std::fprintf(stderr, "bench_tagger: --config=<preset.textproto> needed\n");
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
