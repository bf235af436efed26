#include "features/feature_extractor.h"

// The hash of every feature: inlined (the same XXH3 as the library's), so
// short keys skip the call through the shared library.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "features/feature_extractor_internal.h"
#include "features/part_values.h"
#include "features/value_hash_cache.h"

namespace chaintag {
namespace {

using feature_extractor_internal::kPartSeparator;
using feature_extractor_internal::ValueHash;
using feature_extractor_internal::WriteTemplateId;

// memcpy of n bytes in fixed-size, possibly overlapping pieces, which
// compile to plain moves: names are a dozen bytes, and a call per name was
// a sixth of tagging an attribute file.
inline void CopyShort(const char* from, size_t n, char* to) {
  if (n >= 16) {
    for (size_t i = 0; i + 16 < n; i += 16) std::memcpy(to + i, from + i, 16);
    std::memcpy(to + n - 16, from + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
  }
}

// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit,
// and it is a bijection.
inline uint64_t Fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// h_i from h_{i-1} and p(v_i) (the header's definition). For a fixed chain
// it is injective in the part's hash and, the multiplier being odd, in the
// chain for a fixed part; the order of the parts matters.
inline uint64_t ChainPart(uint64_t chain, uint64_t part_hash) {
  return Fmix64(chain * 0x9E3779B97F4A7C15ULL + part_hash);
}

// Calls emit(hash, value), or emit(hash, value, key) for a caller that
// names features from the key that was hashed.
template <typename Emit>
void EmitFeature(Emit& emit, uint64_t hash, float value, const char* key,
                 size_t size) {
  if constexpr (std::is_invocable_v<Emit&, uint64_t, float,
                                    absl::string_view>) {
    emit(hash, value, absl::string_view(key, size));
  } else {
    emit(hash, value);
  }
}

// Float bits mapped so that unsigned order is numeric order.
uint32_t SortableBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
}

float FromSortableBits(uint32_t sortable) {
  const uint32_t bits =
      (sortable & 0x80000000u) != 0 ? sortable & 0x7FFFFFFFu : ~sortable;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

// Per-thread buffers for one ForEachHash call; grown to the largest sentence
// seen, then reused.
struct FeatureExtractor::Scratch {
  std::string text;  // transformed values of the non-IDENTITY columns
  // Per (column, t) at column * T + t: start in `text` and length (-1 when
  // a boolean transform dropped it); unused for IDENTITY and NGRAMS
  // columns.
  std::vector<std::pair<uint32_t, int32_t>> spans;
  // Per (column, t): the value; data() == nullptr when dropped, and for
  // NGRAMS columns, whose values are below.
  std::vector<absl::string_view> views;
  // NGRAMS columns: the n-grams of (column, t) are ngram_views[i] for i in
  // [ngram_first[column * T + t], ngram_first[column * T + t + 1]), at
  // ngram_spans[i] in `text`.
  std::vector<std::pair<uint32_t, int32_t>> ngram_spans;
  std::vector<uint32_t> ngram_first;
  std::vector<absl::string_view> ngram_views;
  std::string key;      // a named feature's key
  std::string lowered;  // a value lowercased before its transform
  // Per (column, t): p(value), and whether there is one (a boolean
  // transform may drop it); for NGRAMS columns, [first, end) of its
  // n-grams' hashes in ngram_hashes.
  std::vector<uint64_t> value_hashes;
  std::vector<uint8_t> present;
  std::vector<std::pair<uint32_t, uint32_t>> ngram_ranges;
  std::vector<uint64_t> ngram_hashes;
  // DeriveHashes' output and its buffers.
  std::vector<uint64_t> derived;
  std::string derived_text;
  std::vector<std::pair<uint32_t, int32_t>> derived_spans;
  // For EmitCombinations: the values (when named) and hashes of each part
  // in turn, where each part's start, and the combination being hashed.
  std::vector<absl::string_view> part_values;
  std::vector<uint64_t> part_hashes;
  std::vector<int> part_begin;
  std::vector<int> choice;
  // The caches of derived values, per extractor fingerprint; a few, for
  // callers that alternate between extractors (stacked models).
  std::vector<std::pair<uint64_t, std::unique_ptr<ValueHashCache>>> caches;
  size_t next_cache = 0;

  // Sized for a sentence's num_values (column, t) pairs, no n-grams yet.
  void StartValueHashes(size_t num_values) {
    value_hashes.resize(num_values);
    present.resize(num_values);
    ngram_ranges.resize(num_values);
    ngram_hashes.clear();
  }

  ValueHashCache* CacheFor(uint64_t fingerprint) {
    for (auto& [owner, cache] : caches) {
      if (owner == fingerprint) return cache.get();
    }
    constexpr size_t kMaxCaches = 4;
    if (caches.size() < kMaxCaches) {
      caches.emplace_back(fingerprint, std::make_unique<ValueHashCache>());
      return caches.back().second.get();
    }
    auto& [owner, cache] = caches[next_cache];
    next_cache = (next_cache + 1) % kMaxCaches;
    owner = fingerprint;
    cache->Clear();
    return cache.get();
  }
};

size_t FeatureExtractor::MarkerIndex(int column, int64_t pos, int T) const {
  const int per_column =
      columns_.empty() ? 0
                       : static_cast<int>(markers_.size() / columns_.size());
  const int64_t i =
      pos < 0 ? std::max<int64_t>(marker_before_ + pos, 0)
              : std::min<int64_t>(marker_before_ + pos - T, per_column - 1);
  return static_cast<size_t>(column) * per_column + i;
}

bool FeatureExtractor::AppendCluster(absl::string_view value, int k,
                                     std::string* out) const {
  const absl::string_view bits = clusters_->BitString(value);
  if (bits.empty()) return false;
  out->append(bits.data(), k > 0 ? std::min(bits.size(), static_cast<size_t>(k))
                                 : bits.size());
  return true;
}

void FeatureExtractor::TransformColumns(const Sentence& sentence,
                                        Scratch* scratch) const {
  const int T = sentence.size();
  const int num_columns = static_cast<int>(columns_.size());
  const size_t num_values = static_cast<size_t>(num_columns) * T;
  scratch->text.clear();
  scratch->spans.resize(num_values);
  scratch->ngram_spans.clear();
  scratch->ngram_first.assign(num_values + 1, 0);
  for (int c = 0; c < num_columns; ++c) {
    const Column& column = columns_[c];
    if (column.transform == TemplatePart::IDENTITY && !column.lowercase) {
      continue;
    }
    const bool ngrams = column.transform == TemplatePart::NGRAMS;
    for (int t = 0; t < T; ++t) {
      const size_t ct = static_cast<size_t>(c) * T + t;
      const size_t begin = scratch->text.size();
      if (ngrams) {
        scratch->ngram_first[ct] =
            static_cast<uint32_t>(scratch->ngram_spans.size());
      }
      const bool kept = AppendColumnValue(
          column, sentence.attribute(t, column.attribute), &scratch->lowered,
          &scratch->text, &scratch->ngram_spans);
      if (ngrams) {
        scratch->ngram_first[ct + 1] =
            static_cast<uint32_t>(scratch->ngram_spans.size());
        continue;
      }
      scratch->spans[ct] = {
          static_cast<uint32_t>(begin),
          kept ? static_cast<int32_t>(scratch->text.size() - begin) : -1};
    }
  }
}

void FeatureExtractor::ViewColumns(const Sentence& sentence,
                                   Scratch* scratch) const {
  const int T = sentence.size();
  const int num_columns = static_cast<int>(columns_.size());
  scratch->views.resize(static_cast<size_t>(num_columns) * T);
  for (int c = 0; c < num_columns; ++c) {
    const Column& column = columns_[c];
    absl::string_view* views = &scratch->views[static_cast<size_t>(c) * T];
    const auto* spans = &scratch->spans[static_cast<size_t>(c) * T];
    for (int t = 0; t < T; ++t) {
      if (column.transform == TemplatePart::IDENTITY && !column.lowercase) {
        views[t] = sentence.attribute(t, column.attribute);
      } else if (column.transform == TemplatePart::NGRAMS ||
                 spans[t].second < 0) {
        views[t] = absl::string_view();
      } else {
        views[t] = absl::string_view(scratch->text.data() + spans[t].first,
                                     spans[t].second);
      }
    }
  }
  scratch->ngram_views.resize(scratch->ngram_spans.size());
  for (size_t i = 0; i < scratch->ngram_spans.size(); ++i) {
    scratch->ngram_views[i] =
        absl::string_view(scratch->text.data() + scratch->ngram_spans[i].first,
                          scratch->ngram_spans[i].second);
  }
}

bool FeatureExtractor::AppendColumnValue(
    const Column& column, absl::string_view value, std::string* lowered,
    std::string* text,
    std::vector<std::pair<uint32_t, int32_t>>* ngram_spans) const {
  if (column.lowercase) {
    lowered->clear();
    AppendTransformed(value, TemplatePart::LOWERCASE, 0, nullptr, lowered);
    value = *lowered;
  }
  if (column.transform == TemplatePart::NGRAMS) {
    const size_t begin = text->size();
    text->push_back('<');
    text->append(value.data(), value.size());
    text->push_back('>');
    AppendNgramSpans(*text, begin, text->size(), column.k, ngram_spans);
    return true;
  }
  return column.transform == TemplatePart::CLUSTER
             ? AppendCluster(value, column.k, text)
             : AppendTransformed(value, column.transform, column.k,
                                 column.pattern, text);
}

void FeatureExtractor::HashViews(int T, Scratch* scratch) const {
  const uint64_t seed = config_->hash_seed();
  scratch->StartValueHashes(columns_.size() * static_cast<size_t>(T));
  for (size_t c = 0; c < columns_.size(); ++c) {
    const bool ngrams = columns_[c].transform == TemplatePart::NGRAMS;
    for (size_t ct = c * T; ct < (c + 1) * T; ++ct) {
      if (ngrams) {
        const uint32_t first =
            static_cast<uint32_t>(scratch->ngram_hashes.size());
        for (uint32_t i = scratch->ngram_first[ct];
             i < scratch->ngram_first[ct + 1]; ++i) {
          scratch->ngram_hashes.push_back(
              ValueHash(scratch->ngram_views[i], seed));
        }
        scratch->ngram_ranges[ct] = {
            first, static_cast<uint32_t>(scratch->ngram_hashes.size())};
        continue;
      }
      const absl::string_view view = scratch->views[ct];
      scratch->present[ct] = view.data() != nullptr;
      scratch->value_hashes[ct] =
          view.data() != nullptr ? ValueHash(view, seed) : 0;
    }
  }
}

void FeatureExtractor::DeriveHashes(const AttributeColumns& group,
                                    absl::string_view value,
                                    Scratch* scratch) const {
  const uint64_t seed = config_->hash_seed();
  std::vector<uint64_t>& derived = scratch->derived;
  derived.clear();
  for (int c : group.derived_columns) {
    const Column& column = columns_[c];
    scratch->derived_text.clear();
    scratch->derived_spans.clear();
    const bool kept =
        AppendColumnValue(column, value, &scratch->lowered,
                          &scratch->derived_text, &scratch->derived_spans);
    const absl::string_view text = scratch->derived_text;
    if (column.transform == TemplatePart::NGRAMS) {
      derived.push_back(scratch->derived_spans.size());
      for (const auto& [begin, size] : scratch->derived_spans) {
        derived.push_back(ValueHash(text.substr(begin, size), seed));
      }
    } else {
      derived.push_back(kept ? 1 : 0);
      derived.push_back(kept ? ValueHash(text, seed) : 0);
    }
  }
}

void FeatureExtractor::HashColumns(const Sentence& sentence,
                                   Scratch* scratch) const {
  const int T = sentence.size();
  const uint64_t seed = config_->hash_seed();
  scratch->StartValueHashes(columns_.size() * static_cast<size_t>(T));
  ValueHashCache* cache = nullptr;
  for (const AttributeColumns& group : attribute_columns_) {
    if (!group.derived_columns.empty() && cache == nullptr) {
      cache = scratch->CacheFor(fingerprint_);
    }
    for (int t = 0; t < T; ++t) {
      const absl::string_view value = sentence.attribute(t, group.attribute);
      const uint64_t hash = ValueHash(value, seed);
      if (group.identity_column >= 0) {
        const size_t ct = static_cast<size_t>(group.identity_column) * T + t;
        scratch->value_hashes[ct] = hash;
        scratch->present[ct] = 1;
      }
      if (group.derived_columns.empty()) continue;
      absl::Span<const uint64_t> derived =
          cache->Find(group.attribute, hash, value);
      if (derived.data() == nullptr) {
        DeriveHashes(group, value, scratch);
        cache->Insert(group.attribute, hash, value, scratch->derived);
        derived = scratch->derived;
      }
      const uint64_t* next = derived.data();
      for (int c : group.derived_columns) {
        const size_t ct = static_cast<size_t>(c) * T + t;
        if (columns_[c].transform == TemplatePart::NGRAMS) {
          const uint64_t count = *next++;
          const uint32_t first =
              static_cast<uint32_t>(scratch->ngram_hashes.size());
          scratch->ngram_hashes.insert(scratch->ngram_hashes.end(), next,
                                       next + count);
          next += count;
          scratch->ngram_ranges[ct] = {
              first, static_cast<uint32_t>(scratch->ngram_hashes.size())};
        } else {
          scratch->present[ct] = static_cast<uint8_t>(next[0]);
          scratch->value_hashes[ct] = next[1];
          next += 2;
        }
      }
    }
  }
}

char* FeatureExtractor::KeyBuffer(Scratch* scratch) const {
  size_t max_value = max_marker_;
  for (const absl::string_view& v : scratch->views) {
    max_value = std::max(max_value, v.size());
  }
  for (const auto& span : scratch->ngram_spans) {
    max_value = std::max(max_value, static_cast<size_t>(span.second));
  }
  const size_t max_key = 4 + static_cast<size_t>(max_parts_) * (max_value + 1);
  if (scratch->key.size() < max_key) scratch->key.resize(max_key);
  return &scratch->key[0];
}

template <typename Emit>
void FeatureExtractor::EmitItems(const Sentence& sentence, int t, uint64_t seed,
                                 Emit& emit) {
  // Names are short: the key is built on the stack, and a longer one in a
  // buffer kept for the thread.
  char key[128];
  WriteTemplateId(kItemAttributeTemplateId, key);
  const int end = sentence.item_begin[t + 1];
  for (int k = sentence.item_begin[t]; k < end; ++k) {
    // An attribute of value 0 adds nothing to a score or an update, and
    // nothing to CRFsuite's feature frequency: it is no feature. (Feature
    // dicts hold many: python-crfsuite reads False as 0.)
    const float value = sentence.item_value(k);
    if (value == 0) continue;
    const absl::string_view name = sentence.item_name(k);
    if (name.size() <= sizeof(key) - 4) {
      CopyShort(name.data(), name.size(), key + 4);
      EmitFeature(emit, XXH3_64bits_withSeed(key, 4 + name.size(), seed), value,
                  key, 4 + name.size());
    } else {
      thread_local std::string long_key;
      long_key.assign(key, 4);
      long_key.append(name.data(), name.size());
      EmitFeature(emit,
                  XXH3_64bits_withSeed(long_key.data(), long_key.size(), seed),
                  value, long_key.data(), long_key.size());
    }
  }
}

template <typename Emit, typename EndPosition>
absl::Status FeatureExtractor::ForEachHash(const Sentence& sentence,
                                           Emit&& emit,
                                           EndPosition&& end_position) const {
  // Naming callers get each feature's key, spelled from the values' strings;
  // the others only the hashes, from the per-type cache. Both hash the same
  // strings the same way.
  constexpr bool kNamed =
      std::is_invocable_v<Emit&, uint64_t, float, absl::string_view>;
  const int T = sentence.size();
  if (T == 0) return absl::OkStatus();
  absl::Status attributes = CheckAttributes(sentence);
  if (!attributes.ok()) return attributes;

  thread_local Scratch scratch;
  char* key = nullptr;
  if constexpr (kNamed) {
    TransformColumns(sentence, &scratch);
    // A second pass because `text` may reallocate while it is being filled.
    ViewColumns(sentence, &scratch);
    HashViews(T, &scratch);
    key = KeyBuffer(&scratch);
  } else {
    HashColumns(sentence, &scratch);
  }
  const uint64_t seed = config_->hash_seed();
  const bool items = item_attributes_ && sentence.has_items();
  for (int t = 0; t < T; ++t) {
    if (items) EmitItems(sentence, t, seed, emit);
    for (const Template& tmpl : templates_) {
      if (tmpl.multi) {
        EmitCombinations<kNamed>(tmpl, t, T, &scratch, emit);
        continue;
      }
      uint64_t hash = tmpl.start;
      size_t size = 4;
      if constexpr (kNamed) WriteTemplateId(tmpl.id, key);
      bool dropped = false;
      for (int p = tmpl.parts_begin; p < tmpl.parts_end; ++p) {
        const Part& part = parts_[p];
        const int64_t pos = int64_t{t} + part.offset;
        absl::string_view value;
        if (pos < 0 || pos >= T) {
          const size_t m = MarkerIndex(part.column, pos, T);
          hash = ChainPart(hash, marker_hashes_[m]);
          if constexpr (kNamed) value = markers_[m];
        } else {
          const size_t ct = static_cast<size_t>(part.column) * T + pos;
          if (!scratch.present[ct]) {
            dropped = true;
            break;
          }
          hash = ChainPart(hash, scratch.value_hashes[ct]);
          if constexpr (kNamed) value = scratch.views[ct];
        }
        if constexpr (kNamed) {
          std::memcpy(key + size, value.data(), value.size());
          size += value.size();
          key[size++] = kPartSeparator;
        }
      }
      if (dropped) continue;
      EmitFeature(emit, hash, tmpl.value, key, size);
    }
    end_position();
  }
  return absl::OkStatus();
}

template <bool kNamed, typename Emit>
void FeatureExtractor::EmitCombinations(const Template& tmpl, int t, int T,
                                        Scratch* scratch, Emit& emit) const {
  std::vector<absl::string_view>& values = scratch->part_values;
  std::vector<uint64_t>& hashes = scratch->part_hashes;
  std::vector<int>& begin = scratch->part_begin;
  values.clear();
  hashes.clear();
  begin.clear();
  for (int p = tmpl.parts_begin; p < tmpl.parts_end; ++p) {
    const Part& part = parts_[p];
    begin.push_back(static_cast<int>(hashes.size()));
    // A marker is a value once on each side: positions with equal markers
    // (all of them for FIXED) add nothing new.
    absl::string_view last_marker;
    int last_side = 0;  // -1 before the sentence, 1 after it
    for (int64_t pos = int64_t{t} + part.offset;
         pos < int64_t{t} + part.offset + part.span; ++pos) {
      if (pos < 0 || pos >= T) {
        const int side = pos < 0 ? -1 : 1;
        const size_t m = MarkerIndex(part.column, pos, T);
        const absl::string_view marker = markers_[m];
        if (side != last_side || marker != last_marker) {
          hashes.push_back(marker_hashes_[m]);
          if constexpr (kNamed) values.push_back(marker);
        }
        last_marker = marker;
        last_side = side;
        continue;
      }
      const size_t ct = static_cast<size_t>(part.column) * T + pos;
      if (columns_[part.column].transform == TemplatePart::NGRAMS) {
        const auto [first, end] = scratch->ngram_ranges[ct];
        hashes.insert(hashes.end(), scratch->ngram_hashes.begin() + first,
                      scratch->ngram_hashes.begin() + end);
        if constexpr (kNamed) {
          values.insert(
              values.end(),
              scratch->ngram_views.begin() + scratch->ngram_first[ct],
              scratch->ngram_views.begin() + scratch->ngram_first[ct + 1]);
        }
      } else if (scratch->present[ct]) {
        hashes.push_back(scratch->value_hashes[ct]);
        if constexpr (kNamed) values.push_back(scratch->views[ct]);
      }
    }
    if (static_cast<int>(hashes.size()) == begin.back()) return;  // dropped
  }
  const int num_parts = tmpl.parts_end - tmpl.parts_begin;
  begin.push_back(static_cast<int>(hashes.size()));
  std::vector<int>& choice = scratch->choice;
  choice.assign(begin.begin(), begin.end() - 1);
  char* const key = kNamed ? &scratch->key[0] : nullptr;
  if constexpr (kNamed) WriteTemplateId(tmpl.id, key);
  while (true) {
    uint64_t hash = tmpl.start;
    size_t size = 4;
    for (int p = 0; p < num_parts; ++p) {
      hash = ChainPart(hash, hashes[choice[p]]);
      if constexpr (kNamed) {
        const absl::string_view value = values[choice[p]];
        std::memcpy(key + size, value.data(), value.size());
        size += value.size();
        key[size++] = kPartSeparator;
      }
    }
    EmitFeature(emit, hash, tmpl.value, key, size);
    // Next combination, the last part fastest.
    int p = num_parts - 1;
    while (p >= 0 && ++choice[p] == begin[p + 1]) {
      choice[p] = begin[p];
      --p;
    }
    if (p < 0) return;
  }
}

absl::Status FeatureExtractor::Extract(const Sentence& sentence,
                                       FeatureSequence* out) const {
  out->Clear();
  absl::Status keys = CheckKeys("Extract");
  if (!keys.ok()) return keys;
  if (item_attributes_ && sentence.has_items() && templates_.size() <= 1) {
    // The features are known up front (the lists and the bias): sized
    // once, rather than doubled into up to twice the training set's size.
    const size_t most = static_cast<size_t>(sentence.num_items()) +
                        templates_.size() * sentence.size();
    out->buckets.reserve(most);
    out->values.reserve(most);
  }
  // Per feature of the current position: bucket << 32 | SortableBits(value).
  // Sorting these plain integers puts equal buckets together and fixes the
  // order in which colliding values are summed (by value), so the sums do
  // not depend on the sort algorithm.
  thread_local std::vector<uint64_t> row;
  row.clear();
  auto end_position = [out] {
    // A position has a few dozen features: insertion sort beats
    // std::sort's set-up there (the order is the same either way).
    if (row.size() <= 64) {
      for (size_t i = 1; i < row.size(); ++i) {
        const uint64_t key = row[i];
        size_t j = i;
        for (; j > 0 && row[j - 1] > key; --j) row[j] = row[j - 1];
        row[j] = key;
      }
    } else {
      std::sort(row.begin(), row.end());
    }
    for (size_t i = 0; i < row.size();) {
      const uint32_t bucket = static_cast<uint32_t>(row[i] >> 32);
      float sum = 0;
      for (; i < row.size() && (row[i] >> 32) == bucket; ++i) {
        sum += FromSortableBits(static_cast<uint32_t>(row[i]));
      }
      out->buckets.push_back(bucket);
      out->values.push_back(sum);
    }
    out->offsets.push_back(static_cast<int32_t>(out->buckets.size()));
    row.clear();
  };
  // Two instances of the loop, so that hashed features pay nothing for
  // exact ones, whose keys are looked up at the position's end, their
  // slots prefetched, as ExtractRows does. (An error comes before any
  // feature, so `keyed` is left empty.)
  thread_local std::vector<std::pair<uint64_t, float>> keyed;
  absl::Status status =
      exact_ ? ForEachHash(
                   sentence,
                   [this](uint64_t hash, float value) {
                     keys_->Prefetch(hash);
                     keyed.emplace_back(hash, value);
                   },
                   [this, &end_position] {
                     for (const auto& [hash, value] : keyed) {
                       const int64_t bucket = keys_->Find(hash);
                       if (bucket < 0) continue;  // not seen in training
                       row.push_back(static_cast<uint64_t>(bucket) << 32 |
                                     SortableBits(value));
                     }
                     keyed.clear();
                     end_position();
                   })
             : ForEachHash(
                   sentence,
                   [this](uint64_t hash, float value) {
                     row.push_back(uint64_t{Bucket(hash)} << 32 |
                                   SortableBits(value));
                   },
                   end_position);
  if (!status.ok()) out->Clear();
  return status;
}

namespace {

// Appends one position's features to `out` as rows, dropping those without
// one (row_of(k), the row of its k-th feature, is -1): ids, and the values
// (`values`) from the first value other than 1 on.
template <typename RowOf>
void AppendPositionRows(absl::Span<const float> values, RowOf row_of,
                        bool* unit_values, FeatureSequence* out) {
  for (size_t k = 0; k < values.size(); ++k) {
    const int64_t row = row_of(k);
    if (row < 0) continue;  // zero weight
    if (values[k] != 1.0f && *unit_values) {
      *unit_values = false;
      out->values.assign(out->buckets.size(), 1.0f);
    }
    out->buckets.push_back(static_cast<uint32_t>(row));
    if (!*unit_values) out->values.push_back(values[k]);
  }
  out->offsets.push_back(static_cast<int32_t>(out->buckets.size()));
}

}  // namespace

absl::Status FeatureExtractor::ExtractRows(const Sentence& sentence,
                                           const BucketRows& rows,
                                           FeatureSequence* out) const {
  out->Clear();
  absl::Status status = CheckKeys("ExtractRows");
  if (!status.ok()) return status;
  // A position's buckets (exact features: hashes) and values, looked up
  // together at its end so that the cache misses of the index (the key
  // table) overlap.
  thread_local std::vector<uint32_t> buckets;
  thread_local std::vector<uint64_t> hashes;
  thread_local std::vector<float> values;
  buckets.clear();
  hashes.clear();
  values.clear();
  bool unit_values = true;
  if (exact_) {
    // A loaded model keeps a row for every key of its table: a key's
    // bucket is then its row, and the rank index need not be read.
    const bool every_bucket =
        rows.size() == static_cast<int64_t>(rows.num_buckets());
    const FeatureKeys& keys = *keys_;
    status = ForEachHash(
        sentence,
        [&keys](uint64_t hash, float value) {
          keys.Prefetch(hash);
          hashes.push_back(hash);
          values.push_back(value);
        },
        [&keys, &rows, every_bucket, &unit_values, out] {
          AppendPositionRows(
              values,
              [&keys, &rows, every_bucket](size_t k) -> int64_t {
                const int64_t bucket = keys.Find(hashes[k]);
                return bucket < 0 || every_bucket ? bucket : rows.Find(bucket);
              },
              &unit_values, out);
          hashes.clear();
          values.clear();
        });
  } else {
    status = ForEachHash(
        sentence,
        [this, &rows](uint64_t hash, float value) {
          const uint32_t bucket = Bucket(hash);
          rows.Prefetch(bucket);
          buckets.push_back(bucket);
          values.push_back(value);
        },
        [&rows, &unit_values, out] {
          AppendPositionRows(
              values, [&rows](size_t k) { return rows.Find(buckets[k]); },
              &unit_values, out);
          buckets.clear();
          values.clear();
        });
  }
  if (!status.ok()) out->Clear();
  return status;
}

absl::Status FeatureExtractor::ExtractNames(
    const Sentence& sentence,
    std::vector<std::vector<NamedFeature>>* out) const {
  out->clear();
  absl::Status keys = CheckKeys("ExtractNames");
  if (!keys.ok()) return keys;
  std::vector<NamedFeature> position;
  absl::Status status = ForEachHash(
      sentence,
      [this, &position](uint64_t hash, float value, absl::string_view key) {
        const int64_t bucket = FindBucket(hash);
        if (bucket < 0) return;  // exact features: not seen in training
        position.push_back(
            NamedFeature{static_cast<uint32_t>(bucket), value, NameOfKey(key)});
      },
      [out, &position] { out->push_back(std::move(position)); });
  if (!status.ok()) out->clear();
  return status;
}

absl::Status FeatureExtractor::ForEachKey(
    const Sentence& sentence,
    absl::FunctionRef<void(uint64_t hash, absl::string_view key)> visit) const {
  return ForEachHash(
      sentence,
      [&visit](uint64_t hash, float, absl::string_view key) {
        visit(hash, key);
      },
      [] {});
}

absl::Status FeatureExtractor::ExtractHashes(const Sentence& sentence,
                                             std::vector<int32_t>* offsets,
                                             std::vector<uint64_t>* hashes,
                                             std::vector<float>* values) const {
  offsets->assign(1, 0);
  hashes->clear();
  values->clear();
  absl::Status status = ForEachHash(
      sentence,
      [hashes, values](uint64_t hash, float value) {
        hashes->push_back(hash);
        values->push_back(value);
      },
      [offsets, hashes] {
        offsets->push_back(static_cast<int32_t>(hashes->size()));
      });
  if (!status.ok()) {
    offsets->assign(1, 0);
    hashes->clear();
    values->clear();
  }
  return status;
}

}  // namespace chaintag
