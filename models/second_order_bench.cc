// Per-token cost of the second-order decoders on a chunking-sized problem:
// the 22 labels of CoNLL-2000 chunking under IOB2, 760
// weighted trigrams and 145 weighted pairs drawn among the allowed ones,
// 8 sentences of 24 tokens with random scores (fixed seed). The
// "time/token" counter is the figure to read; the BM_FirstOrder* ones are
// the first-order decoders on the same labels and sentences, for scale,
// without (pairs:0) and with (pairs:1) observation-conditioned transitions
// (an L×L pair score table per position).
//
// bazel run //models:second_order_bench

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "models/second_order.h"
#include "models/second_order_forward_backward.h"
#include "models/second_order_top_k.h"
#include "models/second_order_viterbi.h"
#include "models/smoothing.h"
#include "models/top_k_viterbi.h"
#include "models/transition_constraints.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

// CoNLL-2000's training set: 11 chunk types, one of which (LST) never
// continues, so 22 labels.
const char* const kTypes[] = {"NP",  "VP",    "PP",   "ADVP", "SBAR", "ADJP",
                              "PRT", "CONJP", "INTJ", "UCP",  "LST"};
constexpr int kLabels = 22;
constexpr int kTrigrams = 760;
constexpr int kPairs = 145;
constexpr int kLength = 24;
// Few enough that their scores stay in cache, as they are when a decoder
// runs right after scoring a sentence.
constexpr int kSentences = 8;

struct Sentence {
  std::vector<double> unary;       // kLength × kLabels
  std::vector<double> pair_unary;  // kLength × kPairs
  // First order: kLength × kLabels² observation-conditioned transitions.
  std::vector<double> pair;
};

struct Problem {
  SecondOrderStructure structure;
  std::vector<double> transition, start, end, trigram;
  std::vector<Sentence> sentences;

  SecondOrderScores scores(const Sentence& sentence) const {
    SecondOrderScores view;
    view.length = kLength;
    view.unary = sentence.unary.data();
    view.transition = transition.data();
    view.start = start.data();
    view.end = end.data();
    view.trigram = trigram.data();
    view.pair_unary = sentence.pair_unary.data();
    return view;
  }
};

std::vector<std::string> ChunkLabels() {
  std::vector<std::string> labels = {"O"};
  for (const char* type : kTypes) {
    labels.push_back(std::string("B-") + type);
    if (std::string(type) != "LST") labels.push_back(std::string("I-") + type);
  }
  return labels;
}

SecondOrderStructure MakeStructure(const TransitionConstraints& constraints,
                                   std::mt19937* rng) {
  std::vector<LabelTrigram> trigrams;
  std::vector<LabelPair> pairs;
  for (int a = 0; a < kLabels; ++a) {
    for (int b = 0; b < kLabels; ++b) {
      if (!constraints.transition_allowed(a, b)) continue;
      pairs.push_back({a, b});
      for (int c = 0; c < kLabels; ++c) {
        if (constraints.transition_allowed(b, c)) trigrams.push_back({a, b, c});
      }
    }
  }
  std::shuffle(trigrams.begin(), trigrams.end(), *rng);
  std::shuffle(pairs.begin(), pairs.end(), *rng);
  trigrams.resize(std::min<size_t>(trigrams.size(), kTrigrams));
  pairs.resize(std::min<size_t>(pairs.size(), kPairs));
  absl::StatusOr<SecondOrderStructure> structure = SecondOrderStructure::Create(
      kLabels, constraints, std::move(trigrams), std::move(pairs));
  if (!structure.ok()) std::abort();  // a bug in this file
  return *std::move(structure);
}

const Problem& ChunkingProblem() {
  static const Problem* const problem = [] {
    std::mt19937 rng(15);
    std::uniform_real_distribution<double> score(-2, 2);
    auto draw = [&](size_t n) {
      std::vector<double> values(n);
      for (double& v : values) v = score(rng);
      return values;
    };
    const std::vector<std::string> labels = ChunkLabels();
    if (labels.size() != kLabels) std::abort();
    const TransitionConstraints constraints(labels, IOB2);
    auto* p = new Problem{MakeStructure(constraints, &rng)};
    p->transition = draw(kLabels * kLabels);
    p->start = draw(kLabels);
    p->end = draw(kLabels);
    p->trigram = draw(kTrigrams);
    for (int i = 0; i < kSentences; ++i) {
      p->sentences.push_back({draw(kLength * kLabels), draw(kLength * kPairs),
                              draw(kLength * kLabels * kLabels)});
    }
    return p;
  }();
  return *problem;
}

