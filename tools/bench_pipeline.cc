// Throughput of tagging with a bundle (tagging/bundle.h; its stages up to
// the one writing "chunk"), one thread: raw text -> tokens -> POS -> chunk on
// the CoNLL-2000 test text (each sentence's words joined by spaces, one
// sentence per line, as `tag
// --pipeline` reads it), its parts (the tokenizer alone; the bundle on
// pre-tokenized words), and the chunker alone on the CoNLL columns (gold
// POS). Reported as tokens_per_second.
//
//   bazel run //pipeline:english_bundle       # once, writes ./english_bundle
//   bazel run //tools:bench_pipeline [-- --bundle=DIR]
//
// The bundle (a directory) defaults to ./english_bundle in the caller's
// directory; the
// corpora come from $CHAINTAG_CORPORA or ../shared/corpora beside the
// workspace.

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/paths.h"
#include "benchmark/benchmark.h"
#include "corpora/conll_reader.h"
#include "corpora/tokenizer.h"
#include "models/chain_model.h"
#include "tagging/bundle.h"

namespace chaintag {
namespace {

std::string& BundlePath() {
  static std::string path = "english_bundle";
  return path;
}

struct Data {
  std::unique_ptr<Bundle> bundle;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::string> lines;               // raw text
  std::vector<std::vector<std::string>> words;  // the corpus's tokens
  std::vector<Sentence> chunk_input;            // word POS columns
  std::string error;
};

const Data& GetData() {
  static const Data* data = [] {
    auto* d = new Data;
    // The stages up to the chunker (a bundle with NER has one more).
    const std::string dir = ResolveUserPath(BundlePath());
    const std::string manifest_path = dir + "/" + kBundleManifestName;
    absl::StatusOr<BundleManifest> manifest = ReadBundleManifest(manifest_path);
    if (!manifest.ok()) {
      d->error = std::string(manifest.status().message()) +
                 " (run //pipeline:english_bundle first)";
      return d;
    }
    std::vector<ChainModel> models;
    int kept = 0;
    for (const BundleStage& stage : manifest->stages()) {
      absl::StatusOr<ChainModel> model =
          ChainModel::Load(ResolvePath(dir, stage.model()));
      if (!model.ok()) {
        d->error = std::string(model.status().message());
        return d;
      }
      models.push_back(std::move(*model));
      ++kept;
      if (stage.writes() == "chunk") break;
    }
    while (manifest->stages_size() > kept)
      manifest->mutable_stages()->RemoveLast();
    absl::StatusOr<Bundle> bundle =
        Bundle::Create(*manifest, std::move(models), manifest_path);
    if (!bundle.ok()) {
      d->error = std::string(bundle.status().message());
      return d;
    }
    d->bundle = std::make_unique<Bundle>(std::move(*bundle));
    d->tokenizer = *Tokenizer::Create();
    const std::string test = DefaultCorporaRoot() + "/conll2000/test.txt";
    const int chunk = d->bundle->FindStage("chunk");
    if (chunk < 0) {
      d->error = "the bundle has no chunk stage";
      return d;
    }
    absl::StatusOr<std::vector<Sentence>> sentences = ReadConllFile(
        test, d->bundle->stage_model(chunk).header().input_format());
    if (!sentences.ok()) {
      d->error = std::string(sentences.status().message());
      return d;
    }
    d->chunk_input = std::move(*sentences);
    for (const Sentence& sentence : d->chunk_input) {
      std::vector<std::string> words;
      for (int t = 0; t < sentence.size(); ++t) {
        words.push_back(sentence.attribute(t, 0));
      }
      d->lines.push_back(absl::StrJoin(words, " "));
      d->words.push_back(std::move(words));
    }
    return d;
  }();
  return *data;
}

#define CHAINTAG_NEED_DATA(state)            \
  const Data& data = GetData();              \
  if (!data.error.empty()) {                 \
    state.SkipWithError(data.error.c_str()); \
    return;                                  \
  }

void SetRate(benchmark::State& state, int64_t tokens) {
  state.counters["tokens_per_second"] = benchmark::Counter(
      static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

// Raw text -> tokens -> every stage; range(0): constrained decoding.
void BM_RawTextPipeline(benchmark::State& state) {
  CHAINTAG_NEED_DATA(state);
  BundleOptions options;
  options.constrained = state.range(0) != 0;
  BundleScratch scratch;
  std::vector<StageOutput> outputs;
  std::vector<std::string> words;
  int64_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& line : data.lines) {
      words.clear();
      for (Token& token : data.tokenizer->Tokenize(line)) {
        words.push_back(std::move(token.text));
      }
      if (!data.bundle->Tag(words, options, &scratch, &outputs).ok()) {
        state.SkipWithError("tagging failed");
        return;
      }
      tokens += static_cast<int64_t>(words.size());
    }
    benchmark::DoNotOptimize(outputs.data());
  }
  SetRate(state, tokens);
}
BENCHMARK(BM_RawTextPipeline)
    ->ArgName("constrained")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);

// The tokenizer alone on the same lines.
void BM_Tokenizer(benchmark::State& state) {
  CHAINTAG_NEED_DATA(state);
  int64_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& line : data.lines) {
      std::vector<Token> result = data.tokenizer->Tokenize(line);
      tokens += static_cast<int64_t>(result.size());
      benchmark::DoNotOptimize(result.data());
    }
  }
  SetRate(state, tokens);
}
BENCHMARK(BM_Tokenizer)->Unit(benchmark::kMillisecond);

// The bundle on the corpus's own tokens (no tokenizer), constrained.
void BM_BundleOnTokens(benchmark::State& state) {
  CHAINTAG_NEED_DATA(state);
  BundleScratch scratch;
  std::vector<StageOutput> outputs;
  int64_t tokens = 0;
  for (auto _ : state) {
    for (const std::vector<std::string>& words : data.words) {
      if (!data.bundle->Tag(words, {}, &scratch, &outputs).ok()) {
        state.SkipWithError("tagging failed");
        return;
      }
      tokens += static_cast<int64_t>(words.size());
    }
    benchmark::DoNotOptimize(outputs.data());
  }
  SetRate(state, tokens);
}
BENCHMARK(BM_BundleOnTokens)->Unit(benchmark::kMillisecond);

// The chunker alone on CoNLL columns (word, gold POS), as `tag --model`
// runs it: plain Viterbi and tags in the output scheme.
void BM_ChunkerOnColumns(benchmark::State& state) {
  CHAINTAG_NEED_DATA(state);
  const ChainModel& model =
      data.bundle->stage_model(data.bundle->FindStage("chunk"));
  TagScratch scratch;
  std::vector<std::string> tags;
  int64_t tokens = 0;
  for (auto _ : state) {
    for (const Sentence& sentence : data.chunk_input) {
      if (!model.Tag(sentence, &scratch, &tags).ok()) {
        state.SkipWithError("tagging failed");
        return;
      }
      tokens += sentence.size();
    }
    benchmark::DoNotOptimize(tags.data());
  }
  SetRate(state, tokens);
}
BENCHMARK(BM_ChunkerOnColumns)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--bundle=", 9) == 0) {
      chaintag::BundlePath() = argv[i] + 9;
    } else {
      std::fprintf(stderr, "bench_pipeline: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
