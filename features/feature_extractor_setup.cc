// FeatureExtractor's construction (feature_extractor.h): the config's
// checks, its templates' parts as columns, and the word clusters they read;
// and what extraction calls off its hot path: the checks of a sentence's
// attributes and of the key table, the readable names of keys. Extraction is in
// feature_extractor.cc.
//
// Thread-safety: Create builds a new extractor; the rest is const.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "features/feature_extractor.h"
#include "features/feature_extractor_internal.h"
#include "features/part_values.h"

namespace chaintag {
namespace {

// "file:line: " for messages about a sentence, when it knows where it is
// from.
std::string Where(const Sentence& sentence) {
  if (sentence.source.empty()) return "";
  return absl::StrCat(sentence.source, ":", sentence.first_line, ": ");
}

}  // namespace

using feature_extractor_internal::kMaxNumberedDistance;
using feature_extractor_internal::kPartSeparator;
using feature_extractor_internal::ValueHash;
using feature_extractor_internal::WriteTemplateId;

std::string FeatureExtractor::TemplateName(int j) const {
  const std::string& name = config_->templates(j).name();
  return name.empty() ? absl::StrCat("#", j) : name;
}

std::string FeatureExtractor::DescribeTemplate(int j) const {
  const std::string& name = config_->templates(j).name();
  return name.empty() ? absl::StrCat("#", j)
                      : absl::StrCat("'", name, "' (#", j, ")");
}

absl::StatusOr<FeatureExtractor> FeatureExtractor::Create(
    const FeatureConfig& config) {
  return Create(config, nullptr);
}

absl::StatusOr<FeatureExtractor> FeatureExtractor::Create(
    const FeatureConfig& config, std::shared_ptr<const FeatureKeys> keys) {
  FeatureExtractor fx;
  fx.config_ = std::make_unique<FeatureConfig>(config);
  fx.exact_ = config.exact();
  if (!fx.exact_ && keys != nullptr) {
    return absl::InvalidArgumentError(
        "FeatureConfig: a key table is for exact features (features.exact), "
        "these are hashed");
  }
  if (fx.exact_ && config.pair_templates_size() > 0) {
    return absl::InvalidArgumentError(
        "FeatureConfig: exact features do not support pair_templates");
  }
  fx.keys_ = std::move(keys);
  // Exact features leave num_buckets unused; Bucket() stays defined.
  const uint64_t num_buckets = fx.exact_ ? 1 : config.num_buckets();
  if (num_buckets < 1 || num_buckets > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FeatureConfig: num_buckets must be in [1, 2^32], got ", num_buckets));
  }
  fx.num_buckets_ = num_buckets;
  if (num_buckets > 1 && (num_buckets & (num_buckets - 1)) == 0) {
    fx.bucket_mask_ = num_buckets - 1;
  }
  if (static_cast<uint64_t>(config.templates_size()) >=
      kItemAttributeTemplateId) {
    return absl::InvalidArgumentError("FeatureConfig: too many templates");
  }
  if (!config.template_file().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FeatureConfig: template_file '", config.template_file(),
        "' is not expanded (ExpandTemplateFile in features/template_file.h)"));
  }
  std::vector<std::string> column_patterns;  // parallel to columns_
  for (int j = 0; j < config.templates_size(); ++j) {
    absl::Status status = fx.AddTemplate(j, &column_patterns);
    if (!status.ok()) return status;
  }
  fx.MakeMarkers();
  fx.GroupColumns();
  absl::Status clusters = fx.LoadClusters();
  if (!clusters.ok()) return clusters;
  if (config.pair_templates_size() > 0) {
    FeatureConfig pair_config = config;
    pair_config.clear_pair_templates();
    *pair_config.mutable_templates() = config.pair_templates();
    pair_config.set_bias(false);
    absl::StatusOr<FeatureExtractor> pairs = Create(pair_config);
    if (!pairs.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pair templates: ", pairs.status().message()));
    }
    fx.pair_extractor_ = std::make_unique<FeatureExtractor>(*std::move(pairs));
    fx.pair_extractor_->item_attributes_ = false;
  }
  if (config.bias()) {
    Template bias;
    bias.id = kBiasTemplateId;
    bias.parts_begin = bias.parts_end = static_cast<int>(fx.parts_.size());
    fx.templates_.push_back(bias);
  }
  for (Template& tmpl : fx.templates_) {
    char id[4];
    WriteTemplateId(tmpl.id, id);
    tmpl.start = XXH3_64bits_withSeed(id, sizeof(id), config.hash_seed());
  }
  return fx;
}

