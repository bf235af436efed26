#include "features/brown_clustering.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "features/word_clusters.h"

namespace chaintag {
namespace {

// Counts above this take std::log; below, a table of n log n (8 MiB at
// most).
constexpr int64_t kLogTableSize = int64_t{1} << 20;
// The loss table has (C + 1)² entries, four such tables 0.5 GiB at this C,
// and a merge step costs O(C²).
constexpr int kMaxClusters = 4096;

// Adjacent kept words by rank, grouped by one side of the pair.
struct Neighbours {
  std::vector<int64_t> begin;  // per word, into word/count; one past the end
  std::vector<int32_t> word;
  std::vector<int64_t> count;
};

// The text restricted to the words kept by min_count, words by rank.
struct KeptText {
  std::vector<int32_t> id_of_rank;  // into BigramCounts::words()
  std::vector<int64_t> counts;
  Neighbours next;          // next.word of w: the words that follow w
  Neighbours previous;      // previous.word of w: the words that precede w
  int64_t num_tokens = 0;   // N1
  int64_t num_bigrams = 0;  // N2
};

struct Edge {
  int32_t from;
  int32_t to;
  int64_t count;
};

Neighbours GroupEdges(int32_t num_words, const std::vector<Edge>& edges) {
  Neighbours grouped;
  grouped.begin.assign(num_words + 1, 0);
  for (const Edge& edge : edges) ++grouped.begin[edge.from + 1];
  for (int32_t w = 0; w < num_words; ++w) {
    grouped.begin[w + 1] += grouped.begin[w];
  }
  grouped.word.resize(edges.size());
  grouped.count.resize(edges.size());
  std::vector<int64_t> fill(grouped.begin.begin(), grouped.begin.end() - 1);
  for (const Edge& edge : edges) {
    const int64_t k = fill[edge.from]++;
    grouped.word[k] = edge.to;
    grouped.count[k] = edge.count;
  }
  return grouped;
}

KeptText KeepFrequentWords(const BigramCounts& counts, int64_t min_count) {
  const std::vector<std::string>& words = counts.words();
  KeptText text;
  for (int32_t id = 0; id < static_cast<int32_t>(words.size()); ++id) {
    if (counts.counts()[id] >= min_count) text.id_of_rank.push_back(id);
  }
  std::sort(text.id_of_rank.begin(), text.id_of_rank.end(),
            [&](int32_t a, int32_t b) {
              const int64_t count_a = counts.counts()[a];
              const int64_t count_b = counts.counts()[b];
              return count_a != count_b ? count_a > count_b
                                        : words[a] < words[b];
            });
  std::vector<int32_t> rank_of_id(words.size(), -1);
  const int32_t num_kept = static_cast<int32_t>(text.id_of_rank.size());
  for (int32_t rank = 0; rank < num_kept; ++rank) {
    rank_of_id[text.id_of_rank[rank]] = rank;
    text.counts.push_back(counts.counts()[text.id_of_rank[rank]]);
    text.num_tokens += text.counts.back();
  }
  // Integer sums: the hash map's order does not reach any result.
  std::vector<Edge> forward;
  std::vector<Edge> backward;
  for (const auto& [key, count] : counts.bigrams()) {
    const int32_t first = rank_of_id[key >> 32];
    const int32_t second = rank_of_id[key & 0xffffffffu];
    if (first < 0 || second < 0) continue;
    forward.push_back({first, second, count});
    backward.push_back({second, first, count});
    text.num_bigrams += count;
  }
  text.next = GroupEdges(num_kept, forward);
  text.previous = GroupEdges(num_kept, backward);
  return text;
}

// Runs the windowed Brown clustering over a KeptText.
//
// Clusters live in slots 0..C (C + 1 are active just before each merge of
// the first phase). Per pair of active slots it keeps the bigram count
// n(s, t), the term N2 · q(s, t) of I, and (for s < t) N2 · L(s, t), the
// loss of merging s and t. L(s, t) is the terms that involve s or t minus
// the terms of s ∪ t; the terms that involve a third cluster x are
//   D(s, t, x) = q(s,x) + q(t,x) + q(x,s) + q(x,t) − q(s∪t,x) − q(x,s∪t),
// so when a cluster x enters, every other L(s, t) gains D(s, t, x), and
// when a and b become u it gains D(s, t, u) − D(s, t, a) − D(s, t, b):
// O(1) per pair instead of O(C).
//
// With n log n from a table, N2 · q(c, c') = n log n − n (log n(c) +
// log n(c') − log N1² / N2); the parts linear in n split into a sum over s
// plus one over t, so a pair's update costs six table reads.
class BrownClusterer {
 public:
  BrownClusterer(const KeptText& text, int num_clusters);

