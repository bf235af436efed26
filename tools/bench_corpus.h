// The corpus the benchmarks run on: the preset named by --config=<path>,
// read from DefaultCorporaRoot() and prepared once per process, so that
// reading and featurising it is not what is timed.
//
// Thread-safety: call ParseBenchConfigFlag before any benchmark runs;
// BenchCorpus is then safe to call from any thread.

#ifndef CHAINTAG_TOOLS_BENCH_CORPUS_H_
#define CHAINTAG_TOOLS_BENCH_CORPUS_H_

#include "pipeline/pipeline.h"

namespace chaintag {

// Takes the preset path from the last `--config=<path>` in argv[1..argc).
// Without one, prints "<program>: --config=<preset.textproto> needed" to
// stderr and returns false.
bool ParseBenchConfigFlag(int argc, char** argv, const char* program);

// The prepared corpus of the --config preset, built on the first call and
// kept for the life of the process; nullptr when the config or the corpus
// cannot be read.
PreparedCorpus* BenchCorpus();

}  // namespace chaintag

#endif  // CHAINTAG_TOOLS_BENCH_CORPUS_H_
