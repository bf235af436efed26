// Brown word clusters from the counts of a text (features/bigram_counts.h),
// for cluster features in the style of Ratinov and Roth (2009): prefixes of
// a word's bit-string name coarser and finer clusters. The result is a
// WordClusters proto (features/word_clusters.h reads, checks and writes it).
//
// The clustering is Brown et al. (1992), class-based bigram clustering, with
// the window of Liang (2005, the `wcluster` tool): the words, most frequent
// first, enter one at a time as their own cluster; whenever C + 1 clusters
// are active the pair whose merge loses the least average mutual
// information is merged. When every word is in, the C clusters are merged
// down to one, and that binary tree gives each cluster its bit-string
// (0 = left child, the one holding the more frequent word; 1 = right).
// Words of one cluster share its bit-string. Each step costs O(C^2): the
// merge losses L(c, c') are kept in a table and updated, not recomputed.
//
// The quality of a clustering of the words entered so far is
//   I = Σ_{c,c'} p(c, c') log p(c, c') / (p(c) p(c')),
// p(c, c') = n(c, c') / N2 over the bigrams of adjacent kept words within a
// sentence (N2 of them), p(c) = n(c) / N1 over the kept tokens (N1). Using
// the unigram p(c) on both sides makes I a sum over the active clusters
// only, so entering a word leaves the existing terms alone. Only the counts
// matter (not the order of the sentences), and every computation runs in a
// fixed order: the same text and options give the same clusters, byte for
// byte.
//
// Thread-safety: reentrant functions of their arguments.

#ifndef CHAINTAG_FEATURES_BROWN_CLUSTERING_H_
#define CHAINTAG_FEATURES_BROWN_CLUSTERING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "features/bigram_counts.h"
#include "features/word_clusters.pb.h"

namespace chaintag {

struct BrownClusteringOptions {
  // C: the clusters kept while words enter, and the leaves of the tree
  // (fewer when the text has fewer words). 2 to 4096: memory grows as C²
  // and time as V C².
  int num_clusters = 100;
  // Words seen fewer times are left out, and so are their bigrams.
  int64_t min_count = 1;
  // Recorded in the proto: what the text was.
  std::string source;
};

// One merge: nodes 0 .. V-1 are the kept words by rank, merge k makes node
// V + k. `left` holds the more frequent word. `loss` is I before minus I
// after, in nats.
struct BrownMerge {
  int32_t left = 0;
  int32_t right = 0;
  double loss = 0;
};

// The whole merge history, for tests and for building WordClusters.
struct BrownHierarchy {
  // The kept words, most frequent first (ties in byte order): word rank r
  // is node r. They enter in this order.
  std::vector<std::string> words;
  std::vector<int64_t> counts;
  // min(options.num_clusters, words.size()).
  int num_clusters = 0;
  // The first words.size() - num_clusters merges happen while words enter
  // (word num_clusters + k enters just before merge k); the last
  // num_clusters - 1 build the tree over the clusters they leave.
  std::vector<BrownMerge> merges;
  int64_t num_tokens = 0;
};

// Errors when num_clusters is not in [2, 4096], min_count < 1, or fewer
// than 2 words are kept (a tree needs two leaves, or its one bit-string
// would be empty).
absl::StatusOr<BrownHierarchy> RunBrownClustering(
    const BigramCounts& counts, const BrownClusteringOptions& options);

// The clusters and bit-strings of RunBrownClustering, with the options.
absl::StatusOr<WordClusters> BuildBrownClusters(
    const BigramCounts& counts, const BrownClusteringOptions& options);
absl::StatusOr<WordClusters> BuildBrownClusters(
    const std::vector<std::vector<std::string>>& sentences,
    const BrownClusteringOptions& options);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_BROWN_CLUSTERING_H_
