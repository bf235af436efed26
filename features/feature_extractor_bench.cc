// Throughput of FeatureExtractor::Extract on CoNLL-2000-test-like input:
// 2,012 sentences, ~23.5 tokens each, word + POS columns. The sentences are
// synthetic (fixed seed) unless CHAINTAG_CORPORA points at the real corpus,
// in which case BM_ExtractConll2000Test uses conll2000/test.txt too.
//
// bazel run //features:feature_extractor_bench

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "corpora/conll_reader.h"
#include "corpora/sentence.h"
#include "features/feature_config.pb.h"
#include "features/feature_extractor.h"
#include "features/feature_sequence.h"
#include "google/protobuf/text_format.h"

namespace chaintag {
namespace {

// The CRF++ chunking templates: words in a window of 5, word bigrams, POS
// unigrams, bigrams and trigrams.
constexpr char kChunkingTemplates[] = R"pb(
  templates {
    name: "w[-2]"
    parts { offset: -2 attribute: 0 }
  }
  templates {
    name: "w[-1]"
    parts { offset: -1 attribute: 0 }
  }
  templates {
    name: "w[0]"
    parts { offset: 0 attribute: 0 }
  }
  templates {
    name: "w[1]"
    parts { offset: 1 attribute: 0 }
  }
  templates {
    name: "w[2]"
    parts { offset: 2 attribute: 0 }
  }
  templates {
    name: "w[-1]|w[0]"
    parts { offset: -1 attribute: 0 }
    parts { offset: 0 attribute: 0 }
  }
  templates {
    name: "w[0]|w[1]"
    parts { offset: 0 attribute: 0 }
    parts { offset: 1 attribute: 0 }
  }
  templates {
    name: "p[-2]"
    parts { offset: -2 attribute: 1 }
  }
  templates {
    name: "p[-1]"
    parts { offset: -1 attribute: 1 }
  }
  templates {
    name: "p[0]"
    parts { offset: 0 attribute: 1 }
  }
  templates {
    name: "p[1]"
    parts { offset: 1 attribute: 1 }
  }
  templates {
    name: "p[2]"
    parts { offset: 2 attribute: 1 }
  }
  templates {
    name: "p[-2]|p[-1]"
    parts { offset: -2 attribute: 1 }
    parts { offset: -1 attribute: 1 }
  }
  templates {
    name: "p[-1]|p[0]"
    parts { offset: -1 attribute: 1 }
    parts { offset: 0 attribute: 1 }
  }
  templates {
    name: "p[0]|p[1]"
    parts { offset: 0 attribute: 1 }
    parts { offset: 1 attribute: 1 }
  }
  templates {
    name: "p[1]|p[2]"
    parts { offset: 1 attribute: 1 }
    parts { offset: 2 attribute: 1 }
  }
  templates {
    name: "p[-2]|p[-1]|p[0]"
    parts { offset: -2 attribute: 1 }
    parts { offset: -1 attribute: 1 }
    parts { offset: 0 attribute: 1 }
  }
  templates {
    name: "p[-1]|p[0]|p[1]"
    parts { offset: -1 attribute: 1 }
    parts { offset: 0 attribute: 1 }
    parts { offset: 1 attribute: 1 }
  }
  templates {
    name: "p[0]|p[1]|p[2]"
    parts { offset: 0 attribute: 1 }
    parts { offset: 1 attribute: 1 }
    parts { offset: 2 attribute: 1 }
  }
)pb";

// Orthographic templates on top, exercising every transform.
constexpr char kOrthographicTemplates[] = R"pb(
  templates {
    name: "lw[0]"
    parts { attribute: 0 transform: LOWERCASE }
  }
  templates {
    name: "pre3"
    parts { attribute: 0 transform: PREFIX k: 3 }
  }
  templates {
    name: "suf3"
    parts { attribute: 0 transform: SUFFIX k: 3 }
  }
  templates {
    name: "shape"
    parts { attribute: 0 transform: SHAPE }
  }
  templates {
    name: "sshape[-1]|sshape[0]"
    parts { offset: -1 attribute: 0 transform: SHORT_SHAPE }
    parts { offset: 0 attribute: 0 transform: SHORT_SHAPE }
  }
  templates {
    name: "cap"
    parts { attribute: 0 transform: IS_CAPITALIZED }
  }
  templates {
    name: "digit"
    parts { attribute: 0 transform: HAS_DIGIT }
  }
  templates {
    name: "caps"
    parts { attribute: 0 transform: ALL_CAPS }
  }
  templates {
    name: "hyphen"
    parts { attribute: 0 transform: HAS_HYPHEN }
  }
  templates {
    name: "year"
    parts { attribute: 0 transform: MATCHES pattern: "^(19|20)[0-9][0-9]$" }
  }
)pb";

FeatureExtractor MakeExtractor(const std::string& templates) {
  FeatureConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(templates, &config)) {
    std::abort();  // a bug in this file, not bad input
  }
  absl::StatusOr<FeatureExtractor> fx = FeatureExtractor::Create(config);
  if (!fx.ok()) std::abort();
  return *std::move(fx);
}