  // The merges, in order.
  std::vector<BrownMerge> Run();

 private:
  double NLogN(int64_t n) const {
    return n < static_cast<int64_t>(n_log_n_.size())
               ? n_log_n_[n]
               : static_cast<double>(n) * std::log(static_cast<double>(n));
  }
  // N2 · q for a bigram count n between clusters whose log sizes sum to
  // `log_sizes`; exactly 0 when n is.
  double Term(int64_t n, double log_sizes) const {
    return NLogN(n) - static_cast<double>(n) * (log_sizes - log_scale_);
  }
  int64_t Bigram(int s, int t) const { return bigram_[s * slots_ + t]; }
  // Bigram(s, t) is kept twice, by row and by column, so that a cluster's
  // counts either way are contiguous.
  void SetBigram(int s, int t, int64_t n) {
    bigram_[s * slots_ + t] = n;
    bigram_by_column_[t * slots_ + s] = n;
  }
  double& TermOf(int s, int t) { return term_[s * slots_ + t]; }
  double& Loss(int s, int t) {
    return s < t ? loss_[s * slots_ + t] : loss_[t * slots_ + s];
  }

  void Enter(int32_t word);
  void CountBigramsOf(int32_t word, int slot);
  void AddCrossTerms(int slot);
  void MergeBest(std::vector<BrownMerge>* merges);
  void Merge(int a, int b);
  void UpdateLossesForMerge(int a, int b, double log_u);
  void MoveMembers(int from, int to);
  void Deactivate(int slot);
  void SetLossesOf(int slot);
  std::vector<double> Shares() const;
  double LossFromScratch(int s, int t, const std::vector<double>& shares);

  const KeptText& text_;
  const int num_clusters_;
  const int slots_;
  std::vector<double> n_log_n_;
  double log_scale_ = 0;  // log N1² / N2: q's normalisers

