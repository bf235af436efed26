// serve: tags text over HTTP with a bundle or a model (tagging/service.h,
// tagging/http_server.h), and shows the tags on a page at `/`.
//
//   bazel run //tools:serve -- --bundle=english_bundle --port=8080
//   body='{"text": "Rockwell International Corp. said it signed."}'
//   curl -s -H content-type:application/json -d "$body" localhost:8080/v1/tag
//
// SIGTERM or SIGINT: stop accepting, finish the requests in progress, exit
// 0. SIGHUP (or POST /v1/reload): load the files again beside the loaded
// ones and switch over if they load; if not, the old model keeps serving.

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/paths.h"
#include "tagging/http_server.h"
#include "tagging/service.h"
#include "tagging/service.pb.h"

ABSL_FLAG(std::string, bundle, "",
          "Bundle directory (or its bundle.textproto) to serve.");
ABSL_FLAG(std::string, model, "", "Model file to serve (instead of a bundle).");
ABSL_FLAG(std::string, host, "127.0.0.1",
          "Address to listen on (0.0.0.0: every interface).");
ABSL_FLAG(int, port, 8080, "Port to listen on; 0 picks a free one.");
ABSL_FLAG(std::string, port_file, "",
          "Write the port listened on to this file once listening.");
ABSL_FLAG(int, threads, 2, "Tagging threads.");
ABSL_FLAG(int, connection_threads, 256,
          "Connections served at once (one thread each).");
ABSL_FLAG(int64_t, max_body_bytes, 8 << 20,
          "Larger request bodies are refused (413).");
ABSL_FLAG(int64_t, max_tokens, 200000,
          "Requests with more tokens are refused (413).");
ABSL_FLAG(int, max_in_flight, 256,
          "Tag requests queued or running; beyond, 503 with Retry-After.");
ABSL_FLAG(double, request_timeout_seconds, 10,
          "A request must arrive whole within this; slower clients are cut.");
ABSL_FLAG(int, keep_alive_seconds, 5,
          "Idle keep-alive connections are closed after this.");

namespace chaintag {
namespace {

ServiceConfig ConfigFromFlags() {
  ServiceConfig config;
  config.set_bundle(absl::GetFlag(FLAGS_bundle));
  config.set_model(absl::GetFlag(FLAGS_model));
  config.set_host(absl::GetFlag(FLAGS_host));
  config.set_port(absl::GetFlag(FLAGS_port));
  config.set_threads(absl::GetFlag(FLAGS_threads));
  config.set_connection_threads(absl::GetFlag(FLAGS_connection_threads));
  config.set_max_body_bytes(absl::GetFlag(FLAGS_max_body_bytes));
  config.set_max_tokens(absl::GetFlag(FLAGS_max_tokens));
  config.set_max_in_flight(absl::GetFlag(FLAGS_max_in_flight));
  config.set_request_timeout_seconds(
      absl::GetFlag(FLAGS_request_timeout_seconds));
  config.set_keep_alive_seconds(absl::GetFlag(FLAGS_keep_alive_seconds));
  return config;
}

// Many clients at once need many descriptors: up to the hard limit.
void RaiseDescriptorLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// Handles SIGHUP (reload) until SIGTERM or SIGINT (stop), which every
// thread blocks, so they arrive here and not in a handler.
void HandleSignals(const sigset_t& signals, TaggingService* service,
                   HttpServer* server) {
  for (;;) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal == SIGHUP) {
      const ServiceResponse reloaded = service->Reload();
      std::fprintf(stderr, "serve: SIGHUP: %s\n", reloaded.body.c_str());
      continue;
    }
    std::fprintf(stderr, "serve: %s: finishing the requests in progress\n",
                 strsignal(signal));
    service->StartDraining();
    server->Stop();
    return;
  }
}

int Serve() {
  const ServiceConfig config = ConfigFromFlags();
  if (config.bundle().empty() == config.model().empty()) {
    std::fprintf(stderr, "serve: give --bundle=<dir> or --model=<file>\n");
    return 2;
  }
  // Before any thread starts, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  RaiseDescriptorLimit();

  absl::StatusOr<std::unique_ptr<TaggingService>> service =
      TaggingService::Create(config);
  if (!service.ok()) {
    std::fprintf(stderr, "serve: %s\n",
                 std::string(service.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Create(service->get());
  if (!server.ok()) {
    std::fprintf(stderr, "serve: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  const std::string port_file = absl::GetFlag(FLAGS_port_file);
  if (!port_file.empty()) {
    const absl::Status written = WriteFileAtomically(
        ResolveUserPath(port_file), absl::StrCat((*server)->port(), "\n"),
        "the port file");
    if (!written.ok()) {
      std::fprintf(stderr, "serve: %s\n",
                   std::string(written.message()).c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "serve: listening on http://%s:%d\n",
               config.host().c_str(), (*server)->port());
  std::thread signal_thread(HandleSignals, signals, service->get(),
                            server->get());
  const absl::Status served = (*server)->Run();
  if (!served.ok()) {
    // The signal thread is still waiting: wake it as a stop would.
    kill(getpid(), SIGTERM);
  }
  signal_thread.join();
  if (!served.ok()) {
    std::fprintf(stderr, "serve: %s\n", std::string(served.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "serve: stopped\n");
  return 0;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Tags text over HTTP: serve --bundle=<dir> | --model=<file> "
      "[--port=8080] [--threads=2]; POST /v1/tag, GET /, /healthz, "
      "/v1/models, /metrics; POST /v1/reload or SIGHUP reloads.");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Serve();
}
