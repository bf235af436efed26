#include "tools/bench_corpus.h"

#include <cstdio>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "base/paths.h"

namespace chaintag {
namespace {

std::string& ConfigPath() {
  static std::string* path = new std::string;
  return *path;
}

}  // namespace

bool ParseBenchConfigFlag(int argc, char** argv, const char* program) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--config=", 0) == 0) ConfigPath() = arg.substr(9);
  }
  if (ConfigPath().empty()) {
    std::fprintf(stderr, "%s: --config=<preset.textproto> needed\n", program);
    return false;
  }
  return true;
}

PreparedCorpus* BenchCorpus() {
  static PreparedCorpus* corpus = [] {
    absl::StatusOr<PipelineConfig> config = ReadPipelineConfig(ConfigPath());
    if (!config.ok()) return static_cast<PreparedCorpus*>(nullptr);
    // Benchmarks run on the training problem only.
    config->mutable_corpus()->set_retrain_on_train_and_dev(false);
    PipelineOptions options;
    options.corpora_root = DefaultCorporaRoot();
    options.progress = nullptr;
    absl::StatusOr<PreparedCorpus> prepared = PrepareCorpus(*config, options);
    if (!prepared.ok()) return static_cast<PreparedCorpus*>(nullptr);
    return new PreparedCorpus(std::move(*prepared));
  }();
  return corpus;
}

}  // namespace chaintag
