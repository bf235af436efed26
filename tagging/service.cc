#include "tagging/service.h"

#include <cstdio>
#include <future>
#include <map>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/parallel.h"
#include "base/paths.h"
#include "corpora/tag_scheme.h"
#include "google/protobuf/util/json_util.h"
#include "models/chain_model.h"
#include "tagging/bundle.h"
#include "tagging/conll_tagging.h"
#include "tagging/tag_output.h"
#include "tagging/text_tagging.h"

namespace chaintag {

// What one (re)load produced. Immutable; requests share it.
struct TaggingService::Loaded {
  // Raw text and token lists go through the bundle (a single model that
  // reads only the tokens is a one-stage bundle).
  std::optional<Bundle> bundle;
  // A single model that reads more columns than the tokens: CoNLL only.
  std::optional<ChainModel> model;
  int64_t generation = 0;
  std::string path;
  std::string name;
  absl::Time loaded_at;
};

// A worker's buffers, rebuilt when the model or the decoding options change
// (so a worker keeps the model it last used alive until its next request).
struct TaggingService::Worker {
  std::shared_ptr<const Loaded> loaded;
  std::unique_ptr<TextTagger> tagger;
  std::string out;
};

struct TaggingService::Counters {
  static constexpr double kBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                        0.025,  0.05,  0.1,    0.25,  0.5,
                                        1,      2.5,   5,      10};
  static constexpr int kNumBuckets = sizeof(kBuckets) / sizeof(kBuckets[0]);
  struct Histogram {
    int64_t counts[kNumBuckets + 1] = {};  // the last: above every bound
    double sum = 0;
    int64_t count = 0;
  };
  absl::Mutex mutex;
  std::map<std::pair<std::string, int>, int64_t> requests
      ABSL_GUARDED_BY(mutex);
  std::map<std::string, Histogram> durations ABSL_GUARDED_BY(mutex);
  std::atomic<int64_t> tokens{0};
  std::atomic<int64_t> sentences{0};
  std::atomic<int64_t> reloads_ok{0};
  std::atomic<int64_t> reloads_failed{0};
};

namespace {

constexpr int kMaxNbest = 100;

bool IsJsonContentType(absl::string_view content_type) {
  // "application/json", optionally with parameters ("; charset=utf-8").
  absl::string_view type = content_type.substr(0, content_type.find(';'));
  return absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(type),
                                "application/json");
}

std::string FileStem(absl::string_view path) {
  absl::string_view base = path.substr(path.rfind('/') + 1);
  return std::string(base.substr(0, base.find('.')));
}

// {"name":...,"generation":G}
std::string ModelJson(const std::string& name, int64_t generation) {
  std::string out = "{\"name\":";
  AppendJsonString(name, &out);
  absl::StrAppend(&out, ",\"generation\":", generation, "}");
  return out;
}

void AppendStringArray(const std::vector<std::string>& items,
                       std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(items[i], out);
  }
  out->push_back(']');
}

// One stage of /v1/models.
void AppendStageJson(const std::string& name, const std::string& column,
                     const std::string& model_file,
                     const std::vector<std::string>& inputs, bool chunking,
                     const ChainModel& model, std::string* out) {
  const ModelFile& header = model.header();
  absl::StrAppend(out, "{\"name\":");
  AppendJsonString(name, out);
  absl::StrAppend(out, ",\"column\":");
  AppendJsonString(column, out);
  absl::StrAppend(out, ",\"model\":");
  AppendJsonString(model_file, out);
  absl::StrAppend(out, ",\"inputs\":");
  AppendStringArray(inputs, out);
  absl::StrAppend(out, ",\"labels\":");
  AppendStringArray(
      std::vector<std::string>(header.labels().begin(), header.labels().end()),
      out);
  absl::StrAppend(out, ",\"order\":", model.order(), ",\"trainScheme\":");
  AppendJsonString(TagSchemeName(header.train_scheme()), out);
  absl::StrAppend(out, ",\"scheme\":");
  AppendJsonString(TagSchemeName(header.output_scheme()), out);
  absl::StrAppend(
      out, ",\"chunking\":", chunking ? "true" : "false",
      ",\"stacked\":", model.first_stage() != nullptr ? "true" : "false");
  std::string training;
  if (google::protobuf::util::MessageToJsonString(header.training(), &training)
          .ok()) {
    absl::StrAppend(out, ",\"training\":", training);
  }
  out->push_back('}');
}