  std::vector<int> active_;  // ascending
  std::vector<int32_t> slot_of_word_;
  std::vector<std::vector<int32_t>> members_;
  std::vector<int32_t> node_;
  std::vector<int32_t> first_word_;  // the most frequent member
  std::vector<int64_t> size_;
  std::vector<double> log_size_;  // 0 for an empty slot
  std::vector<int64_t> bigram_;
  std::vector<int64_t> bigram_by_column_;
  std::vector<double> term_;
  std::vector<double> loss_;
  int32_t next_node_;
};

BrownClusterer::BrownClusterer(const KeptText& text, int num_clusters)
    : text_(text),
      num_clusters_(num_clusters),
      slots_(num_clusters + 1),
      slot_of_word_(text.counts.size(), -1),
      members_(slots_),
      node_(slots_, -1),
      first_word_(slots_, -1),
      size_(slots_, 0),
      log_size_(slots_, 0),
      bigram_(static_cast<size_t>(slots_) * slots_, 0),
      bigram_by_column_(bigram_.size(), 0),
      term_(bigram_.size(), 0),
      loss_(bigram_.size(), 0),
      next_node_(static_cast<int32_t>(text.counts.size())) {
  n_log_n_.resize(std::min(text.num_bigrams + 1, kLogTableSize));
  n_log_n_[0] = 0;
  for (size_t n = 1; n < n_log_n_.size(); ++n) {
    n_log_n_[n] = static_cast<double>(n) * std::log(static_cast<double>(n));
  }
  if (text.num_bigrams > 0) {
    log_scale_ = 2 * std::log(static_cast<double>(text.num_tokens)) -
                 std::log(static_cast<double>(text.num_bigrams));
  }
}

std::vector<BrownMerge> BrownClusterer::Run() {
  std::vector<BrownMerge> merges;
  const int32_t num_words = static_cast<int32_t>(text_.counts.size());
  for (int32_t word = 0; word < num_words; ++word) {
    Enter(word);
    if (static_cast<int>(active_.size()) > num_clusters_) MergeBest(&merges);
  }
  while (active_.size() > 1) MergeBest(&merges);
  return merges;
}

void BrownClusterer::Enter(int32_t word) {
  int slot = 0;
  while (node_[slot] >= 0) ++slot;
  node_[slot] = word;
  first_word_[slot] = word;
  members_[slot] = {word};
  size_[slot] = text_.counts[word];
  log_size_[slot] = std::log(static_cast<double>(size_[slot]));
  CountBigramsOf(word, slot);
  slot_of_word_[word] = slot;
  for (int t : active_) {
    const double log_sizes = log_size_[slot] + log_size_[t];
    TermOf(slot, t) = Term(Bigram(slot, t), log_sizes);
    TermOf(t, slot) = Term(Bigram(t, slot), log_sizes);
  }
  TermOf(slot, slot) = Term(Bigram(slot, slot), 2 * log_size_[slot]);
  AddCrossTerms(slot);
  active_.insert(std::upper_bound(active_.begin(), active_.end(), slot), slot);
  SetLossesOf(slot);
}

// A bigram is counted when the later of its two words enters.
void BrownClusterer::CountBigramsOf(int32_t word, int slot) {
  const Neighbours& next = text_.next;
  for (int64_t k = next.begin[word]; k < next.begin[word + 1]; ++k) {
    const int32_t other = next.word[k];
    const int t = other == word ? slot : slot_of_word_[other];
    if (t >= 0) SetBigram(slot, t, Bigram(slot, t) + next.count[k]);
  }
  const Neighbours& previous = text_.previous;
  for (int64_t k = previous.begin[word]; k < previous.begin[word + 1]; ++k) {
    const int32_t other = previous.word[k];
    const int s = slot_of_word_[other];
    if (other != word && s >= 0) {
      SetBigram(s, slot, Bigram(s, slot) + previous.count[k]);
    }
  }
}

// Every active pair (s, t) gains D(s, t, x) for the entering slot x.
void BrownClusterer::AddCrossTerms(int x) {
  const size_t n = active_.size();
  std::vector<int64_t> into(n), from(n);
  std::vector<double> terms(n);
  for (size_t i = 0; i < n; ++i) {
    const int s = active_[i];
    into[i] = Bigram(s, x);
    from[i] = Bigram(x, s);
    terms[i] = TermOf(s, x) + TermOf(x, s);
  }
  for (size_t i = 0; i < n; ++i) {
    const int s = active_[i];
    for (size_t j = i + 1; j < n; ++j) {
      const int64_t into_st = into[i] + into[j];
      const int64_t from_st = from[i] + from[j];
      if ((into_st | from_st) == 0) continue;  // every term is 0
      const int t = active_[j];
      const double log_sizes =
          std::log(static_cast<double>(size_[s] + size_[t])) + log_size_[x];
      loss_[s * slots_ + t] += terms[i] + terms[j] - Term(into_st, log_sizes) -
                               Term(from_st, log_sizes);
    }
  }
}

void BrownClusterer::MergeBest(std::vector<BrownMerge>* merges) {
  int best_s = -1;
  int best_t = -1;
  double best = 0;
  for (size_t i = 0; i < active_.size(); ++i) {
    const double* row = &loss_[active_[i] * slots_];
    for (size_t j = i + 1; j < active_.size(); ++j) {
      if (best_s < 0 || row[active_[j]] < best) {
        best = row[active_[j]];
        best_s = active_[i];
        best_t = active_[j];
      }
    }
  }
  BrownMerge merge;
  const bool s_first = first_word_[best_s] < first_word_[best_t];
  merge.left = node_[s_first ? best_s : best_t];
  merge.right = node_[s_first ? best_t : best_s];
  merge.loss = text_.num_bigrams > 0 ? best / text_.num_bigrams : 0;
  merges->push_back(merge);
  Merge(best_s, best_t);
}

void BrownClusterer::Merge(int a, int b) {
  const int64_t size_u = size_[a] + size_[b];
  const double log_u = std::log(static_cast<double>(size_u));
  UpdateLossesForMerge(a, b, log_u);
  // The slot with more words keeps them, so each word moves O(log V) times.
  const int keep = members_[a].size() >= members_[b].size() ? a : b;
  const int gone = keep == a ? b : a;
  const int64_t self =
      Bigram(a, a) + Bigram(a, b) + Bigram(b, a) + Bigram(b, b);
  for (int x : active_) {
    if (x == a || x == b) continue;
    SetBigram(keep, x, Bigram(keep, x) + Bigram(gone, x));
    SetBigram(x, keep, Bigram(x, keep) + Bigram(x, gone));
    TermOf(keep, x) = Term(Bigram(keep, x), log_u + log_size_[x]);
    TermOf(x, keep) = Term(Bigram(x, keep), log_u + log_size_[x]);
  }
  SetBigram(keep, keep, self);
  TermOf(keep, keep) = Term(self, 2 * log_u);
  size_[keep] = size_u;
  log_size_[keep] = log_u;
  first_word_[keep] = std::min(first_word_[a], first_word_[b]);
  node_[keep] = next_node_++;
  MoveMembers(gone, keep);
  Deactivate(gone);
  SetLossesOf(keep);
}

// Every active pair (s, t) away from a and b gains
// D(s, t, u) − D(s, t, a) − D(s, t, b), u = a ∪ b. In the terms of s ∪ t
// with u, a and b the log n(s ∪ t) parts cancel (n(s∪t, u) = n(s∪t, a) +
// n(s∪t, b)), which leaves a part of s, a part of t and six n log n.
void BrownClusterer::UpdateLossesForMerge(int a, int b, double log_u) {
  std::vector<int> others;
  for (int x : active_) {
    if (x != a && x != b) others.push_back(x);
  }
  const size_t n = others.size();
  std::vector<int64_t> into_a(n), from_a(n), into_b(n), from_b(n);
  std::vector<double> part(n);
  const double log_a = log_size_[a], log_b = log_size_[b];
  for (size_t i = 0; i < n; ++i) {
    const int s = others[i];
    into_a[i] = Bigram(s, a);
    from_a[i] = Bigram(a, s);
    into_b[i] = Bigram(s, b);
    from_b[i] = Bigram(b, s);
    const int64_t with_u = into_a[i] + into_b[i] + from_a[i] + from_b[i];
    const double log_sizes = log_u + log_size_[s];
    part[i] = Term(into_a[i] + into_b[i], log_sizes) +
              Term(from_a[i] + from_b[i], log_sizes) - TermOf(s, a) -
              TermOf(a, s) - TermOf(s, b) - TermOf(b, s) +
              static_cast<double>(with_u) * log_u -
              static_cast<double>(into_a[i] + from_a[i]) * log_a -
              static_cast<double>(into_b[i] + from_b[i]) * log_b;
  }
  for (size_t i = 0; i < n; ++i) {
    double* row = &loss_[others[i] * slots_];
    for (size_t j = i + 1; j < n; ++j) {
      const int64_t into_sta = into_a[i] + into_a[j];
      const int64_t from_sta = from_a[i] + from_a[j];
      const int64_t into_stb = into_b[i] + into_b[j];
      const int64_t from_stb = from_b[i] + from_b[j];
      row[others[j]] += part[i] + part[j] - NLogN(into_sta + into_stb) -
                        NLogN(from_sta + from_stb) + NLogN(into_sta) +
                        NLogN(from_sta) + NLogN(into_stb) + NLogN(from_stb);
    }
  }
}

void BrownClusterer::MoveMembers(int from, int to) {
  for (int32_t word : members_[from]) slot_of_word_[word] = to;
  members_[to].insert(members_[to].end(), members_[from].begin(),
                      members_[from].end());
  members_[from].clear();
  members_[from].shrink_to_fit();
}

void BrownClusterer::Deactivate(int slot) {
  for (int x = 0; x < slots_; ++x) {
    SetBigram(slot, x, 0);
    SetBigram(x, slot, 0);
    TermOf(slot, x) = TermOf(x, slot) = 0;
    Loss(slot, x) = 0;
  }
  node_[slot] = -1;
  first_word_[slot] = -1;
  size_[slot] = 0;
  log_size_[slot] = 0;
  active_.erase(std::find(active_.begin(), active_.end(), slot));
}

void BrownClusterer::SetLossesOf(int slot) {
  const std::vector<double> shares = Shares();
  for (int t : active_) {
    if (t != slot) Loss(slot, t) = LossFromScratch(slot, t, shares);
  }
}

// Each cluster's share of I: the terms in its row or its column. Empty
// slots have all-zero rows and columns.
std::vector<double> BrownClusterer::Shares() const {
  std::vector<double> shares(slots_, 0);
  for (int x : active_) {
    const double* row = &term_[x * slots_];
    double row_sum = 0;
    for (int c = 0; c < slots_; ++c) {
      shares[c] += row[c];
      row_sum += row[c];
    }
    shares[x] += row_sum - row[x];
  }
  return shares;
}

// The terms that involve s or t, minus those of s ∪ t.
double BrownClusterer::LossFromScratch(int s, int t,
                                       const std::vector<double>& shares) {
  const double before = shares[s] + shares[t] - TermOf(s, t) - TermOf(t, s);
  const double log_st = std::log(static_cast<double>(size_[s] + size_[t]));
  const int64_t* out_s = &bigram_[s * slots_];
  const int64_t* out_t = &bigram_[t * slots_];
  const int64_t* in_s = &bigram_by_column_[s * slots_];
  const int64_t* in_t = &bigram_by_column_[t * slots_];
  // Σ_x Term(n(s∪t, x), ·) + Term(n(x, s∪t), ·), summed by part.
  double n_log_n = 0;
  double n_log_size = 0;
  int64_t total = 0;
  for (int x = 0; x < slots_; ++x) {
    if (x == s || x == t) continue;
    const int64_t out = out_s[x] + out_t[x];
    const int64_t in = in_s[x] + in_t[x];
    n_log_n += NLogN(out) + NLogN(in);
    n_log_size += static_cast<double>(out + in) * log_size_[x];
    total += out + in;
  }
  const int64_t self = out_s[s] + out_s[t] + out_t[s] + out_t[t];
  const double after = n_log_n - n_log_size -
                       static_cast<double>(total) * (log_st - log_scale_) +
                       Term(self, 2 * log_st);
  return before - after;
}

// For every word node of the first phase, the cluster (a root of the
// first-phase forest) it ended in.
std::vector<int32_t> ClusterRoots(const BrownHierarchy& hierarchy) {
  const int32_t num_words = static_cast<int32_t>(hierarchy.words.size());
  const int32_t first_phase = num_words - hierarchy.num_clusters;
  std::vector<int32_t> root(num_words + first_phase, -1);
  // Parents come after their children, so a backward sweep is top-down.
  for (int32_t k = first_phase - 1; k >= 0; --k) {
    const int32_t node = num_words + k;
    if (root[node] < 0) root[node] = node;
    root[hierarchy.merges[k].left] = root[node];
    root[hierarchy.merges[k].right] = root[node];
  }
  for (int32_t w = 0; w < num_words; ++w) {
    if (root[w] < 0) root[w] = w;
  }
  return root;
}

// Walks the second-phase tree left first, so the clusters come in
// lexicographic bit-string order; fills each cluster root's index.
void AssignBitStrings(const BrownHierarchy& hierarchy,
                      std::vector<int32_t>* cluster_of_root,
                      WordClusters* clusters) {
  const int32_t num_words = static_cast<int32_t>(hierarchy.words.size());
  const int32_t first_tree_node =
      num_words + num_words - hierarchy.num_clusters;
  std::vector<std::pair<int32_t, std::string>> stack = {
      {num_words + static_cast<int32_t>(hierarchy.merges.size()) - 1, ""}};
  while (!stack.empty()) {
    auto [node, path] = std::move(stack.back());
    stack.pop_back();
    if (node < first_tree_node) {
      (*cluster_of_root)[node] = clusters->bit_string_size();
      clusters->add_bit_string(std::move(path));
      continue;
    }
    const BrownMerge& merge = hierarchy.merges[node - num_words];
    stack.emplace_back(merge.right, path + "1");
    stack.emplace_back(merge.left, path + "0");
  }
}

}  // namespace

absl::StatusOr<BrownHierarchy> RunBrownClustering(
    const BigramCounts& counts, const BrownClusteringOptions& options) {
  if (options.num_clusters < 2 || options.num_clusters > kMaxClusters) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_clusters is ", options.num_clusters,
                     "; it must be between 2 and ", kMaxClusters));
  }
  if (options.min_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_count is ", options.min_count, "; it must be at least 1"));
  }
  const KeptText text = KeepFrequentWords(counts, options.min_count);
  if (text.counts.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "clustering needs at least 2 distinct words seen at least ",
        options.min_count, " times; the text has ", text.counts.size()));
  }
  BrownHierarchy hierarchy;
  for (int32_t id : text.id_of_rank) {
    hierarchy.words.push_back(counts.words()[id]);
  }
  hierarchy.counts = text.counts;
  hierarchy.num_clusters = static_cast<int>(
      std::min<int64_t>(options.num_clusters, text.counts.size()));
  hierarchy.num_tokens = counts.num_tokens();
  hierarchy.merges = BrownClusterer(text, hierarchy.num_clusters).Run();
  return hierarchy;
}

