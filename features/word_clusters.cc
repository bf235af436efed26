#include "features/word_clusters.h"

#include <fstream>
#include <iterator>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"

namespace chaintag {
namespace {

absl::Status InvalidClusters(absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid word clusters: ", message));
}

absl::Status CheckWords(const WordClusters& clusters) {
  const int num_words = clusters.word_size();
  if (clusters.cluster_size() != num_words ||
      (clusters.count_size() != 0 && clusters.count_size() != num_words)) {
    return InvalidClusters(
        absl::StrCat(num_words, " words but ", clusters.cluster_size(),
                     " cluster indices and ", clusters.count_size(),
                     " counts (counts may also be absent)"));
  }
  absl::flat_hash_set<absl::string_view> seen;
  for (int w = 0; w < num_words; ++w) {
    const std::string& word = clusters.word(w);
    if (word.empty()) {
      return InvalidClusters(absl::StrCat("word ", w, " is empty"));
    }
    if (!seen.insert(word).second) {
      return InvalidClusters(
          absl::StrCat("word ", w, " \"", word, "\" appears twice"));
    }
    if (clusters.cluster(w) < 0 ||
        clusters.cluster(w) >= clusters.bit_string_size()) {
      return InvalidClusters(absl::StrCat("word \"", word, "\" has cluster ",
                                          clusters.cluster(w), ", not in [0, ",
                                          clusters.bit_string_size(), ")"));
    }
    if (clusters.count_size() != 0 && clusters.count(w) < 1) {
      return InvalidClusters(
          absl::StrCat("word \"", word, "\" has count ", clusters.count(w)));
    }
  }
  return absl::OkStatus();
}

// A binary trie of the bit-strings; leaf = index of the bit-string ending
// there, or -1.
struct TrieNode {
  int32_t child[2] = {-1, -1};
  int32_t leaf = -1;
  int32_t depth = 0;
};

// A bit-string that ends at or below `node`.
int32_t AnyLeafBelow(const std::vector<TrieNode>& trie, int32_t node) {
  while (trie[node].leaf < 0) {
    node = trie[node].child[trie[node].child[0] >= 0 ? 0 : 1];
  }
  return trie[node].leaf;
}

absl::Status InsertBitString(const WordClusters& clusters, int32_t index,
                             std::vector<TrieNode>* trie) {
  const std::string& bits = clusters.bit_string(index);
  const std::string name =
      absl::StrCat("bit_string ", index, " \"", bits, "\"");
  if (bits.empty()) return InvalidClusters(absl::StrCat(name, " is empty"));
  int32_t node = 0;
  for (char bit : bits) {
    if (bit != '0' && bit != '1') {
      return InvalidClusters(
          absl::StrCat(name, " has a character other than 0 and 1"));
    }
    if ((*trie)[node].leaf >= 0) {
      return InvalidClusters(absl::StrCat(
          "bit_string ", (*trie)[node].leaf, " \"",
          clusters.bit_string((*trie)[node].leaf), "\" is a prefix of ", name));
    }
    const int branch = bit - '0';
    if ((*trie)[node].child[branch] < 0) {
      TrieNode child;
      child.depth = (*trie)[node].depth + 1;
      (*trie)[node].child[branch] = static_cast<int32_t>(trie->size());
      trie->push_back(child);
    }
    node = (*trie)[node].child[branch];
  }
  if ((*trie)[node].leaf >= 0 || (*trie)[node].child[0] >= 0 ||
      (*trie)[node].child[1] >= 0) {
    const int32_t other = AnyLeafBelow(*trie, node);
    return InvalidClusters(absl::StrCat(
        name, other == (*trie)[node].leaf ? " repeats" : " is a prefix of",
        " bit_string ", other, " \"", clusters.bit_string(other), "\""));
  }
  (*trie)[node].leaf = index;
  return absl::OkStatus();
}

absl::Status CheckBitStrings(const WordClusters& clusters) {
  if (clusters.bit_string_size() == 0) return InvalidClusters("no bit-strings");
  std::vector<TrieNode> trie(1);
  for (int32_t i = 0; i < clusters.bit_string_size(); ++i) {
    absl::Status status = InsertBitString(clusters, i, &trie);
    if (!status.ok()) return status;
  }
  for (const TrieNode& node : trie) {
    if (node.leaf >= 0 || (node.child[0] >= 0 && node.child[1] >= 0)) continue;
    const int32_t only = node.child[0] >= 0 ? node.child[0] : node.child[1];
    const std::string& below = clusters.bit_string(AnyLeafBelow(trie, only));
    return InvalidClusters(
        absl::StrCat("not a full binary tree: no bit-string starts with \"",
                     below.substr(0, node.depth),
                     below[node.depth] == '0' ? "1" : "0", "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateWordClusters(const WordClusters& clusters) {
  if (clusters.format_version() != kWordClustersVersion) {
    return InvalidClusters(
        absl::StrCat("format version ", clusters.format_version(),
                     ", this build reads ", kWordClustersVersion));
  }
  absl::Status status = CheckBitStrings(clusters);
  if (!status.ok()) return status;
  return CheckWords(clusters);
}

absl::StatusOr<WordClusterTable> WordClusterTable::Create(
    const WordClusters& clusters) {
  absl::Status status = ValidateWordClusters(clusters);
  if (!status.ok()) return status;
  WordClusterTable table;
  table.bit_strings_.assign(clusters.bit_string().begin(),
                            clusters.bit_string().end());
  table.cluster_.reserve(clusters.word_size());
  for (int w = 0; w < clusters.word_size(); ++w) {
    table.cluster_.emplace(clusters.word(w), clusters.cluster(w));
  }
  return table;
}

absl::string_view WordClusterTable::BitString(absl::string_view word) const {
  const int cluster = Cluster(word);
  return cluster < 0 ? absl::string_view() : bit_strings_[cluster];
}

int WordClusterTable::Cluster(absl::string_view word) const {
  const auto found = cluster_.find(word);
  return found == cluster_.end() ? -1 : found->second;
}

std::string WordClustersPathsText(const WordClusters& clusters) {
  std::vector<std::vector<int>> words_of(clusters.bit_string_size());
  for (int w = 0; w < clusters.word_size(); ++w) {
    words_of[clusters.cluster(w)].push_back(w);
  }
  std::string text;
  for (int c = 0; c < clusters.bit_string_size(); ++c) {
    for (int w : words_of[c]) {
      absl::StrAppend(&text, clusters.bit_string(c), "\t", clusters.word(w));
      if (clusters.count_size() > 0) {
        absl::StrAppend(&text, "\t", clusters.count(w));
      }
      text += '\n';
    }
  }
  return text;
}

absl::Status WriteWordClusters(const WordClusters& clusters,
                               const std::string& path) {
  absl::Status status = ValidateWordClusters(clusters);
  if (!status.ok()) return status;
  std::string bytes;
  if (!clusters.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot serialise the word clusters"));
  }
  return WriteFileAtomically(path, bytes, "the word clusters file");
}

absl::StatusOr<WordClusters> ReadWordClusters(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  const std::string bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  WordClusters clusters;
  if (file.bad() || !clusters.ParseFromString(bytes)) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a WordClusters proto"));
  }
  absl::Status status = ValidateWordClusters(clusters);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(path, ": ", status.message()));
  }
  return clusters;
}

}  // namespace chaintag
