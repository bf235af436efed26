// FeatureExtractor: turns a Sentence into a FeatureSequence by applying the
// templates of a FeatureConfig and hashing every attribute string into
// num_buckets weight rows.
//
// The hash is part of the model file format. Each value a part reads is
// hashed on its own, XXH3-64 with seed hash_seed over its bytes (p(v));
// a template's feature then chains its parts' hashes:
//   h_0 = XXH3-64 of the template index j (4 bytes, little-endian), seed
//         hash_seed;
//   h_i = Fmix64(h_{i-1} * 0x9E3779B97F4A7C15 + p(v_i)) (mod 2^64), where
//         Fmix64 is MurmurHash3's 64-bit finalizer;
// and the feature's hash is h_k after the template's k parts, reduced to
// bucket = hash % num_buckets. So a value is hashed once per token however
// many templates read it, and its derived values (lowercase, affixes,
// shapes, n-grams, clusters) once per word type while it stays in a
// per-thread cache (features/value_hash_cache.h). The bias feature is h_0
// of the reserved index kBiasTemplateId. A sentence's attribute lists
// (Sentence::item_*, CRFsuite's format) are features as given: each hashes
// the reserved index kItemAttributeTemplateId (4 bytes, little-endian)
// followed by the unescaped name's bytes (no separator), with the
// attribute's value as the feature's value; they come before the
// templates' features of their position. The result is the same on every
// run and machine. A part outside the sentence reads the boundary
// marker of boundary_markers (bos / eos, or numbered by the distance, as
// CRF++ and Wapiti spell them); a template's literals name its features
// and are not hashed.
//
// Exact features (FeatureConfig.exact) skip the reduction: a feature's
// bucket is its hash's index in a key table (features/feature_keys.h), the
// sorted distinct hashes of the training data, and a feature whose hash the
// table lacks has no bucket and is left out. An exact extractor made
// without a table gives hashes and keys (ExtractHashes, ForEachKey), from
// which training builds the table (features/training_keys.h); the others
// need it.
//
// Thread-safety: a FeatureExtractor is immutable after Create; Extract,
// ExtractHashes and the rest may be called from any number of threads at
// once (each thread uses its own scratch buffers).

#ifndef CHAINTAG_FEATURES_FEATURE_EXTRACTOR_H_
#define CHAINTAG_FEATURES_FEATURE_EXTRACTOR_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "corpora/sentence.h"
#include "features/bucket_rows.h"
#include "features/feature_config.pb.h"
#include "features/feature_keys.h"
#include "features/feature_sequence.h"
#include "features/word_clusters.h"
#include "re2/re2.h"

namespace chaintag {

// Template index under which the bias feature is hashed.
constexpr uint32_t kBiasTemplateId = 0xFFFFFFFFu;
// Template index under which a sentence's listed attributes are hashed.
constexpr uint32_t kItemAttributeTemplateId = 0xFFFFFFFEu;

// One feature of a position, readable: its bucket, value and name.
struct NamedFeature {
  uint32_t bucket = 0;
  float value = 1;
  // Spelled from the hashed key: a template with literals as CRF++ expands
  // it ("U05:He/reckons"), else "name=v1|v2" ("#j=v1|v2" without a name);
  // "bias" for the bias.
  std::string name;
};

class FeatureExtractor {
 public:
  // Validates the config: num_buckets in [1, 2^32] (hashed features),
  // attribute >= 0, k > 0 for PREFIX / SUFFIX / NGRAMS, span >= 1, MATCHES
  // patterns compile, values finite, no pair templates with exact features.
  // Errors name the template.
  static absl::StatusOr<FeatureExtractor> Create(const FeatureConfig& config);
  // The same, and for exact features their key table (null: none yet, so
  // only ExtractHashes and ForEachKey work). A table is refused for hashed
  // features.
  static absl::StatusOr<FeatureExtractor> Create(
      const FeatureConfig& config, std::shared_ptr<const FeatureKeys> keys);