absl::StatusOr<FeatureExtractor::Column> FeatureExtractor::PartColumn(
    const TemplatePart& part, const std::string& part_where,
    std::string* pattern) {
  if (part.attribute() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        part_where, ": attribute must be >= 0, got ", part.attribute()));
  }
  if (!TemplatePart::Transform_IsValid(part.transform())) {
    return absl::InvalidArgumentError(
        absl::StrCat(part_where, ": unknown transform ", part.transform()));
  }
  Column column;
  column.attribute = part.attribute();
  column.transform = part.transform();
  column.lowercase = part.lowercase();
  if (part.span() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(part_where, ": span must be >= 1, got ", part.span()));
  }
  if (column.transform == TemplatePart::PREFIX ||
      column.transform == TemplatePart::SUFFIX ||
      column.transform == TemplatePart::NGRAMS) {
    if (part.k() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          part_where, ": ", TemplatePart::Transform_Name(column.transform),
          " needs k > 0, got ", part.k()));
    }
    column.k = part.k();
  } else if (HasPattern(column.transform)) {
    *pattern = part.pattern();
  } else if (column.transform == TemplatePart::CLUSTER) {
    if (part.k() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          part_where, ": CLUSTER needs k >= 0 (0 = all bits), got ", part.k()));
    }
    column.k = part.k();
  }
  return column;
}

absl::StatusOr<int> FeatureExtractor::FindOrAddColumn(
    Column column, const std::string& pattern, const std::string& part_where,
    std::vector<std::string>* column_patterns) {
  for (int c = 0; c < static_cast<int>(columns_.size()); ++c) {
    const Column& other = columns_[c];
    if (other.attribute == column.attribute &&
        other.transform == column.transform && other.k == column.k &&
        other.lowercase == column.lowercase &&
        (*column_patterns)[c] == pattern) {
      return c;
    }
  }
  if (HasPattern(column.transform)) {
    RE2::Options options;
    options.set_log_errors(false);
    auto re2 = std::make_unique<RE2>(pattern, options);
    if (!re2->ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          part_where, ": bad ", TemplatePart::Transform_Name(column.transform),
          " pattern '", pattern, "': ", re2->error()));
    }
    column.pattern = re2.get();
    patterns_.push_back(std::move(re2));
  }
  columns_.push_back(column);
  column_patterns->push_back(pattern);
  return static_cast<int>(columns_.size()) - 1;
}

absl::Status FeatureExtractor::LoadClusters() {
  const bool used =
      std::any_of(columns_.begin(), columns_.end(), [](const Column& column) {
        return column.transform == TemplatePart::CLUSTER;
      });
  if (!used) return absl::OkStatus();
  if (!config_->has_clusters()) {
    return absl::InvalidArgumentError(
        "FeatureConfig: a CLUSTER part needs features.clusters (the "
        "pipeline builds them from features.cluster_source)");
  }
  absl::StatusOr<WordClusterTable> table =
      WordClusterTable::Create(config_->clusters());
  if (!table.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("FeatureConfig clusters: ", table.status().message()));
  }
  clusters_ = std::make_shared<const WordClusterTable>(*std::move(table));
  return absl::OkStatus();
}

absl::Status FeatureExtractor::AddTemplate(
    int j, std::vector<std::string>* column_patterns) {
  const FeatureTemplate& tmpl = config_->templates(j);
  const std::string where =
      absl::StrCat("FeatureConfig: template ", DescribeTemplate(j));
  if (!std::isfinite(tmpl.value())) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": value must be finite, got ", tmpl.value()));
  }
  Template compiled;
  compiled.id = static_cast<uint32_t>(j);
  compiled.value = tmpl.value();
  compiled.parts_begin = static_cast<int>(parts_.size());
  for (int p = 0; p < tmpl.parts_size(); ++p) {
    const TemplatePart& part = tmpl.parts(p);
    const std::string part_where = absl::StrCat(where, " part ", p);
    std::string pattern;
    absl::StatusOr<Column> column = PartColumn(part, part_where, &pattern);
    if (!column.ok()) return column.status();
    absl::StatusOr<int> c =
        FindOrAddColumn(*column, pattern, part_where, column_patterns);
    if (!c.ok()) return c.status();
    if (config_->boundary_markers() == FeatureConfig::NUMBERED &&
        (std::abs(int64_t{part.offset()}) > kMaxNumberedDistance ||
         part.span() > kMaxNumberedDistance)) {
      return absl::InvalidArgumentError(absl::StrCat(
          part_where, ": NUMBERED boundary markers need |offset| and span <= ",
          kMaxNumberedDistance));
    }
    parts_.push_back(Part{part.offset(), *c, part.span()});
    max_before_ = std::max<int64_t>(max_before_, -int64_t{part.offset()});
    max_after_ =
        std::max<int64_t>(max_after_, int64_t{part.offset()} + part.span() - 1);
    compiled.max_attribute =
        std::max(compiled.max_attribute, column->attribute);
    compiled.multi |=
        part.span() > 1 || column->transform == TemplatePart::NGRAMS;
  }
  compiled.parts_end = static_cast<int>(parts_.size());
  if (tmpl.literals_size() != 0 &&
      tmpl.literals_size() != tmpl.parts_size() + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": literals must be empty or parts + 1 = ",
        tmpl.parts_size() + 1, " pieces, got ", tmpl.literals_size()));
  }
  max_parts_ = std::max(max_parts_, tmpl.parts_size());
  max_attribute_ = std::max(max_attribute_, compiled.max_attribute);
  templates_.push_back(compiled);
  return absl::OkStatus();
}

