// The tagging service behind `serve` (tools/serve_main.cc), apart from HTTP
// (tagging/http_server.h): JSON requests in, the JSON `tag` prints out.
//
//   POST /v1/tag      Tag(): a TagRequest (tagging/service.proto) as JSON;
//                     the answer {"model":{"name","generation"},"tokens":N,
//                     "sentences":[...]} holds, per sentence, exactly the
//                     object `tag --pipeline --format=json` prints for it;
//                     CoNLL columns get {"model":...,"conll":"..."}, what
//                     `tag --model` prints.
//   GET  /healthz     Health()
//   GET  /v1/models   Models(): what is loaded (stages, labels, order,
//                     schemes, training summaries)
//   GET  /metrics     Metrics(): Prometheus text format
//   POST /v1/reload   Reload(): loads the configured files again beside the
//                     loaded ones and switches over only if they load
//
// Errors are {"error":{"code":C,"message":"..."}} with an HTTP status: 400
// (not JSON, not UTF-8, bad fields), 413 (too many tokens), 415 (not
// application/json), 422 (a reload that failed), 503 (too many requests in
// flight, or draining; with Retry-After).
//
// Requests are tagged on `threads` workers, each with its own buffers; a
// request takes the loaded model once, so each answer comes wholly from one
// generation of the model, and a reload never waits for requests.
//
// Example: answer one request, as `serve` does for POST /v1/tag:
//
//   ServiceConfig config;
//   config.set_bundle("english_bundle");  // made by //pipeline:english_bundle
//   absl::StatusOr<std::unique_ptr<TaggingService>> service =
//       TaggingService::Create(config);
//   if (!service.ok()) return service.status();
//   ServiceResponse response = (*service)->Tag(
//       R"({"text": "Rockwell International Corp. said it signed."})",
//       "application/json");
//   // response.status: 200, or the error's HTTP status; response.body:
//   // the JSON answer, or {"error":{...}}.
//
// Thread-safety: every method is safe from any thread.

#ifndef CHAINTAG_TAGGING_SERVICE_H_
#define CHAINTAG_TAGGING_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/worker_pool.h"
#include "corpora/tokenizer.h"
#include "tagging/service.pb.h"

namespace chaintag {

struct ServiceResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Seconds for a Retry-After header (0 = none).
  int retry_after_seconds = 0;
};

// {"error":{"code":status,"message":...}} with that status.
ServiceResponse ErrorResponse(int status, absl::string_view message);

// Appends `text` as a JSON string literal (quotes included); `text` must be
// valid UTF-8.
void AppendJsonString(absl::string_view text, std::string* out);

// The offset of the first byte of `text` that is not part of valid UTF-8
// (no overlong forms, surrogates or code points past U+10FFFF), or -1.
int64_t FirstInvalidUtf8(absl::string_view text);

class TaggingService {
 public:
  // Loads the bundle or model the config names; errors name the file.
  static absl::StatusOr<std::unique_ptr<TaggingService>> Create(
      const ServiceConfig& config);
  // Finishes the requests being tagged.
  ~TaggingService();

  ServiceResponse Tag(absl::string_view body, absl::string_view content_type);
  ServiceResponse Health() const;
  ServiceResponse Models() const;
  ServiceResponse Reload();
  std::string Metrics() const;

  // From now on, Tag and Health answer 503 (for a server that is shutting
  // down); requests already admitted finish.
  void StartDraining() { draining_.store(true); }
  // Counts an HTTP request for Metrics(): its path ("other" for unknown
  // ones), status and seconds from the request read to the answer written.
  void RecordRequest(absl::string_view path, int status, double seconds);

  const ServiceConfig& config() const { return config_; }
  int64_t generation() const;

 private:
  struct Loaded;
  struct Worker;
  struct Counters;

  TaggingService(ServiceConfig config, std::unique_ptr<Tokenizer> tokenizer,
                 std::shared_ptr<const Loaded> loaded);

  static absl::StatusOr<std::shared_ptr<const Loaded>> Load(
      const ServiceConfig& config, int64_t generation);
  std::shared_ptr<const Loaded> Current() const;
  // Runs on a worker: tags the parsed request with `loaded`.
  ServiceResponse TagOnWorker(const TagRequest& request,
                              const std::shared_ptr<const Loaded>& loaded,
                              Worker* worker);
  // CoNLL columns, with the single model loaded.
  ServiceResponse TagConll(const TagRequest& request, const Loaded& loaded,
                           std::string* out);

  const ServiceConfig config_;
  const std::unique_ptr<Tokenizer> tokenizer_;
  mutable absl::Mutex loaded_mutex_;
  std::shared_ptr<const Loaded> loaded_ ABSL_GUARDED_BY(loaded_mutex_);
  absl::Mutex reload_mutex_;  // one reload at a time
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  std::unique_ptr<Counters> metrics_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Last: destroyed first, so that its threads finish before the rest goes.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_SERVICE_H_