// Joins `tag --format=json`'s lines (each ending in a newline) into the
// elements of a JSON array.
void AppendJsonLinesAsArray(absl::string_view lines, std::string* out) {
  out->push_back('[');
  bool first = true;
  for (absl::string_view line : absl::StrSplit(lines, '\n')) {
    if (line.empty()) continue;
    if (!first) out->push_back(',');
    first = false;
    out->append(line.data(), line.size());
  }
  out->push_back(']');
}

}  // namespace

ServiceResponse ErrorResponse(int status, absl::string_view message) {
  ServiceResponse response;
  response.status = status;
  response.body =
      absl::StrCat("{\"error\":{\"code\":", status, ",\"message\":");
  AppendJsonString(message, &response.body);
  response.body.append("}}");
  return response;
}

void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", c);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

int64_t FirstInvalidUtf8(absl::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const int64_t n = static_cast<int64_t>(text.size());
  int64_t i = 0;
  while (i < n) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    int length;
    uint32_t code_point;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      code_point = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      code_point = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      code_point = lead & 0x07;
    } else {
      return i;  // a continuation byte, an overlong C0/C1, or F5..FF
    }
    if (i + length > n) return i;
    for (int k = 1; k < length; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (bytes[i + k] & 0x3F);
    }
    const bool overlong = (length == 3 && code_point < 0x800) ||
                          (length == 4 && code_point < 0x10000);
    const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
    if (overlong || surrogate || code_point > 0x10FFFF) return i;
    i += length;
  }
  return -1;
}

absl::StatusOr<std::unique_ptr<TaggingService>> TaggingService::Create(
    const ServiceConfig& config) {
  if (config.bundle().empty() == config.model().empty()) {
    return absl::InvalidArgumentError("give a bundle or a model, not both");
  }
  if (config.threads() < 1 || config.threads() > kMaxThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "threads must be in [1, ", kMaxThreads, "], got ", config.threads()));
  }
  if (config.max_in_flight() < 1 || config.max_tokens() < 1 ||
      config.max_body_bytes() < 1 || config.connection_threads() < 1 ||
      !(config.request_timeout_seconds() > 0) ||
      config.keep_alive_seconds() < 0) {
    return absl::InvalidArgumentError(
        "max_in_flight, max_tokens, max_body_bytes, connection_threads and "
        "request_timeout_seconds must be positive, keep_alive_seconds not "
        "negative");
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Create();
  if (!tokenizer.ok()) return tokenizer.status();
  absl::StatusOr<std::shared_ptr<const Loaded>> loaded = Load(config, 1);
  if (!loaded.ok()) return loaded.status();
  return std::unique_ptr<TaggingService>(
      new TaggingService(config, *std::move(tokenizer), *std::move(loaded)));
}

TaggingService::TaggingService(ServiceConfig config,
                               std::unique_ptr<Tokenizer> tokenizer,
                               std::shared_ptr<const Loaded> loaded)
    : config_(std::move(config)),
      tokenizer_(std::move(tokenizer)),
      loaded_(std::move(loaded)),
      metrics_(std::make_unique<Counters>()) {
  for (int i = 0; i < config_.threads(); ++i) {
    workers_.push_back(std::make_unique<Worker>());
  }
  pool_ = std::make_unique<WorkerPool>(config_.threads());
}

TaggingService::~TaggingService() { pool_.reset(); }