// Runs `decode(sentence)` over every sentence per iteration and reports the
// time per token.
template <typename Decode>
void RunPerToken(benchmark::State& state, Decode decode) {
  const Problem& problem = ChunkingProblem();
  for (auto _ : state) {
    for (const Sentence& sentence : problem.sentences) decode(sentence);
  }
  const double tokens = static_cast<double>(kSentences) * kLength;
  state.SetItemsProcessed(state.iterations() * kSentences * kLength);
  state.counters["time/token"] =
      benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate |
                                     benchmark::Counter::kInvert);
}

void BM_Viterbi(benchmark::State& state) {
  const Problem& problem = ChunkingProblem();
  SecondOrderViterbi viterbi;
  std::vector<int32_t> labels(kLength);
  RunPerToken(state, [&](const Sentence& sentence) {
    benchmark::DoNotOptimize(viterbi.Decode(
        problem.structure, problem.scores(sentence), labels.data()));
  });
  state.counters["states"] = problem.structure.num_states();
  state.counters["edges"] = problem.structure.num_edges();
}
BENCHMARK(BM_Viterbi);

void BM_TopK(benchmark::State& state) {
  const Problem& problem = ChunkingProblem();
  SecondOrderTopK top_k;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  RunPerToken(state, [&](const Sentence& sentence) {
    benchmark::DoNotOptimize(top_k.Decode(problem.structure,
                                          problem.scores(sentence),
                                          state.range(0), &labelings, &scores));
  });
}
BENCHMARK(BM_TopK)->Arg(5);

void BM_ForwardBackward(benchmark::State& state) {
  const Problem& problem = ChunkingProblem();
  SecondOrderForwardBackward fb;
  std::vector<double> marginals(
      SecondOrderForwardBackward::MarginalsSize(problem.structure, kLength));
  const bool with_marginals = state.range(0) != 0;
  RunPerToken(state, [&](const Sentence& sentence) {
    benchmark::DoNotOptimize(
        fb.Compute(problem.structure, problem.scores(sentence), 1.0,
                   with_marginals ? marginals.data() : nullptr));
  });
}
BENCHMARK(BM_ForwardBackward)->ArgName("marginals")->Arg(1)->Arg(0);

// The first-order view of a sentence, with its pair scores when `pairs`.
ChainScores FirstOrderScores(const Problem& problem, const Sentence& sentence,
                             bool pairs) {
  ChainScores scores = {kLength,
                        kLabels,
                        sentence.unary.data(),
                        problem.transition.data(),
                        problem.start.data(),
                        problem.end.data()};
  if (pairs) scores.pair = sentence.pair.data();
  return scores;
}

void BM_FirstOrderViterbi(benchmark::State& state) {
  const Problem& problem = ChunkingProblem();
  ViterbiDecoder viterbi;
  std::vector<int32_t> labels(kLength);
  RunPerToken(state, [&](const Sentence& sentence) {
    benchmark::DoNotOptimize(
        viterbi.Decode(FirstOrderScores(problem, sentence, state.range(0) != 0),
                       labels.data()));
  });
}
BENCHMARK(BM_FirstOrderViterbi)->ArgName("pairs")->Arg(0)->Arg(1);

void BM_FirstOrderTopK(benchmark::State& state) {
  const Problem& problem = ChunkingProblem();
  TopKViterbi top_k;
  std::vector<int32_t> labelings;
  std::vector<double> scores;
  RunPerToken(state, [&](const Sentence& sentence) {
    benchmark::DoNotOptimize(
        top_k.Decode(FirstOrderScores(problem, sentence, state.range(0) != 0),
                     5, &labelings, &scores));
  });
}
BENCHMARK(BM_FirstOrderTopK)->ArgName("pairs")->Arg(0)->Arg(1);

void BM_FirstOrderForwardBackward(benchmark::State& state) {
  const Problem& problem = ChunkingProblem();
  ForwardBackward fb;
  const bool pairs = state.range(0) != 0;
  // The block-state layout: with pairs, the per-position pair marginals too.
  std::vector<double> marginals(kLength * kLabels + kLabels * kLabels +
                                2 * kLabels +
                                (pairs ? kLength * kLabels * kLabels : 0));
  RunPerToken(state, [&](const Sentence& sentence) {
    benchmark::DoNotOptimize(fb.Compute(
        FirstOrderScores(problem, sentence, pairs), 1.0, marginals.data()));
  });
}
BENCHMARK(BM_FirstOrderForwardBackward)->ArgName("pairs")->Arg(0)->Arg(1);

}  // namespace
}  // namespace chaintag