std::vector<Sentence> SyntheticConll2000Test() {
  std::mt19937 rng(2000);
  const char* kSyllables[] = {"ba",  "con", "de",  "fi",  "ing", "ka", "lo",
                              "men", "no",  "pre", "qui", "ra",  "st", "ter",
                              "u",   "ve",  "wa",  "x",   "yo",  "z",  "tion"};
  const char* kTags[] = {"NN",  "NNP", "NNS", "IN",  "DT",  "JJ",  "VBD",
                         "VBZ", "CD",  "RB",  "VB",  "CC",  "TO",  "PRP",
                         "VBN", "VBG", "MD",  "POS", "WDT", "JJR", "$"};
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 20000; ++i) {
    std::string word;
    for (int s = 0, n = 1 + i % 4; s < n; ++s) {
      word += kSyllables[rng() % (sizeof(kSyllables) / sizeof(char*))];
    }
    vocabulary.push_back(word);
  }
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<Sentence> sentences;
  for (int i = 0; i < 2012; ++i) {
    Sentence s;
    s.num_attributes = 2;
    const int length = 8 + static_cast<int>(rng() % 32);  // mean 23.5
    for (int t = 0; t < length; ++t) {
      std::string word;
      const double u = uniform(rng);
      if (u < 0.05) {
        word = ",";
      } else if (u < 0.08) {
        word = std::to_string(rng() % 3000) + (rng() % 2 ? ".5" : "");
      } else if (u < 0.10) {
        word = vocabulary[rng() % 2000] + "-" + vocabulary[rng() % 2000];
      } else {
        // Zipf-like: rank = V^u.
        const size_t rank = static_cast<size_t>(
            std::pow(static_cast<double>(vocabulary.size()), uniform(rng)));
        word = vocabulary[rank - 1];
        if (t == 0 || uniform(rng) < 0.12) word[0] = word[0] - 'a' + 'A';
      }
      const std::string tag = kTags[std::hash<std::string>()(word) %
                                    (sizeof(kTags) / sizeof(char*))];
      s.attributes.push_back(word);
      s.attributes.push_back(tag);
    }
    s.attributes.push_back(".");
    s.attributes.push_back(".");
    sentences.push_back(std::move(s));
  }
  return sentences;
}

// conll2000/test.txt when CHAINTAG_CORPORA has it: `word POS chunk` lines.
std::vector<Sentence> RealConll2000Test() {
  const char* root = std::getenv("CHAINTAG_CORPORA");
  if (root == nullptr) return {};
  ConllFormat format;
  format.add_attribute_columns(0);
  format.add_attribute_columns(1);
  format.set_label_column(2);
  absl::StatusOr<std::vector<Sentence>> sentences =
      ReadConllFile(std::string(root) + "/conll2000/test.txt", format);
  return sentences.ok() ? *std::move(sentences) : std::vector<Sentence>();
}

void RunExtract(benchmark::State& state, const std::vector<Sentence>& corpus,
                const FeatureExtractor& fx) {
  if (corpus.empty()) {
    state.SkipWithError("corpus not available");
    return;
  }
  int64_t tokens_per_pass = 0;
  for (const Sentence& s : corpus) tokens_per_pass += s.size();
  FeatureSequence seq;
  int64_t features = 0;
  for (auto _ : state) {
    for (const Sentence& s : corpus) {
      if (!fx.Extract(s, &seq).ok()) std::abort();
      features += static_cast<int64_t>(seq.buckets.size());
    }
    benchmark::DoNotOptimize(seq.buckets.data());
  }
  state.SetItemsProcessed(state.iterations() * tokens_per_pass);
  state.counters["tokens/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * tokens_per_pass),
      benchmark::Counter::kIsRate);
  state.counters["features/token"] = benchmark::Counter(
      static_cast<double>(features) /
          static_cast<double>(state.iterations() * tokens_per_pass),
      benchmark::Counter::kAvgThreads);
}

void BM_ExtractChunkingTemplates(benchmark::State& state) {
  static const auto* corpus =
      new std::vector<Sentence>(SyntheticConll2000Test());
  static const auto* fx =
      new FeatureExtractor(MakeExtractor(kChunkingTemplates));
  RunExtract(state, *corpus, *fx);
}
BENCHMARK(BM_ExtractChunkingTemplates)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExtractChunkingTemplates)
    ->Unit(benchmark::kMillisecond)
    ->Threads(2)
    ->UseRealTime();

void BM_ExtractChunkingAndOrthographic(benchmark::State& state) {
  static const auto* corpus =
      new std::vector<Sentence>(SyntheticConll2000Test());
  static const auto* fx = new FeatureExtractor(
      MakeExtractor(std::string(kChunkingTemplates) + kOrthographicTemplates));
  RunExtract(state, *corpus, *fx);
}
BENCHMARK(BM_ExtractChunkingAndOrthographic)->Unit(benchmark::kMillisecond);

void BM_ExtractConll2000Test(benchmark::State& state) {
  static const auto* corpus = new std::vector<Sentence>(RealConll2000Test());
  static const auto* fx = new FeatureExtractor(
      MakeExtractor(std::string(kChunkingTemplates) + kOrthographicTemplates));
  RunExtract(state, *corpus, *fx);
}
BENCHMARK(BM_ExtractConll2000Test)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace chaintag
