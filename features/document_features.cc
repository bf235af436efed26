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
};

// A first-stage entity: its sentence, tokens [begin, end), type and words.
struct Entity {
  int sentence = 0;
  int begin = 0;
  int end = 0;
  std::string type;
  std::string surface;
};

// The most frequent key of `counts` less one occurrence of `own` (the
// token's own, which the attribute must not restate); ties to the smallest;
// "-" when there is none. Counting once per key and taking the token's own
// out keeps a document linear in its tokens, where counting the other
// occurrences for each token was quadratic in a word's repeats.
std::string MajorityWithout(const std::map<std::string, int>& counts,
                            const std::string& own) {
  std::string best = kNoDocumentEvidence;
  int best_count = 0;
  for (const auto& [key, count] : counts) {
    const int others = key == own ? count - 1 : count;
    if (others > best_count) {
      best = key;
      best_count = others;
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
        const std::string& label = labels[s][t];
        ++by_word_[Word({s, t})][label];
        ++by_lowercase_[absl::AsciiStrToLower(Word({s, t}))][label];
      }
      for (const Chunk& chunk : ExtractChunks(labels[s])) {
        AddEntity(s, chunk);
      }
    }
    for (auto& [word, indices] : containing_) longest_[word] = Longest(indices);
  }

  // The four attributes of the token at `p`.
  std::vector<std::string> Attributes(const Position& p) const {
    const std::string& own = labels_[p.sentence][p.token];
    return {
        MajorityWithout(by_word_.at(Word(p)), own),
        MajorityWithout(by_lowercase_.at(absl::AsciiStrToLower(Word(p))), own),
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
    ++by_surface_[entity.surface][entity.type];
    for (int t = chunk.begin; t < chunk.end; ++t) {
      containing_[Word({s, t})].push_back(index);
      entity_at_[{s, t}] = index;
    }
    entities_.push_back(std::move(entity));
  }

  std::string SurfaceType(const Position& p) const {
    const auto at = entity_at_.find({p.sentence, p.token});
    if (at == entity_at_.end()) return kNoDocumentEvidence;
    const Entity& own = entities_[at->second];
    return MajorityWithout(by_surface_.at(own.surface), own.type);
  }

  // The longest entities holding a word, longest first and among equals the
  // earliest in the document: the first, and the first other than it (a
  // token's own entity is left out, and it has one at most).
  struct LongestPair {
    int first = -1;
    int second = -1;
  };
  LongestPair Longest(const std::vector<int>& indices) const {
    LongestPair longest;
    auto longer = [&](int index, int than) {
      return than < 0 || entities_[index].end - entities_[index].begin >
                             entities_[than].end - entities_[than].begin;
    };
    for (int index : indices) {
      if (index == longest.first || index == longest.second) continue;
      if (longer(index, longest.first)) {
        longest.second = longest.first;
        longest.first = index;
      } else if (longer(index, longest.second)) {
        longest.second = index;
      }
    }
    return longest;
  }

  std::string LongestContaining(const Position& p) const {
    const auto found = longest_.find(Word(p));
    if (found == longest_.end()) return kNoDocumentEvidence;
    const auto own = entity_at_.find({p.sentence, p.token});
    int best = found->second.first;
    if (own != entity_at_.end() && own->second == best) {
      best = found->second.second;
    }
    if (best < 0) return kNoDocumentEvidence;
    const Entity& entity = entities_[best];
    const bool first = Word({entity.sentence, entity.begin}) == Word(p);
    return absl::StrCat(first ? "B-" : "I-", entity.type);
  }

  const int word_attribute_;
  const absl::Span<const Sentence> document_;
  const std::vector<std::vector<std::string>>& labels_;
  // Label counts of each word's and lowercased word's tokens, and entity
  // type counts of each surface string.
  absl::flat_hash_map<std::string, std::map<std::string, int>> by_word_;
  absl::flat_hash_map<std::string, std::map<std::string, int>> by_lowercase_;
  std::vector<Entity> entities_;
  absl::flat_hash_map<std::string, std::map<std::string, int>> by_surface_;
  absl::flat_hash_map<std::string, std::vector<int>> containing_;
  absl::flat_hash_map<std::string, LongestPair> longest_;
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