absl::StatusOr<std::shared_ptr<const TaggingService::Loaded>>
TaggingService::Load(const ServiceConfig& config, int64_t generation) {
  auto loaded = std::make_shared<Loaded>();
  loaded->generation = generation;
  loaded->loaded_at = absl::Now();
  if (!config.bundle().empty()) {
    loaded->path = ResolveUserPath(config.bundle());
    absl::StatusOr<Bundle> bundle = Bundle::Load(loaded->path);
    if (!bundle.ok()) return bundle.status();
    loaded->name = bundle->manifest().name();
    loaded->bundle.emplace(*std::move(bundle));
    return std::shared_ptr<const Loaded>(std::move(loaded));
  }
  loaded->path = ResolveUserPath(config.model());
  absl::StatusOr<ChainModel> model = ChainModel::Load(loaded->path);
  if (!model.ok()) return model.status();
  if (!model->header().has_input_format()) {
    return absl::InvalidArgumentError(absl::StrCat(
        loaded->path,
        ": the model has no CoNLL input format (an OCR pixel model?)"));
  }
  loaded->name = FileStem(loaded->path);
  if (model->header().input_format().attribute_columns_size() != 1) {
    loaded->model.emplace(*std::move(model));
    return std::shared_ptr<const Loaded>(std::move(loaded));
  }
  // It reads the tokens alone: a one-stage bundle tags text too.
  BundleManifest manifest;
  manifest.set_name(loaded->name);
  BundleStage* stage = manifest.add_stages();
  stage->set_name(loaded->name);
  stage->set_model(loaded->path);
  stage->add_inputs()->set_column(kWordColumn);
  stage->set_writes("tag");
  std::vector<ChainModel> models;
  models.push_back(*std::move(model));
  absl::StatusOr<Bundle> bundle =
      Bundle::Create(manifest, std::move(models), loaded->path);
  if (!bundle.ok()) return bundle.status();
  loaded->bundle.emplace(*std::move(bundle));
  return std::shared_ptr<const Loaded>(std::move(loaded));
}

std::shared_ptr<const TaggingService::Loaded> TaggingService::Current() const {
  absl::MutexLock lock(&loaded_mutex_);
  return loaded_;
}

int64_t TaggingService::generation() const { return Current()->generation; }

ServiceResponse TaggingService::Tag(absl::string_view body,
                                    absl::string_view content_type) {
  if (!IsJsonContentType(content_type)) {
    return ErrorResponse(
        415, absl::StrCat("Content-Type must be application/json, got \"",
                          content_type, "\""));
  }
  if (static_cast<int64_t>(body.size()) > config_.max_body_bytes()) {
    return ErrorResponse(
        413, absl::StrCat("the body has ", body.size(), " bytes; at most ",
                          config_.max_body_bytes()));
  }
  if (const int64_t bad = FirstInvalidUtf8(body); bad >= 0) {
    return ErrorResponse(
        400, absl::StrCat("the body is not valid UTF-8 (byte ", bad, ")"));
  }
  TagRequest request;
  google::protobuf::util::JsonParseOptions parse_options;
  parse_options.ignore_unknown_fields = false;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(body.data(), body.size()), &request,
      parse_options);
  if (!parsed.ok()) {
    return ErrorResponse(400, absl::StrCat("the body is not a tag request: ",
                                           parsed.message().as_string()));
  }
  const int inputs =
      request.has_text() + (request.sentences_size() > 0) + request.has_conll();
  if (inputs != 1) {
    return ErrorResponse(
        400, "give exactly one of \"text\", \"sentences\" or \"conll\"");
  }
  if (request.nbest() < 1 || request.nbest() > kMaxNbest) {
    return ErrorResponse(400, absl::StrCat("nbest must be in [1, ", kMaxNbest,
                                           "], got ", request.nbest()));
  }
  if (draining_.load()) {
    ServiceResponse response =
        ErrorResponse(503, "the server is shutting down");
    response.retry_after_seconds = 1;
    return response;
  }
  if (in_flight_.fetch_add(1) >= config_.max_in_flight()) {
    in_flight_.fetch_sub(1);
    ServiceResponse response =
        ErrorResponse(503, absl::StrCat("too many requests in flight (at most ",
                                        config_.max_in_flight(), "); retry"));
    response.retry_after_seconds = 1;
    return response;
  }
  const std::shared_ptr<const Loaded> loaded = Current();
  ServiceResponse response;
  std::promise<void> done;
  pool_->Submit([&](int worker) {
    response = TagOnWorker(request, loaded, workers_[worker].get());
    done.set_value();
  });
  done.get_future().wait();
  in_flight_.fetch_sub(1);
  return response;
}