absl::StatusOr<WordClusters> BuildBrownClusters(
    const BigramCounts& counts, const BrownClusteringOptions& options) {
  absl::StatusOr<BrownHierarchy> hierarchy =
      RunBrownClustering(counts, options);
  if (!hierarchy.ok()) return hierarchy.status();
  WordClusters clusters;
  clusters.set_format_version(kWordClustersVersion);
  const std::vector<int32_t> root = ClusterRoots(*hierarchy);
  std::vector<int32_t> cluster_of_root(root.size(), -1);
  AssignBitStrings(*hierarchy, &cluster_of_root, &clusters);
  for (size_t w = 0; w < hierarchy->words.size(); ++w) {
    clusters.add_word(hierarchy->words[w]);
    clusters.add_cluster(cluster_of_root[root[w]]);
    clusters.add_count(hierarchy->counts[w]);
  }
  clusters.set_num_clusters(options.num_clusters);
  clusters.set_min_count(options.min_count);
  clusters.set_source(options.source);
  clusters.set_num_tokens(hierarchy->num_tokens);
  return clusters;
}

absl::StatusOr<WordClusters> BuildBrownClusters(
    const std::vector<std::vector<std::string>>& sentences,
    const BrownClusteringOptions& options) {
  BigramCounts counts;
  for (const std::vector<std::string>& sentence : sentences) {
    counts.AddSentence(sentence);
  }
  return BuildBrownClusters(counts, options);
}

}  // namespace chaintag
