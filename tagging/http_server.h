// HTTP/1.1 front of the tagging service (tagging/service.h), on cpp-httplib:
// the routes of service.h, the page at `/` (tagging/serve_page.html,
// compiled in), JSON errors for what the library answers itself (404, 413,
// bad requests), and the limits on connections:
//
//  * each connection is served on one of config.connection_threads threads,
//    for up to 1000 keep-alive requests, idle at most keep_alive_seconds;
//  * a whole request (head and body) must arrive within
//    request_timeout_seconds of its first byte, else the connection is cut
//    (cpp-httplib's own timeout is per read, which a client sending a byte
//    a second never trips);
//  * a body over max_body_bytes is refused (413) without being stored; the
//    connection is cut once the client has sent that much more.
//
// Stop() closes the listening socket; requests already arriving are
// answered (with Connection: close), idle connections are closed, and Run()
// returns when every connection is done.
//
// Thread-safety: Run() from one thread; Stop() from any thread, any time.

#ifndef CHAINTAG_TAGGING_HTTP_SERVER_H_
#define CHAINTAG_TAGGING_HTTP_SERVER_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tagging/service.h"

namespace chaintag {

class HttpServer {
 public:
  // Binds config.host():config.port() of the service's config (port 0: any
  // free port). The service must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(
      TaggingService* service);
  ~HttpServer();

  // The port bound.
  int port() const { return port_; }

  // Serves until Stop(), then waits for the connections in progress.
  absl::Status Run();
  void Stop();

 private:
  class Server;
  HttpServer(std::unique_ptr<Server> server, int port);

  std::unique_ptr<Server> server_;
  int port_;
};

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_HTTP_SERVER_H_