  FeatureExtractor(FeatureExtractor&&) = default;
  FeatureExtractor& operator=(FeatureExtractor&&) = default;

  // Fills `out` (cleared first, capacity reused) with one row per token:
  // buckets ascending, equal buckets merged by summing their values (exact
  // features: only those with a bucket). Fails when a template reads an
  // attribute the sentence does not have (every column, for a sentence
  // with attribute lists), and for exact features without a key table; the
  // error begins with the sentence's "source:first_line: " when it has a
  // source, so callers return it as it is.
  absl::Status Extract(const Sentence& sentence, FeatureSequence* out) const;

  // For scoring, where neither order nor merging changes a score (beyond
  // rounding): Extract without sorting or merging, each position's features
  // in template order and mapped to rows, the ones without a row dropped.
  // `values` stays empty when every value is 1.
  absl::Status ExtractRows(const Sentence& sentence, const BucketRows& rows,
                           FeatureSequence* out) const;

  // The unreduced 64-bit hashes behind Extract, for statistics: per position
  // t, [offsets[t], offsets[t+1]) of `hashes` and `values`, in template order
  // (bias last), not merged. Outputs are cleared first.
  absl::Status ExtractHashes(const Sentence& sentence,
                             std::vector<int32_t>* offsets,
                             std::vector<uint64_t>* hashes,
                             std::vector<float>* values) const;

  // Per position, its features in template order (bias last), not merged,
  // each with its readable name; for tests and model dumps. The names come
  // from the very keys Extract hashes. Exact features: only those with a
  // bucket, as Extract.
  absl::Status ExtractNames(const Sentence& sentence,
                            std::vector<std::vector<NamedFeature>>* out) const;

  // Calls visit(hash, key) for every feature of the sentence, in
  // ExtractHashes' order, `key` being the bytes that identify it: the
  // template index (4 bytes, little-endian) and its parts' values, each
  // followed by '\x1f', or the listed attribute's name after its reserved
  // index. Equal features give equal keys, and the feature's hash is a
  // function of its key (for templates, of its parts' hashes, not XXH3 of
  // the key). For exact features' key tables (features/training_keys.h).
  absl::Status ForEachKey(
      const Sentence& sentence,
      absl::FunctionRef<void(uint64_t hash, absl::string_view key)> visit)
      const;
  // The readable name (NamedFeature::name) of the feature whose key
  // ForEachKey gave.
  std::string NameOfKey(absl::string_view key) const;

  // hash % num_buckets, the reduction Extract applies to hashed features.
  uint32_t Bucket(uint64_t hash) const {
    return static_cast<uint32_t>(bucket_mask_ != 0 ? (hash & bucket_mask_)
                                                   : hash % num_buckets_);
  }
  // The bucket of a feature's hash, either kind: Bucket(hash), or for exact
  // features the hash's index in keys(), -1 when it has none.
  int64_t FindBucket(uint64_t hash) const {
    if (!exact_) return Bucket(hash);
    return keys_ != nullptr ? keys_->Find(hash) : -1;
  }

  // The buckets features fall into: num_buckets, or for exact features the
  // key table's size (0 without one).
  uint64_t num_buckets() const {
    if (!exact_) return num_buckets_;
    return keys_ != nullptr ? static_cast<uint64_t>(keys_->size()) : 0;
  }
  bool exact() const { return exact_; }
  // Exact features' key table; null for hashed features, or before one is
  // given.
  const FeatureKeys* keys() const { return keys_.get(); }
  const FeatureConfig& config() const { return *config_; }
  // Highest attribute index any template reads (-1 if none; the pair
  // templates' included).
  int max_attribute() const {
    return pair_extractor_ == nullptr
               ? max_attribute_
               : std::max(max_attribute_, pair_extractor_->max_attribute());
  }
  // The extractor of config().pair_templates (second-order models'
  // observation-conditioned transitions: its own templates, no bias, the
  // same hashing), or null when there are none. Its features are for the
  // label pair (y_{t−1}, y_t), so a caller empties position 0
  // (ClearFirstPosition).
  const FeatureExtractor* pair_extractor() const {
    return pair_extractor_.get();
  }
  // "name" of template j, or "#j" when it has none; for messages and
  // reports.
  std::string TemplateName(int j) const;

