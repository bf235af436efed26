// Counting the text that Brown clustering reads (features/brown_clustering.h):
// every distinct word, its occurrences and those of each ordered pair of
// adjacent words in a sentence, from sentences in memory, a raw text file or
// a CoNLL word column.
//
// Thread-safety: a BigramCounts is filled by one thread at a time; the
// functions are reentrant for distinct counts.

#ifndef CHAINTAG_FEATURES_BIGRAM_COUNTS_H_
#define CHAINTAG_FEATURES_BIGRAM_COUNTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "corpora/sentence.h"

namespace chaintag {

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

// Adds a UTF-8 text file, one sentence per line, words separated by
// whitespace (SplitAtSpaces: Unicode spaces too); blank lines are skipped.
// Errors: NotFound "<path>: cannot open", InvalidArgument "<path>:<line>:
// invalid UTF-8 at byte <column>".
absl::Status AddRawTextFile(const std::string& path, BigramCounts* counts);

// Adds attribute `attribute` (the word column, as the ConllFormat listed it)
// of each sentence; an error names the sentence's source and line.
absl::Status AddConllWords(absl::Span<const Sentence> sentences, int attribute,
                           BigramCounts* counts);

// Adds file column `column` of the CoNLL column file at `path`
// (-DOCSTART- lines are skipped); errors name the file and line.
absl::Status AddConllFile(const std::string& path, int column,
                          BigramCounts* counts);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_BIGRAM_COUNTS_H_