void FeatureExtractor::MakeMarkers() {
  // Distances beyond the table read its farthest marker, which is every
  // farther one's too for FIXED and WAPITI; NUMBERED offsets are bounded
  // (AddTemplate), so its table reaches as far as any part reads.
  const int64_t cap = config_->boundary_markers() == FeatureConfig::FIXED ? 1
                      : config_->boundary_markers() == FeatureConfig::WAPITI
                          ? 5
                          : kMaxNumberedDistance;
  const int before = static_cast<int>(std::clamp<int64_t>(max_before_, 1, cap));
  const int after = static_cast<int>(std::clamp<int64_t>(max_after_, 1, cap));
  marker_before_ = before;
  const int per_column = before + after;
  markers_.assign(columns_.size() * per_column, std::string());
  for (size_t c = 0; c < columns_.size(); ++c) {
    const Column& column = columns_[c];
    for (int i = 0; i < per_column; ++i) {
      const int distance = i < before ? i - before : i - before + 1;
      std::string marker =
          PartMarker(*config_, distance, column.transform, column.pattern);
      max_marker_ = std::max(max_marker_, marker.size());
      markers_[c * per_column + i] = std::move(marker);
    }
  }
  marker_hashes_.clear();
  for (const std::string& marker : markers_) {
    marker_hashes_.push_back(ValueHash(marker, config_->hash_seed()));
  }
}

void FeatureExtractor::GroupColumns() {
  for (int c = 0; c < static_cast<int>(columns_.size()); ++c) {
    const Column& column = columns_[c];
    auto group =
        std::find_if(attribute_columns_.begin(), attribute_columns_.end(),
                     [&](const AttributeColumns& g) {
                       return g.attribute == column.attribute;
                     });
    if (group == attribute_columns_.end()) {
      attribute_columns_.push_back(AttributeColumns{column.attribute});
      group = attribute_columns_.end() - 1;
    }
    if (column.transform == TemplatePart::IDENTITY && !column.lowercase) {
      group->identity_column = c;
    } else {
      group->derived_columns.push_back(c);
    }
  }
  const std::string bytes = config_->SerializeAsString();
  fingerprint_ = XXH3_64bits(bytes.data(), bytes.size());
}

absl::Status FeatureExtractor::CheckAttributes(const Sentence& sentence) const {
  // One comparison on the common path; the templates are looked at only to
  // name the one at fault.
  if (max_attribute_ < sentence.num_attributes) return absl::OkStatus();
  for (int j = 0; j < config_->templates_size(); ++j) {
    if (templates_[j].max_attribute >= 0 && sentence.has_items()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%stemplate %s reads attribute columns, but the sentence has "
          "attribute lists (CRFsuite layout) and no columns: leave "
          "features.templates empty",
          Where(sentence), DescribeTemplate(j)));
    }
    if (templates_[j].max_attribute >= sentence.num_attributes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%stemplate %s reads attribute %d but the sentence has %d "
          "attributes",
          Where(sentence), DescribeTemplate(j), templates_[j].max_attribute,
          sentence.num_attributes));
    }
  }
  return absl::OkStatus();
}

absl::Status FeatureExtractor::CheckKeys(absl::string_view what) const {
  if (!exact_ || keys_ != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      what,
      " of exact features needs their key table (the training data's "
      "keys, features/training_keys.h)"));
}

std::string FeatureExtractor::NameOfKey(absl::string_view key) const {
  const uint32_t id =
      static_cast<uint32_t>(static_cast<unsigned char>(key[0])) |
      static_cast<uint32_t>(static_cast<unsigned char>(key[1])) << 8 |
      static_cast<uint32_t>(static_cast<unsigned char>(key[2])) << 16 |
      static_cast<uint32_t>(static_cast<unsigned char>(key[3])) << 24;
  if (id == kBiasTemplateId) return "bias";
  key.remove_prefix(4);
  if (id == kItemAttributeTemplateId) return std::string(key);  // as listed
  if (!key.empty()) key.remove_suffix(1);  // the last part's separator
  const FeatureTemplate& tmpl = config_->templates(id);
  // One value per part: a separator inside a value stays in the last one.
  std::vector<absl::string_view> values;
  if (tmpl.parts_size() > 0) {
    values = absl::StrSplit(
        key, absl::MaxSplits(kPartSeparator, tmpl.parts_size() - 1));
  }
  if (tmpl.literals_size() > 0) {
    std::string name = tmpl.literals(0);
    for (size_t p = 0; p < values.size(); ++p) {
      absl::StrAppend(&name, values[p], tmpl.literals(p + 1));
    }
    return name;
  }
  return absl::StrCat(TemplateName(id), "=", absl::StrJoin(values, "|"));
}

void ClearFirstPosition(FeatureSequence* features) {
  if (features->size() == 0) return;
  const int32_t first = features->offsets[1];
  if (first == 0) return;
  features->buckets.erase(features->buckets.begin(),
                          features->buckets.begin() + first);
  if (!features->values.empty()) {
    features->values.erase(features->values.begin(),
                           features->values.begin() + first);
  }
  for (int32_t& offset : features->offsets)
    offset = std::max(0, offset - first);
}

}  // namespace chaintag
