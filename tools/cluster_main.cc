// cluster: Brown word clusters (features/brown_clustering.h) from raw text
// and/or the word column of a CoNLL file, written as a WordClusters proto
// and optionally as Liang's `paths` text (bitstring<TAB>word<TAB>count).
//
//   bazel run //tools:cluster -- --conll=eng.train --output=eng.clusters
//       --num_clusters=100 --text_output=eng.paths
//   bazel run //tools:cluster -- --input=news.txt --output=news.clusters
//       --num_clusters=300 --min_count=3
// (one command line each)
//
// With both --input and --conll the two texts are counted together.
// Progress and the time taken go to stderr.

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/file_io.h"
#include "base/paths.h"
#include "features/bigram_counts.h"
#include "features/brown_clustering.h"
#include "features/word_clusters.h"

ABSL_FLAG(std::string, input, "",
          "Raw UTF-8 text: one sentence per line, words separated by "
          "whitespace.");
ABSL_FLAG(std::string, conll, "",
          "CoNLL column file (blank line between sentences); its "
          "--word_column is the text.");
ABSL_FLAG(int, word_column, 0,
          "Zero-based column of --conll that holds words.");
ABSL_FLAG(int, num_clusters, 100,
          "C: clusters kept while words enter, the leaves of the tree (2 to "
          "4096).");
ABSL_FLAG(int64_t, min_count, 1, "Words seen fewer times are left out.");
ABSL_FLAG(std::string, source, "",
          "What the text was, recorded in the output (default: the input "
          "files as given).");
ABSL_FLAG(std::string, output, "",
          "WordClusters binary proto to write (atomically).");
ABSL_FLAG(std::string, text_output, "",
          "Also write bitstring<TAB>word<TAB>count lines here.");

namespace chaintag {
namespace {

std::string DefaultSource() {
  std::string source;
  if (!absl::GetFlag(FLAGS_input).empty()) {
    source = absl::GetFlag(FLAGS_input);
  }
  if (!absl::GetFlag(FLAGS_conll).empty()) {
    absl::StrAppend(&source, source.empty() ? "" : " + ",
                    absl::GetFlag(FLAGS_conll), " (column ",
                    absl::GetFlag(FLAGS_word_column), ")");
  }
  return source;
}

absl::Status CountText(BigramCounts* counts) {
  if (!absl::GetFlag(FLAGS_input).empty()) {
    absl::Status status =
        AddRawTextFile(ResolveUserPath(absl::GetFlag(FLAGS_input)), counts);
    if (!status.ok()) return status;
  }
  if (!absl::GetFlag(FLAGS_conll).empty()) {
    return AddConllFile(ResolveUserPath(absl::GetFlag(FLAGS_conll)),
                        absl::GetFlag(FLAGS_word_column), counts);
  }
  return absl::OkStatus();
}

absl::Status WriteOutputs(const WordClusters& clusters) {
  if (!absl::GetFlag(FLAGS_output).empty()) {
    absl::Status status = WriteWordClusters(
        clusters, ResolveUserPath(absl::GetFlag(FLAGS_output)));
    if (!status.ok()) return status;
  }
  if (!absl::GetFlag(FLAGS_text_output).empty()) {
    return WriteFileAtomically(
        ResolveUserPath(absl::GetFlag(FLAGS_text_output)),
        WordClustersPathsText(clusters), "the cluster paths file");
  }
  return absl::OkStatus();
}

// Counts the text the flags name, clusters it and writes the outputs.
absl::StatusOr<WordClusters> ClusterAndWrite(BigramCounts* counts) {
  absl::Status status = CountText(counts);
  if (!status.ok()) return status;
  BrownClusteringOptions options;
  options.num_clusters = absl::GetFlag(FLAGS_num_clusters);
  options.min_count = absl::GetFlag(FLAGS_min_count);
  options.source = absl::GetFlag(FLAGS_source).empty()
                       ? DefaultSource()
                       : absl::GetFlag(FLAGS_source);
  absl::StatusOr<WordClusters> clusters = BuildBrownClusters(*counts, options);
  if (!clusters.ok()) return clusters.status();
  status = WriteOutputs(*clusters);
  if (!status.ok()) return status;
  return clusters;
}

int Run() {
  if (absl::GetFlag(FLAGS_input).empty() &&
      absl::GetFlag(FLAGS_conll).empty()) {
    std::fprintf(stderr, "cluster: give --input, --conll or both\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_output).empty() &&
      absl::GetFlag(FLAGS_text_output).empty()) {
    std::fprintf(stderr, "cluster: give --output, --text_output or both\n");
    return 2;
  }
  const absl::Time start = absl::Now();
  BigramCounts counts;
  absl::StatusOr<WordClusters> clusters = ClusterAndWrite(&counts);
  if (!clusters.ok()) {
    // The message names the file (and line) at fault.
    std::fprintf(stderr, "cluster: %s\n",
                 std::string(clusters.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr,
               "cluster: %lld tokens, %d of %zu distinct words kept, %d "
               "clusters, %.2f s\n",
               static_cast<long long>(counts.num_tokens()),
               clusters->word_size(), counts.words().size(),
               clusters->bit_string_size(),
               absl::ToDoubleSeconds(absl::Now() - start));
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Brown word clusters from raw text and/or a CoNLL word column.\n"
      "  cluster --conll=eng.train --num_clusters=100 --output=eng.clusters");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
