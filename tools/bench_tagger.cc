// Benchmarks on CoNLL-2000 with the chunking preset: tagging throughput on
// the test set (feature extraction + unary scores + Viterbi, one thread),
// in process and as a whole `tag` process, and the time of one BCFW pass
// over the training set.
//
//   bazel run //tools:bench_tagger
//
// The whole-process figures run the `tag` binary (--tag=<path>) on the test
// file with the model saved: `load_ms` on empty input (start-up, model load
// and validation), and the marginal rate from the test file and the test
// file repeated ten times, (10 − 1)·tokens / (t10 − t1), which leaves out
// start-up and loading. BM_LoadModel is ChainModel::Load alone, in process.
// (Peak RSS is /usr/bin/time -v's to measure: a child's ru_maxrss starts
// from its parent's high-water mark on Linux, so this process cannot.)
//
// The corpora come from $CHAINTAG_CORPORA or ../shared/corpora beside the
// workspace; the preset config is passed by the target's args.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/paths.h"
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

// A model trained for a few passes (nullptr when training fails).
const ChainModel* TrainedModel() {
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
    // As the pipeline writes it, so that `tag` reads the saved model.
    *header.mutable_input_format() = BenchCorpus()->format;
    header.mutable_input_format()->set_allow_missing_label(true);
    header.set_input_num_columns(BenchCorpus()->num_columns);
    absl::StatusOr<ChainModel> created =
        ChainModel::Create(std::move(header), *BenchCorpus()->rows, w);
    return created.ok() ? new ChainModel(std::move(*created)) : nullptr;
  }();
  return model;
}

// Tagging the test set with a model trained for a few passes: features,
// unary scores, Viterbi and label conversion, single thread.
void BM_TagTestSet(benchmark::State& state) {
  if (BenchCorpus() == nullptr) {
    state.SkipWithError("corpus not found (set CHAINTAG_CORPORA)");
    return;
  }
  const ChainModel* model = TrainedModel();
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

std::string TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

// TrainedModel() saved to a file once; empty when that fails.
const std::string& SavedModelPath() {
  static const std::string* path = [] {
    const ChainModel* model = TrainedModel();
    const std::string file = TempDir() + "/bench_tagger.model";
    return new std::string(model != nullptr && model->Save(file).ok() ? file
                                                                      : "");
  }();
  return *path;
}

// ChainModel::Load of the saved model: read, validation, rank index,
// extractor (its templates and patterns).
void BM_LoadModel(benchmark::State& state) {
  if (BenchCorpus() == nullptr || SavedModelPath().empty()) {
    state.SkipWithError("no corpus or model");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<ChainModel> model = ChainModel::Load(SavedModelPath());
    if (!model.ok()) {
      state.SkipWithError("load failed");
      return;
    }
    benchmark::DoNotOptimize(model->rows().size());
  }
}
BENCHMARK(BM_LoadModel)->Unit(benchmark::kMillisecond);

std::string& TagBinary() {
  static std::string* path = new std::string;
  return *path;
}

struct ProcessRun {
  double seconds = 0;
  bool ok = false;
};

// Runs `tag --model=<model> --input=<input> --threads=<threads>` with its
// output to /dev/null: wall time.
ProcessRun RunTag(const std::string& model, const std::string& input,
                  int threads) {
  std::vector<std::string> args = {TagBinary(), "--model=" + model,
                                   "--input=" + input,
                                   absl::StrCat("--threads=", threads)};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  ProcessRun run;
  const absl::Time start = absl::Now();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) ==
      0) {
    int status = 0;
    if (waitpid(pid, &status, 0) == pid) {
      run.seconds = absl::ToDoubleSeconds(absl::Now() - start);
      run.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  return run;
}

// `tag` as a user runs it, on the saved model: see the top of this file.
// The benchmark argument is --threads.
void BM_TagProcess(benchmark::State& state) {
  if (BenchCorpus() == nullptr || SavedModelPath().empty() ||
      TagBinary().empty()) {
    state.SkipWithError("no corpus, model or --tag binary");
    return;
  }
  const std::string dir = TempDir();
  const std::string& model_path = SavedModelPath();
  const std::string empty = dir + "/bench_tagger.empty.txt";
  const std::string once = dir + "/bench_tagger.test1.txt";
  const std::string ten = dir + "/bench_tagger.test10.txt";
  static bool written = [&] {
    std::ifstream in(ResolvePath(DefaultCorporaRoot(),
                                 BenchCorpus()->config.corpus().test()),
                     std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::ofstream(empty, std::ios::binary);
    std::ofstream(once, std::ios::binary) << text.str();
    std::ofstream out(ten, std::ios::binary);
    for (int k = 0; k < 10; ++k) out << text.str();
    return !text.str().empty();
  }();
  if (!written) {
    state.SkipWithError("cannot read the test file");
    return;
  }
  int64_t tokens = 0;
  for (const Sentence& sentence : BenchCorpus()->test)
    tokens += sentence.size();
  const int threads = static_cast<int>(state.range(0));
  ProcessRun load, one, many;
  for (auto _ : state) {
    load = RunTag(model_path, empty, threads);
    one = RunTag(model_path, once, threads);
    many = RunTag(model_path, ten, threads);
    if (!load.ok || !one.ok || !many.ok) {
      state.SkipWithError("tag failed");
      return;
    }
    state.SetIterationTime(many.seconds);
  }
  state.counters["load_ms"] = 1000 * load.seconds;
  state.counters["whole_tokens_per_second"] = 10 * tokens / many.seconds;
  state.counters["marginal_tokens_per_second"] =
      9 * tokens / (many.seconds - one.seconds);
}
BENCHMARK(BM_TagProcess)
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!chaintag::ParseBenchConfigFlag(argc, argv, "bench_tagger")) return 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--tag=", 0) == 0) {
      // Absolute, as the benchmark may change directory before spawning.
      char* resolved = realpath(arg.substr(6).c_str(), nullptr);
      if (resolved != nullptr) {
        chaintag::TagBinary() = resolved;
        std::free(resolved);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