 private:
  // One distinct (attribute, transform, k, pattern): its value is computed
  // once per token and shared by every template part that reads it.
  struct Column {
    int attribute = 0;
    TemplatePart::Transform transform = TemplatePart::IDENTITY;
    int k = 0;
    bool lowercase = false;        // applied before the transform
    const RE2* pattern = nullptr;  // for MATCHES; owned by patterns_
  };
  struct Part {
    int offset = 0;
    int column = 0;
    int span = 1;
  };
  struct Template {
    uint32_t id = 0;     // index in the config, or kBiasTemplateId
    uint64_t start = 0;  // h_0, the hash of the index
    float value = 1;
    int parts_begin = 0;  // into parts_
    int parts_end = 0;
    int max_attribute = -1;
    // Some part has several values (NGRAMS, span > 1): the features are the
    // combinations of the parts' values.
    bool multi = false;
  };
  // The columns that read one attribute: the plain one, whose hash is also
  // the value's cache key, and the derived ones, cached per value.
  struct AttributeColumns {
    int attribute = 0;
    int identity_column = -1;
    std::vector<int> derived_columns;
  };
  struct Scratch;

  FeatureExtractor() = default;

  // The CLUSTER bits (the first k; all for k = 0) of `value` appended to
  // `out`; false when it has no cluster.
  bool AppendCluster(absl::string_view value, int k, std::string* out) const;
  // clusters_ from the config, when some column reads them.
  absl::Status LoadClusters();

  // The boundary markers of every column and their hashes (MakeMarkers),
  // and the index in markers_ of the one a part of `column` reads at `pos`
  // outside a sentence of length T.
  void MakeMarkers();
  size_t MarkerIndex(int column, int64_t pos, int T) const;
  // attribute_columns_ from columns_, and the config's fingerprint.
  void GroupColumns();
  // FailedPrecondition for exact features without a key table, naming
  // what needed it.
  absl::Status CheckKeys(absl::string_view what) const;

  // "'name' (#j)" or "#j", for error messages.
  std::string DescribeTemplate(int j) const;

  // Create's steps. AddTemplate validates template j of config_ and
  // appends it to templates_, its parts to parts_ and the columns they
  // read, if new, to columns_; `column_patterns` is parallel to columns_
  // (each column's MATCHES pattern, or "").
  absl::Status AddTemplate(int j, std::vector<std::string>* column_patterns);
  // The column `part` reads, validated; `pattern` gets its MATCHES pattern.
  // `part_where` names the part in errors.
  static absl::StatusOr<Column> PartColumn(const TemplatePart& part,
                                           const std::string& part_where,
                                           std::string* pattern);
  // The index of `column` in columns_, added (its pattern compiled) when no
  // equal column is there yet, so that a value shared by several templates
  // is computed once per token.
  absl::StatusOr<int> FindOrAddColumn(
      Column column, const std::string& pattern, const std::string& part_where,
      std::vector<std::string>* column_patterns);

  // Calls emit(hash, value) for token t's listed attributes.
  template <typename Emit>
  static void EmitItems(const Sentence& sentence, int t, uint64_t seed,
                        Emit& emit);

  // The one code path that computes part strings and hashes: calls
  // emit(hash, value) -- or emit(hash, value, key) when emit takes the
  // hashed key too -- for every feature of position t, then end_position(),
  // for t = 0..T-1.
  template <typename Emit, typename EndPosition>
  absl::Status ForEachHash(const Sentence& sentence, Emit&& emit,
                           EndPosition&& end_position) const;

