// Word clusters for cluster features in the style of Ratinov and Roth
// (2009): the WordClusters proto (features/word_clusters.proto) of a word's
// cluster and the clusters' bit-strings, whose prefixes name coarser and
// finer clusters. Here is what reads it: its validation, the word →
// bit-string lookup the features use, Liang's `paths` text, and the file
// written and read back. features/brown_clustering.h makes the clusters.
//
// Thread-safety: stateless functions; a WordClusterTable is immutable after
// construction and safe from any thread.

#ifndef CHAINTAG_FEATURES_WORD_CLUSTERS_H_
#define CHAINTAG_FEATURES_WORD_CLUSTERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "features/word_clusters.pb.h"

namespace chaintag {

// The WordClusters format_version this build writes and reads.
inline constexpr uint32_t kWordClustersVersion = 1;

// InvalidArgument naming the first fault: an unknown format_version, field
// sizes that disagree, an empty or repeated word, a cluster index out of
// range, a count below 1, or bit-strings that are not the leaves of one full
// binary tree (empty, not 0/1, repeated, a prefix of another, or an inner
// node with one child).
absl::Status ValidateWordClusters(const WordClusters& clusters);

// Word → bit-string lookup.
class WordClusterTable {
 public:
  WordClusterTable() = default;
  // Validates `clusters` first.
  static absl::StatusOr<WordClusterTable> Create(const WordClusters& clusters);

  // The word's bit-string, or "" for a word the clusters do not know. The
  // view lives as long as the table and is invalidated by moving it.
  absl::string_view BitString(absl::string_view word) const;
  // The word's cluster (an index into the bit-strings), or -1.
  int Cluster(absl::string_view word) const;

  int num_clusters() const { return static_cast<int>(bit_strings_.size()); }
  int64_t num_words() const { return static_cast<int64_t>(cluster_.size()); }

 private:
  std::vector<std::string> bit_strings_;
  absl::flat_hash_map<std::string, int32_t> cluster_;
};

// The `paths` file of Liang's wcluster: "bitstring<TAB>word<TAB>count" a
// line, grouped by cluster in bit-string order, most frequent word first.
std::string WordClustersPathsText(const WordClusters& clusters);

// Binary proto, written atomically (base/file_io.h).
absl::Status WriteWordClusters(const WordClusters& clusters,
                               const std::string& path);
// Reads and validates what WriteWordClusters wrote; errors name the file.
absl::StatusOr<WordClusters> ReadWordClusters(const std::string& path);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_WORD_CLUSTERS_H_
