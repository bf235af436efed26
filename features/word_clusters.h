// Word clusters from raw text, for cluster features in the style of Ratinov
// and Roth (2009): prefixes of a word's bit-string name coarser and finer
// clusters.
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
// Thread-safety: a BigramCounts is filled by one thread at a time; the
// other functions are reentrant; a WordClusterTable is immutable after
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
#include "absl/types/span.h"
#include "corpora/sentence.h"
#include "features/word_clusters.pb.h"

namespace chaintag {

// The WordClusters format_version this build writes and reads.
inline constexpr uint32_t kWordClustersVersion = 1;

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

// The counts the clustering reads: every distinct word, its occurrences, and
// the occurrences of each ordered pair of adjacent words in a sentence. A
// large text streams through it; its tokens are not kept. Empty words are
// skipped.
class BigramCounts {
 public:
  void AddSentence(absl::Span<const absl::string_view> words);
  void AddSentence(absl::Span<const std::string> words);

  // Distinct words in order of first occurrence, and their counts.
  const std::vector<std::string>& words() const { return words_; }
  const std::vector<int64_t>& counts() const { return counts_; }
  // Keyed by first << 32 | second, indices into words().
  const absl::flat_hash_map<uint64_t, int64_t>& bigrams() const {
    return bigrams_;
  }
  int64_t num_tokens() const { return num_tokens_; }

 private:
  template <typename Word>
  void AddWords(absl::Span<const Word> words);
  int32_t Intern(absl::string_view word);

  absl::flat_hash_map<std::string, int32_t> index_;
  std::vector<std::string> words_;
  std::vector<int64_t> counts_;
  absl::flat_hash_map<uint64_t, int64_t> bigrams_;
  int64_t num_tokens_ = 0;
};

// Adds a UTF-8 text file, one sentence per line, words separated by ASCII
// whitespace; blank lines are skipped. Errors: NotFound "<path>: cannot
// open", InvalidArgument "<path>:<line>: invalid UTF-8 at byte <column>".
absl::Status AddRawTextFile(const std::string& path, BigramCounts* counts);

// Adds attribute `attribute` (the word column, as the ConllFormat listed it)
// of each sentence; an error names the sentence's source and line.
absl::Status AddConllWords(absl::Span<const Sentence> sentences, int attribute,
                           BigramCounts* counts);

// Adds file column `column` of the CoNLL column file at `path`
// (-DOCSTART- lines are skipped); errors name the file and line.
absl::Status AddConllFile(const std::string& path, int column,
                          BigramCounts* counts);

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