  // Fails, naming the first template, when a template reads an attribute
  // the sentence does not have.
  absl::Status CheckAttributes(const Sentence& sentence) const;
  // The steps of ForEachHash before hashing, per sentence. TransformColumns
  // writes the values of the transformed columns to scratch->text and
  // their spans; ViewColumns then makes every column's values views
  // (scratch->views, scratch->ngram_views).
  void TransformColumns(const Sentence& sentence, Scratch* scratch) const;
  void ViewColumns(const Sentence& sentence, Scratch* scratch) const;
  // Appends the value of `column` for attribute value `value` to *text
  // (for NGRAMS the padded value, with its n-grams' spans appended to
  // *ngram_spans); false when a boolean transform drops it.
  bool AppendColumnValue(
      const Column& column, absl::string_view value, std::string* lowered,
      std::string* text,
      std::vector<std::pair<uint32_t, int32_t>>* ngram_spans) const;
  // The per-(column, t) value hashes that the templates chain: HashViews
  // from the strings of TransformColumns and ViewColumns (when features are
  // named), HashColumns from the per-thread cache of derived values.
  void HashViews(int T, Scratch* scratch) const;
  void HashColumns(const Sentence& sentence, Scratch* scratch) const;
  // The hashes of `value`'s derived columns, as the cache keeps them: per
  // column, for NGRAMS the count then the n-grams' hashes, else 1 and the
  // hash, or 0 and 0 when dropped.
  void DeriveHashes(const AttributeColumns& group, absl::string_view value,
                    Scratch* scratch) const;
  // scratch->key, sized once for the sentence's longest possible key so
  // that the hashing loop writes with plain memcpy and never grows it.
  char* KeyBuffer(Scratch* scratch) const;

  // Hashes every combination of the values of `tmpl`'s parts at position t
  // (a template with a multi-valued part); `scratch` holds the column
  // values of the sentence.
  template <bool kNamed, typename Emit>
  void EmitCombinations(const Template& tmpl, int t, int T, Scratch* scratch,
                        Emit& emit) const;

  // Held by pointer so that references to it (config()) survive moves.
  std::unique_ptr<FeatureConfig> config_;
  uint64_t num_buckets_ = 1;
  uint64_t bucket_mask_ = 0;  // num_buckets - 1 when a power of two > 1
  // Exact features, and their key table once given (shared by the copies
  // of a model's extractor, and immutable).
  bool exact_ = false;
  std::shared_ptr<const FeatureKeys> keys_;
  int max_attribute_ = -1;
  int max_parts_ = 0;  // most parts in one template
  // Whether a sentence's attribute lists are features (not for the pair
  // templates' extractor).
  bool item_attributes_ = true;
  std::vector<Column> columns_;
  std::vector<Part> parts_;
  std::vector<Template> templates_;  // config order, then the bias
  std::vector<std::unique_ptr<RE2>> patterns_;
  // How far before / after the sentence a part reads, and per column the
  // markers there: marker_before_ entries before, then those after.
  int64_t max_before_ = 0;
  int64_t max_after_ = 0;
  int marker_before_ = 0;
  std::vector<std::string> markers_;
  std::vector<uint64_t> marker_hashes_;  // p(marker), parallel to markers_
  size_t max_marker_ = 0;
  std::vector<AttributeColumns> attribute_columns_;
  // XXH3 of the serialised config: the per-thread caches of derived values
  // are kept per fingerprint, as equal configs derive equal hashes.
  uint64_t fingerprint_ = 0;
  std::unique_ptr<FeatureExtractor> pair_extractor_;
  // The config's clusters, when a CLUSTER part reads them.
  std::shared_ptr<const WordClusterTable> clusters_;
};

// Drops position 0's features (keeping the position): pair features have
// no label pair there.
void ClearFirstPosition(FeatureSequence* features);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_FEATURE_EXTRACTOR_H_