namespace {

std::string TooManyTokens(int64_t max_tokens) {
  return absl::StrCat("the request has more than ", max_tokens, " tokens");
}

// Tags the text of `request` as `tag` reads it: one sentence per line, or
// blank-line separated paragraphs, numbered as `tag` numbers them (a final
// CR dropped). Stops with kResourceExhausted past `max_tokens` tokens.
absl::Status TagText(const TagRequest& request, int64_t max_tokens,
                     TextTagger* tagger, std::string* out) {
  const int64_t tokens_before = tagger->tokens_tagged();
  auto within_limit = [&] {
    return tagger->tokens_tagged() - tokens_before <= max_tokens
               ? absl::OkStatus()
               : absl::ResourceExhaustedError(TooManyTokens(max_tokens));
  };
  int64_t line_number = 0, paragraph_line = 0;
  std::string paragraph;
  auto tag_paragraph = [&] {
    if (paragraph.empty()) return absl::OkStatus();
    absl::Status tagged = tagger->Paragraph(paragraph, paragraph_line, out);
    paragraph.clear();
    return tagged.ok() ? within_limit() : tagged;
  };
  for (absl::string_view line : absl::StrSplit(request.text(), '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    absl::Status status;
    if (!request.paragraphs()) {
      status = tagger->Line(line, line_number, out);
      if (status.ok()) status = within_limit();
    } else if (line.find_first_not_of(" \t") == absl::string_view::npos) {
      status = tag_paragraph();
    } else {
      if (paragraph.empty()) {
        paragraph_line = line_number;
      } else {
        paragraph.push_back('\n');
      }
      absl::StrAppend(&paragraph, line);
    }
    if (!status.ok()) return status;
  }
  return tag_paragraph();
}

absl::Status TagSentences(const TagRequest& request, int64_t max_tokens,
                          TextTagger* tagger, std::string* out) {
  int64_t tokens = 0;
  for (const TokensRecord& sentence : request.sentences()) {
    tokens += sentence.tokens_size();
  }
  if (tokens > max_tokens) {
    return absl::ResourceExhaustedError(TooManyTokens(max_tokens));
  }
  std::vector<std::string> words;
  for (int i = 0; i < request.sentences_size(); ++i) {
    const auto& given = request.sentences(i).tokens();
    words.assign(given.begin(), given.end());
    absl::Status status = tagger->Words(words, i + 1, out);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

ServiceResponse FailedRequest(const absl::Status& status) {
  return ErrorResponse(
      status.code() == absl::StatusCode::kResourceExhausted ? 413 : 400,
      status.message());
}

}  // namespace

ServiceResponse TaggingService::TagOnWorker(
    const TagRequest& request, const std::shared_ptr<const Loaded>& current,
    Worker* worker) {
  worker->out.clear();
  if (request.has_conll()) return TagConll(request, *current, &worker->out);
  const Loaded& loaded = *current;
  if (!loaded.bundle.has_value()) {
    return ErrorResponse(
        400, absl::StrCat(
                 "the model reads ",
                 loaded.model->header().input_format().attribute_columns_size(),
                 " columns, not the tokens alone: send \"conll\""));
  }
  BundleOptions options;
  options.constrained = request.constrained();
  options.nbest = request.nbest();
  options.margins = request.margins();
  if (worker->loaded != current || worker->tagger == nullptr ||
      worker->tagger->options().constrained != options.constrained ||
      worker->tagger->options().nbest != options.nbest ||
      worker->tagger->options().margins != options.margins) {
    worker->tagger.reset();  // before the model it points into may go
    worker->loaded = current;
    worker->tagger = std::make_unique<TextTagger>(
        &*loaded.bundle, tokenizer_.get(), OutputFormat::kJson, -1, options);
  }
  TextTagger& tagger = *worker->tagger;
  const int64_t tokens_before = tagger.tokens_tagged();
  const int64_t sentences_before = tagger.sentences_tagged();
  const absl::Status status =
      request.has_text()
          ? TagText(request, config_.max_tokens(), &tagger, &worker->out)
          : TagSentences(request, config_.max_tokens(), &tagger, &worker->out);
  if (!status.ok()) return FailedRequest(status);
  const int64_t tokens = tagger.tokens_tagged() - tokens_before;
  metrics_->tokens.fetch_add(tokens);
  metrics_->sentences.fetch_add(tagger.sentences_tagged() - sentences_before);
  ServiceResponse response;
  response.body.reserve(worker->out.size() + 128);
  absl::StrAppend(&response.body,
                  "{\"model\":", ModelJson(loaded.name, loaded.generation),
                  ",\"tokens\":", tokens, ",\"sentences\":");
  AppendJsonLinesAsArray(worker->out, &response.body);
  response.body.push_back('}');
  return response;
}

ServiceResponse TaggingService::TagConll(const TagRequest& request,
                                         const Loaded& loaded,
                                         std::string* out) {
  const ChainModel* model = nullptr;
  if (loaded.model.has_value()) {
    model = &*loaded.model;
  } else if (config_.bundle().empty()) {  // one model, as a bundle
    model = &loaded.bundle->stage_model(0);
  } else {
    return ErrorResponse(400,
                         "\"conll\" needs a server started with one model "
                         "(--model); a bundle tags \"text\" or \"sentences\"");
  }
  // Column input is tagged as `tag --model` tags it: one best labeling,
  // constrained by the model's scheme, no margins (as `tag` refuses those
  // flags with --model).
  for (const auto& [asked, field] :
       {std::pair<bool, const char*>{request.nbest() != 1, "nbest"},
        {request.margins(), "margins"},
        {!request.constrained(), "constrained"},
        {request.paragraphs(), "paragraphs"}}) {
    if (asked) {
      return ErrorResponse(400,
                           absl::StrCat("\"", field,
                                        "\" applies to \"text\" and "
                                        "\"sentences\", not to \"conll\""));
    }
  }
  const int64_t max_tokens = config_.max_tokens();
  std::istringstream input(request.conll());
  int64_t tokens = 0, sentences = 0;
  ConllTaggingOptions options;
  options.on_tagged = [&](const Sentence&,
                          const std::vector<std::string>& tags) {
    tokens += static_cast<int64_t>(tags.size());
    ++sentences;
    return tokens <= max_tokens
               ? absl::OkStatus()
               : absl::ResourceExhaustedError(TooManyTokens(max_tokens));
  };
  const absl::Status status = TagConllStream(*model, &input, "conll", options,
                                             [out](const std::string& output) {
                                               out->append(output);
                                               return absl::OkStatus();
                                             });
  if (!status.ok()) return FailedRequest(status);
  metrics_->tokens.fetch_add(tokens);
  metrics_->sentences.fetch_add(sentences);
  ServiceResponse response;
  response.body = absl::StrCat(
      "{\"model\":", ModelJson(loaded.name, loaded.generation),
      ",\"tokens\":", tokens, ",\"sentences\":", sentences, ",\"conll\":");
  AppendJsonString(*out, &response.body);
  response.body.push_back('}');
  return response;
}

ServiceResponse TaggingService::Health() const {
  if (draining_.load()) {
    ServiceResponse response =
        ErrorResponse(503, "the server is shutting down");
    response.retry_after_seconds = 1;
    return response;
  }
  ServiceResponse response;
  response.body =
      absl::StrCat("{\"status\":\"ok\",\"generation\":", generation(), "}");
  return response;
}

ServiceResponse TaggingService::Models() const {
  const std::shared_ptr<const Loaded> loaded = Current();
  ServiceResponse response;
  std::string& out = response.body;
  absl::StrAppend(&out, "{\"generation\":", loaded->generation, ",\"path\":");
  AppendJsonString(loaded->path, &out);
  absl::StrAppend(&out, ",\"loadedAt\":");
  AppendJsonString(absl::FormatTime(absl::RFC3339_sec, loaded->loaded_at,
                                    absl::UTCTimeZone()),
                   &out);
  absl::StrAppend(&out, ",\"name\":");
  AppendJsonString(loaded->name, &out);
  // What POST /v1/tag accepts from this model.
  absl::StrAppend(&out, ",\"inputs\":[");
  if (loaded->bundle.has_value()) out.append("\"text\",\"sentences\"");
  if (config_.bundle().empty()) {
    absl::StrAppend(&out, loaded->bundle.has_value() ? "," : "", "\"conll\"");
  }
  out.append("],\"stages\":[");
  if (loaded->bundle.has_value()) {
    const Bundle& bundle = *loaded->bundle;
    for (int s = 0; s < bundle.num_stages(); ++s) {
      const BundleStage& stage = bundle.manifest().stages(s);
      std::vector<std::string> inputs;
      for (const BundleInput& input : stage.inputs()) {
        inputs.push_back(input.column());
      }
      if (s > 0) out.push_back(',');
      AppendStageJson(bundle.stage_name(s), bundle.stage_column(s),
                      stage.model(), inputs, bundle.is_chunking(s),
                      bundle.stage_model(s), &out);
    }
  } else {
    const ChainModel& model = *loaded->model;
    std::vector<std::string> inputs;
    for (int column : model.header().input_format().attribute_columns()) {
      inputs.push_back(absl::StrCat("column ", column));
    }
    const TagScheme scheme = model.header().output_scheme();
    AppendStageJson(loaded->name, "tag", loaded->path, inputs,
                    scheme == IOB1 || scheme == IOB2 || scheme == IOBES, model,
                    &out);
  }
  out.append("]}");
  return response;
}

ServiceResponse TaggingService::Reload() {
  absl::MutexLock reload_lock(&reload_mutex_);
  absl::StatusOr<std::shared_ptr<const Loaded>> loaded =
      Load(config_, generation() + 1);
  if (!loaded.ok()) {
    metrics_->reloads_failed.fetch_add(1);
    return ErrorResponse(
        422, absl::StrCat("reload failed, generation ", generation(),
                          " keeps serving: ", loaded.status().message()));
  }
  {
    absl::MutexLock lock(&loaded_mutex_);
    loaded_ = *std::move(loaded);
  }
  metrics_->reloads_ok.fetch_add(1);
  ServiceResponse response;
  response.body = absl::StrCat("{\"generation\":", generation(), "}");
  return response;
}

void TaggingService::RecordRequest(absl::string_view path, int status,
                                   double seconds) {
  absl::MutexLock lock(&metrics_->mutex);
  ++metrics_->requests[{std::string(path), status}];
  Counters::Histogram& histogram = metrics_->durations[std::string(path)];
  int bucket = 0;
  while (bucket < Counters::kNumBuckets &&
         seconds > Counters::kBuckets[bucket]) {
    ++bucket;
  }
  ++histogram.counts[bucket];
  histogram.sum += seconds;
  ++histogram.count;
}

std::string TaggingService::Metrics() const {
  std::string out;
  absl::StrAppend(&out,
                  "# HELP chaintag_http_requests_total HTTP requests answered, "
                  "by path and status.\n"
                  "# TYPE chaintag_http_requests_total counter\n");
  absl::MutexLock lock(&metrics_->mutex);
  for (const auto& [key, count] : metrics_->requests) {
    absl::StrAppendFormat(
        &out, "chaintag_http_requests_total{path=\"%s\",code=\"%d\"} %d\n",
        key.first, key.second, count);
  }
  absl::StrAppend(&out,
                  "# HELP chaintag_http_request_duration_seconds From the "
                  "request read to the answer written.\n"
                  "# TYPE chaintag_http_request_duration_seconds histogram\n");
  for (const auto& [path, histogram] : metrics_->durations) {
    int64_t cumulative = 0;
    for (int b = 0; b <= Counters::kNumBuckets; ++b) {
      cumulative += histogram.counts[b];
      const std::string bound = b < Counters::kNumBuckets
                                    ? absl::StrCat(Counters::kBuckets[b])
                                    : std::string("+Inf");
      absl::StrAppendFormat(&out,
                            "chaintag_http_request_duration_seconds_bucket{"
                            "path=\"%s\",le=\"%s\"} %d\n",
                            path, bound, cumulative);
    }
    absl::StrAppendFormat(
        &out,
        "chaintag_http_request_duration_seconds_sum{path=\"%s\"} %.6f\n"
        "chaintag_http_request_duration_seconds_count{path=\"%s\"} %d\n",
        path, histogram.sum, path, histogram.count);
  }
  absl::StrAppendFormat(
      &out,
      "# HELP chaintag_tokens_tagged_total Tokens tagged.\n"
      "# TYPE chaintag_tokens_tagged_total counter\n"
      "chaintag_tokens_tagged_total %d\n"
      "# HELP chaintag_sentences_tagged_total Sentences tagged.\n"
      "# TYPE chaintag_sentences_tagged_total counter\n"
      "chaintag_sentences_tagged_total %d\n"
      "# HELP chaintag_requests_in_flight Tag requests queued or running.\n"
      "# TYPE chaintag_requests_in_flight gauge\n"
      "chaintag_requests_in_flight %d\n"
      "# HELP chaintag_model_generation Loads of the model so far (1 = the "
      "first).\n"
      "# TYPE chaintag_model_generation gauge\n"
      "chaintag_model_generation %d\n"
      "# HELP chaintag_model_reloads_total Reloads, by result.\n"
      "# TYPE chaintag_model_reloads_total counter\n"
      "chaintag_model_reloads_total{result=\"ok\"} %d\n"
      "chaintag_model_reloads_total{result=\"failed\"} %d\n",
      metrics_->tokens.load(), metrics_->sentences.load(), in_flight_.load(),
      generation(), metrics_->reloads_ok.load(),
      metrics_->reloads_failed.load());
  return out;
}

}  // namespace chaintag
