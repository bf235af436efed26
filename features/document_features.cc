#include "features/document_features.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "corpora/tag_scheme.h"

namespace chaintag {
namespace {

// A token of the document: its sentence and position.
struct Position {
  int sentence = 0;
  int token = 0;
  bool operator==(const Position& other) const {
    return sentence == other.sentence && token == other.token;
  }
};

// A first-stage entity: its sentence, tokens [begin, end), type and words.
struct Entity {
  int sentence = 0;
  int begin = 0;
  int end = 0;
  std::string type;
  std::string surface;
  bool Covers(const Position& p) const {
    return p.sentence == sentence && p.token >= begin && p.token < end;
  }
};

// The most frequent key; ties to the smallest; "-" when there is none.
std::string Majority(const std::map<std::string, int>& counts) {
  std::string best = kNoDocumentEvidence;
  int best_count = 0;
  for (const auto& [key, count] : counts) {
    if (count > best_count) {
      best = key;
      best_count = count;
    }
  }
  return best;
}

class DocumentView {
 public:
  DocumentView(int word_attribute, absl::Span<const Sentence> document,
               const std::vector<std::vector<std::string>>& labels)
      : word_attribute_(word_attribute), document_(document), labels_(labels) {
    for (int s = 0; s < static_cast<int>(document.size()); ++s) {
      for (int t = 0; t < document[s].size(); ++t) {
        by_word_[Word({s, t})].push_back({s, t});
        by_lowercase_[absl::AsciiStrToLower(Word({s, t}))].push_back({s, t});
      }
      for (const Chunk& chunk : ExtractChunks(labels[s])) {
        AddEntity(s, chunk);
      }
    }
  }

  // The four attributes of the token at `p`.
  std::vector<std::string> Attributes(const Position& p) const {
    return {MajorityLabel(by_word_, Word(p), p),
            MajorityLabel(by_lowercase_, absl::AsciiStrToLower(Word(p)), p),
            SurfaceType(p), LongestContaining(p)};
  }

 private:
  const std::string& Word(const Position& p) const {
    return document_[p.sentence].attribute(p.token, word_attribute_);
  }

  void AddEntity(int s, const Chunk& chunk) {
    Entity entity{s, chunk.begin, chunk.end, chunk.type, ""};
    std::vector<absl::string_view> words;
    for (int t = chunk.begin; t < chunk.end; ++t) words.push_back(Word({s, t}));
    entity.surface = absl::StrJoin(words, " ");
    const int index = static_cast<int>(entities_.size());
    by_surface_[entity.surface].push_back(index);
    for (int t = chunk.begin; t < chunk.end; ++t) {
      containing_[Word({s, t})].push_back(index);
      entity_at_[{s, t}] = index;
    }
    entities_.push_back(std::move(entity));
  }

  std::string MajorityLabel(
      const absl::flat_hash_map<std::string, std::vector<Position>>& index,
      const std::string& key, const Position& p) const {
    std::map<std::string, int> counts;
    for (const Position& other : index.at(key)) {
      if (!(other == p)) ++counts[labels_[other.sentence][other.token]];
    }
    return Majority(counts);
  }

  std::string SurfaceType(const Position& p) const {
    const auto at = entity_at_.find({p.sentence, p.token});
    if (at == entity_at_.end()) return kNoDocumentEvidence;
    std::map<std::string, int> counts;
    for (int other : by_surface_.at(entities_[at->second].surface)) {
      if (other != at->second) ++counts[entities_[other].type];
    }
    return Majority(counts);
  }

  std::string LongestContaining(const Position& p) const {
    const auto found = containing_.find(Word(p));
    if (found == containing_.end()) return kNoDocumentEvidence;
    const Entity* best = nullptr;
    for (int index : found->second) {
      const Entity& entity = entities_[index];
      if (entity.Covers(p)) continue;
      // Longest first; among equals the earliest in the document.
      if (best == nullptr ||
          entity.end - entity.begin > best->end - best->begin) {
        best = &entity;
      }
    }
    if (best == nullptr) return kNoDocumentEvidence;
    const bool first = Word({best->sentence, best->begin}) == Word(p);
    return absl::StrCat(first ? "B-" : "I-", best->type);
  }

  const int word_attribute_;
  const absl::Span<const Sentence> document_;
  const std::vector<std::vector<std::string>>& labels_;
  absl::flat_hash_map<std::string, std::vector<Position>> by_word_;
  absl::flat_hash_map<std::string, std::vector<Position>> by_lowercase_;
  std::vector<Entity> entities_;
  absl::flat_hash_map<std::string, std::vector<int>> by_surface_;
  absl::flat_hash_map<std::string, std::vector<int>> containing_;
  absl::flat_hash_map<std::pair<int, int>, int> entity_at_;
};

absl::Status CheckDocument(int word_attribute,
                           const std::vector<std::vector<std::string>>& labels,
                           absl::Span<const Sentence> document) {
  if (labels.size() != document.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("document attributes: ", labels.size(), " labelings for ",
                     document.size(), " sentences"));
  }
  for (size_t s = 0; s < document.size(); ++s) {
    if (static_cast<int>(labels[s].size()) != document[s].size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "document attributes: sentence ", s, " has ", document[s].size(),
          " tokens and ", labels[s].size(), " labels"));
    }
    if (word_attribute < 0 || word_attribute >= document[s].num_attributes) {
      return absl::InvalidArgumentError(
          absl::StrCat("document attributes: word attribute ", word_attribute,
                       " of ", document[s].num_attributes));
    }
  }
  return absl::OkStatus();
}

// Rewrites the sentence's row-major attributes with `extra` after each
// token's own.
void AppendAttributes(const std::vector<std::vector<std::string>>& extra,
                      Sentence* sentence) {
  const int before = sentence->num_attributes;
  const int after = before + kNumDocumentAttributes;
  std::vector<std::string> attributes;
  attributes.reserve(static_cast<size_t>(sentence->size()) * after);
  for (int t = 0; t < sentence->size(); ++t) {
    for (int a = 0; a < before; ++a) {
      attributes.push_back(
          std::move(sentence->attributes[static_cast<size_t>(t) * before + a]));
    }
    for (const std::string& value : extra[t]) attributes.push_back(value);
  }
  sentence->attributes = std::move(attributes);
  sentence->num_attributes = after;
}

}  // namespace

absl::Status AppendDocumentAttributes(
    int word_attribute, const std::vector<std::vector<std::string>>& labels,
    absl::Span<Sentence> document) {
  absl::Status valid = CheckDocument(word_attribute, labels, document);
  if (!valid.ok()) return valid;
  std::vector<std::vector<std::vector<std::string>>> extra(document.size());
  {
    const DocumentView view(word_attribute, document, labels);
    for (int s = 0; s < static_cast<int>(document.size()); ++s) {
      for (int t = 0; t < document[s].size(); ++t) {
        extra[s].push_back(view.Attributes({s, t}));
      }
    }
  }
  for (size_t s = 0; s < document.size(); ++s) {
    AppendAttributes(extra[s], &document[s]);
  }
  return absl::OkStatus();
}

}  // namespace chaintag
