// tag_call_bench: the C++ cost of one ChainModel::Tag call on one sentence
// (the first of exactly `length` tokens in a CoNLL file), reused scratch,
// as model.tag reuses it: the baseline of the Python per-call overhead
// (python/README.md). Prints the median over `repeats` runs of `calls`
// calls, in ns per call.
//
//   tag_call_bench <model> <conll file> [length=20] [calls=200000] [repeats=5]
//
// Thread-safety: a single-threaded program.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "corpora/conll_reader.h"
#include "models/chain_model.h"

namespace chaintag {
namespace {

int Run(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: tag_call_bench <model> <conll file> [length] [calls] "
                 "[repeats]\n");
    return 2;
  }
  const int length = argc > 3 ? std::atoi(argv[3]) : 20;
  const int calls = argc > 4 ? std::atoi(argv[4]) : 200000;
  const int repeats = argc > 5 ? std::atoi(argv[5]) : 5;
  absl::StatusOr<ChainModel> model = ChainModel::Load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  ConllFormat format = model->header().input_format();
  format.set_allow_missing_label(true);
  absl::StatusOr<std::vector<Sentence>> sentences =
      ReadConllFile(argv[2], format);
  if (!sentences.ok()) {
    std::fprintf(stderr, "%s\n", sentences.status().ToString().c_str());
    return 1;
  }
  auto it = std::find_if(sentences->begin(), sentences->end(),
                         [&](const Sentence& s) { return s.size() == length; });
  if (it == sentences->end()) {
    std::fprintf(stderr, "no sentence of %d tokens\n", length);
    return 1;
  }
  TagScratch scratch;
  std::vector<std::string> tags;
  std::vector<double> per_call;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
      absl::Status status = model->Tag(*it, &scratch, &tags);
      if (!status.ok()) {
        std::fprintf(stderr, "%s\n", status.ToString().c_str());
        return 1;
      }
    }
    const std::chrono::duration<double, std::nano> elapsed =
        std::chrono::steady_clock::now() - start;
    per_call.push_back(elapsed.count() / calls);
    std::printf("run %d: %.1f ns/call\n", r + 1, per_call.back());
  }
  std::sort(per_call.begin(), per_call.end());
  std::printf("sentence (line %lld): %s\ntags: %s\nmedian: %.1f ns/call\n",
              static_cast<long long>(it->first_line),
              it->attribute(0, 0).c_str(), absl::StrJoin(tags, " ").c_str(),
              per_call[per_call.size() / 2]);
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) { return chaintag::Run(argc, argv); }
