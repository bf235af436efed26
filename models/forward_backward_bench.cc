// Per-token cost of the entropy-smoothed forward-backward (ForwardBackward::
// Compute at μ = 1, marginals written), the CRF loss's oracle, at 8 labels
// (CoNLL-2003 NER under IOB1), 22 (CoNLL-2000 chunking), 45 (about
// CoNLL-2000's 44 POS tags) and 319 (its joint POS|chunk tags). 16 sentences
// of 15 tokens (about CoNLL-2003's mean length) with normal random scores
// (σ = 3 for the unary scores, 1.5 for the transitions; fixed seed), few
// enough to stay in cache as they do after scoring a sentence. The
// "time/token" counter is the figure to read.
//
// bazel run -c opt //models:forward_backward_bench

#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "models/smoothing.h"
#include "models/viterbi.h"

namespace chaintag {
namespace {

constexpr int kLength = 15;
constexpr int kSentences = 16;

struct Chains {
  int labels = 0;
  std::vector<double> transition, start, end;
  std::vector<std::vector<double>> unary;

  explicit Chains(int num_labels) : labels(num_labels) {
    std::mt19937 random(7);
    std::normal_distribution<double> transition_score(0.0, 1.5);
    std::normal_distribution<double> unary_score(0.0, 3.0);
    for (int k = 0; k < labels * labels; ++k) {
      transition.push_back(transition_score(random));
    }
    for (int k = 0; k < labels; ++k) {
      start.push_back(transition_score(random));
      end.push_back(transition_score(random));
    }
    unary.resize(kSentences);
    for (std::vector<double>& sentence : unary) {
      for (int k = 0; k < kLength * labels; ++k) {
        sentence.push_back(unary_score(random));
      }
    }
  }

  ChainScores scores(int i) const {
    ChainScores view;
    view.length = kLength;
    view.num_labels = labels;
    view.unary = unary[i].data();
    view.transition = transition.data();
    view.start = start.data();
    view.end = end.data();
    return view;
  }
};

void BM_ForwardBackward(benchmark::State& state) {
  const Chains chains(static_cast<int>(state.range(0)));
  const int L = chains.labels;
  std::vector<double> marginals(kLength * L + L * L + 2 * L);
  ForwardBackward forward_backward;
  double sink = 0;
  int64_t tokens = 0;
  for (auto _ : state) {
    for (int i = 0; i < kSentences; ++i) {
      sink += forward_backward.Compute(chains.scores(i), 1.0, marginals.data());
      tokens += kLength;
    }
  }
  benchmark::DoNotOptimize(sink);
  if (forward_backward.used_log_space()) {
    state.SkipWithError("the scaled pass fell back to log space");
  }
  state.counters["time/token"] = benchmark::Counter(
      static_cast<double>(tokens),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ForwardBackward)->Arg(8)->Arg(22)->Arg(45)->Arg(319);

}  // namespace
}  // namespace chaintag
